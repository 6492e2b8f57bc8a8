//! A small contract API: items created and listed with validation,
//! answered as JSON, CBOR or (with `COSE_KEYS`) COSE, documented at
//! `/openapi.json` and `/docs`.

use std::sync::{Arc, Mutex, PoisonError};

use tern::{extract::Path, extract::State, Problem, StatusCode};
use tern_contract::{contract, Valid, ValidQuery};

/// What a client sends to create an item.
#[contract]
pub(crate) struct NewItem {
    #[contract(length(min = 1, max = 80))]
    name: String,
    #[contract(range(min = 1, max = 1000))]
    qty: u32,
    #[contract(email)]
    owner: String,
    #[serde(default)]
    #[contract(length(max = 8), each(length(min = 1, max = 20)))]
    tags: Vec<String>,
}

/// An item, as the API answers it.
#[contract]
#[derive(Clone)]
pub(crate) struct Item {
    #[contract(range(min = 1))]
    id: u64,
    #[contract(length(min = 1, max = 80))]
    name: String,
    #[contract(range(min = 1, max = 1000))]
    qty: u32,
    #[contract(email)]
    owner: String,
    #[contract(length(max = 8))]
    tags: Vec<String>,
}

/// A page of items.
#[contract]
pub(crate) struct Items {
    items: Vec<Item>,
    total: u64,
}

/// What `GET /items` reads from its query string.
#[contract]
pub(crate) struct ListQuery {
    /// How many items, newest first (20 when absent).
    #[contract(range(min = 1, max = 100))]
    limit: Option<u32>,
    /// Only items whose name contains this.
    #[contract(length(max = 40))]
    q: Option<String>,
}

/// The items, in memory (the data layer comes with its own issue).
#[derive(Clone, Default)]
pub(crate) struct Store(Arc<Mutex<Vec<Item>>>);

/// The most items kept: the oldest go first.
const KEEP: usize = 1000;

pub(crate) async fn create(State(store): State<Store>, Valid(new): Valid<NewItem>) -> Valid<Item> {
    let mut items = store.0.lock().unwrap_or_else(PoisonError::into_inner);
    let id = items.last().map_or(1, |i| i.id + 1);
    let item = Item {
        id,
        name: new.name,
        qty: new.qty,
        owner: new.owner,
        tags: new.tags,
    };
    items.push(item.clone());
    if items.len() > KEEP {
        items.remove(0);
    }
    Valid(item)
}

pub(crate) async fn list(
    State(store): State<Store>,
    ValidQuery(query): ValidQuery<ListQuery>,
) -> Valid<Items> {
    let items = store.0.lock().unwrap_or_else(PoisonError::into_inner);
    let matching = |item: &&Item| query.q.as_deref().is_none_or(|q| item.name.contains(q));
    let page: Vec<Item> = items
        .iter()
        .rev()
        .filter(matching)
        .take(query.limit.unwrap_or(20) as usize)
        .cloned()
        .collect();
    Valid(Items {
        total: items.iter().filter(matching).count() as u64,
        items: page,
    })
}

pub(crate) async fn show(
    State(store): State<Store>,
    Path(id): Path<u64>,
) -> Result<Valid<Item>, Problem> {
    let items = store.0.lock().unwrap_or_else(PoisonError::into_inner);
    items
        .iter()
        .find(|i| i.id == id)
        .cloned()
        .map(Valid)
        .ok_or_else(|| {
            Problem::new(StatusCode::NOT_FOUND).with_detail(format!("there is no item {id}"))
        })
}
