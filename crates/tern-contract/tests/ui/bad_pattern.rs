use tern_contract::contract;

#[contract]
struct Item {
    #[contract(pattern = "[a-z")]
    slug: String,
}

fn main() {}
