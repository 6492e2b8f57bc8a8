// A value that is not `Send` held across an `.await`: the error names the
// handler, the value and the `.await`.

use std::{rc::Rc, sync::Mutex};

use tern::extract::State;

#[tern::handler]
async fn visits() -> String {
    let count = Rc::new(1);
    tokio::task::yield_now().await;
    count.to_string()
}

#[derive(Clone)]
struct Counter(&'static Mutex<u64>);

#[tern::handler]
async fn hit(State(counter): State<Counter>) -> String {
    let mut n = counter.0.lock().unwrap();
    *n += 1;
    tokio::task::yield_now().await;
    n.to_string()
}

fn main() {}
