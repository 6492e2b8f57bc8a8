// A method taking `self` cannot be a handler: the error is at `self`.

struct Users;

impl Users {
    #[tern::handler]
    async fn list(self) -> &'static str {
        "[]"
    }
}

fn main() {}
