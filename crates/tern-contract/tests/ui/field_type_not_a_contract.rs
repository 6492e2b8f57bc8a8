use tern_contract::contract;

struct Money(u64);

#[contract]
struct Item {
    price: Money,
}

fn main() {}
