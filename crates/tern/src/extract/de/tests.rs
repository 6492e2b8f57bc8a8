//! Unit tests of the whole path: text, tree, type.

use super::*;
use serde::Deserialize;

fn query<T: serde::de::DeserializeOwned>(q: &str) -> Result<T, DeError> {
    from_urlencoded(q, LIMITS)
}

const LIMITS: UrlencodedLimits = UrlencodedLimits {
    fields: 1000,
    depth: 32,
};

#[derive(Debug, Deserialize, PartialEq)]
struct User {
    name: String,
    age: Option<u8>,
}

#[derive(Debug, Deserialize, PartialEq)]
struct Search {
    q: String,
    #[serde(default)]
    tag: Vec<String>,
    page: Option<u32>,
    user: Option<User>,
    #[serde(default)]
    exact: bool,
}

#[test]
fn arrays_both_ways() {
    let a: Search = query("q=rust&tag=a&tag=b").expect("repeated");
    let b: Search = query("q=rust&tag[]=a&tag[]=b").expect("brackets");
    let c: Search = query("q=rust&tag[1]=b&tag[0]=a").expect("indexed");
    assert_eq!(a.tag, ["a", "b"]);
    assert_eq!(a, b);
    assert_eq!(a, c);
    let one: Search = query("q=x&tag=only").expect("one");
    assert_eq!(one.tag, ["only"]);
}

#[test]
fn nested_and_decoded() {
    let s: Search = query("q=caf%C3%A9+au+lait&user[name]=Ada%20L&user[age]=36&exact=on&page=")
        .expect("nested");
    assert_eq!(s.q, "café au lait");
    assert_eq!(
        s.user,
        Some(User {
            name: "Ada L".into(),
            age: Some(36)
        })
    );
    assert!(s.exact);
    assert_eq!(s.page, None);
}

#[test]
fn errors_name_the_field() {
    let e = query::<Search>("q=x&page=two").expect_err("page");
    assert_eq!(e.path, "page");
    assert!(e.message.contains("`two`"), "{e}");
    let e = query::<Search>("q=x&user[name]=a&user[age]=300").expect_err("age");
    assert_eq!(e.path, "user[age]");
    let e = query::<Search>("tag=a").expect_err("missing");
    assert!(e.to_string().contains("missing field `q`"), "{e}");
    let e = query::<Search>("q=a&q=b").expect_err("twice");
    assert_eq!(e.path, "q");
    assert!(query::<Search>("q=%zz").is_err());
    assert!(query::<Search>("q=a&tag[=x").is_err());
    assert!(query::<Search>("q=a&tag=x&tag[k]=y").is_err());
}

#[test]
fn limits_name_the_setting() {
    let deep = format!("a{}=1", "[]".repeat(33));
    let e =
        query::<std::collections::HashMap<String, serde_json::Value>>(&deep).expect_err("too deep");
    assert!(e.limit && e.message.contains("TERN_MAX_FORM_DEPTH"), "{e}");
    let ok = format!("a{}=1", "[]".repeat(32));
    query::<std::collections::HashMap<String, serde_json::Value>>(&ok).expect("at the limit");
    let many: String = (0..1001).map(|i| format!("k{i}=1&")).collect();
    let e = query::<std::collections::HashMap<String, String>>(&many).expect_err("too many");
    assert!(e.limit && e.message.contains("TERN_MAX_FORM_FIELDS"), "{e}");
    let most: String = (0..1000).map(|i| format!("k{i}=1&")).collect();
    let map = query::<std::collections::HashMap<String, String>>(&most).expect("at the limit");
    assert_eq!(map.len(), 1000);
}

#[test]
fn nested_lists_of_maps() {
    #[derive(Debug, Deserialize, PartialEq)]
    struct Item {
        name: String,
    }
    #[derive(Debug, Deserialize, PartialEq)]
    struct Order {
        item: Vec<Item>,
    }
    let o: Order = query("item[][name]=a&item[][name]=b").expect("list of maps");
    assert_eq!(
        o.item,
        [Item { name: "a".into() }, Item { name: "b".into() }]
    );
    let e = query::<Search>("q=x&tag=a&tag[][k]=b").expect_err("mixed");
    assert_eq!(e.path, "tag[][k]");
}

#[test]
fn long_client_text_is_not_echoed_whole() {
    let long = "x".repeat(100_000);
    let e = query::<Search>(&format!("q=a&page={long}")).expect_err("not a number");
    assert!(e.message.len() < 200, "{}", e.message.len());
    let e = query::<Search>(&format!("q=a&{long}[=1")).expect_err("unbalanced");
    assert!(e.message.len() < 200, "{}", e.message.len());
}

#[test]
fn path_mode() {
    let node = Node::Map(
        [(Cow::Borrowed("id"), Node::Value(Cow::Borrowed("42")))]
            .into_iter()
            .collect(),
    );
    let id: u64 = u64::deserialize(NodeDe {
        node: &node,
        path_mode: true,
    })
    .expect("one");
    assert_eq!(id, 42);
    let node = Node::Map(
        [
            (Cow::Borrowed("org"), Node::Value(Cow::Borrowed("tern"))),
            (Cow::Borrowed("id"), Node::Value(Cow::Borrowed("x"))),
        ]
        .into_iter()
        .collect(),
    );
    let e = <(String, u64)>::deserialize(NodeDe {
        node: &node,
        path_mode: true,
    })
    .expect_err("bad id");
    assert_eq!(e.path, "id");
}
