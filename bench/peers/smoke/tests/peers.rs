//! Every peer serves the whole workload exactly: each test starts one
//! peer binary, checks it, stops it.

fn run(name: &str, expect: smoke::Expect) {
    let binary = smoke::peer_binary(name).unwrap_or_else(|e| panic!("{e}"));
    match smoke::check(&binary, expect) {
        Ok(report) => println!("{report}"),
        Err(e) => panic!("{name}: {e}"),
    }
}

#[test]
fn hyper() {
    run("peer-hyper", smoke::Expect { h2c: true });
}

#[test]
fn axum() {
    run("peer-axum", smoke::Expect { h2c: true });
}

/// actix-web has no cleartext HTTP/2: the `h2` workload skips it.
#[test]
fn actix() {
    run("peer-actix", smoke::Expect { h2c: false });
}

#[test]
fn tern() {
    run("peer-tern", smoke::Expect { h2c: true });
}
