// A handler that is not `async`: the error is at `fn`.

#[tern::handler]
fn hello() -> &'static str {
    "Hello, World!"
}

fn main() {}
