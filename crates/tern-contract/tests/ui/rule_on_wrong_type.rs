use tern_contract::contract;

#[contract]
struct Item {
    #[contract(range(min = 1, max = 80))]
    name: String,
    #[contract(length(max = 10))]
    qty: u32,
    #[contract(email)]
    tags: Vec<String>,
}

fn main() {}
