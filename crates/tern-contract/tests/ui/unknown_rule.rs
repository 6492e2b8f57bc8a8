use tern_contract::contract;

#[contract]
struct Item {
    #[contract(lenght(max = 80))]
    name: String,
    #[contract(between(1, 2))]
    qty: u32,
}

fn main() {}
