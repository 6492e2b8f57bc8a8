//! The benchmark lab: route tables, lookup paths with their expected answers,
//! and one adapter per router.
//!
//! Shared by `benches/router.rs` (criterion) and `examples/mixed_cycle.rs`
//! (instruction counts under callgrind), so both measure the same tables.
//! Tables are described once in a syntax-neutral form ([`Seg`]) and each
//! adapter translates them to its router's syntax.

// The example uses only the mixed table; the bench uses everything.
#![allow(dead_code)]

pub(crate) mod peers;

/// One pattern segment, before translation to a router's syntax.
#[derive(Debug, Clone)]
pub(crate) enum Seg {
    /// Literal text (ASCII letters and digits only, so no router needs escapes).
    Static(String),
    /// A named parameter matching any one segment.
    Param(&'static str),
    /// A parameter that must be a `u64`; routers without constraints get a
    /// plain parameter.
    U64(&'static str),
    /// A catch-all glob at the end of the pattern.
    Glob(&'static str),
}

fn stat(text: impl Into<String>) -> Seg {
    Seg::Static(text.into())
}

/// A route table: patterns in insertion order; a route's value is its index.
#[derive(Debug, Clone)]
pub(crate) struct Table {
    pub(crate) name: String,
    pub(crate) routes: Vec<Vec<Seg>>,
}

/// A path to look up and the answer every router must give.
#[derive(Debug, Clone)]
pub(crate) struct Lookup {
    pub(crate) path: String,
    /// Index of the route that must match, or `None` for a 404.
    pub(crate) route: Option<usize>,
}

impl Lookup {
    fn hit(path: impl Into<String>, route: usize) -> Self {
        Lookup {
            path: path.into(),
            route: Some(route),
        }
    }

    fn miss(path: impl Into<String>) -> Self {
        Lookup {
            path: path.into(),
            route: None,
        }
    }
}

/// A table and the named lookup sets measured against it; each set is one
/// criterion group, timed as a whole and reported per lookup.
#[derive(Debug, Clone)]
pub(crate) struct Scenario {
    pub(crate) table: Table,
    pub(crate) lookups: Vec<(&'static str, Vec<Lookup>)>,
}

/// Marsaglia's xorshift64: deterministic, dependency-free, good enough to
/// spread lookups over a table.
#[derive(Debug, Clone)]
pub(crate) struct XorShift(u64);

impl XorShift {
    pub(crate) fn new(seed: u64) -> Self {
        // Zero is the generator's one fixed point.
        XorShift(seed.max(1))
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A value in `0..n`; the modulo bias is irrelevant here.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }

    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

/// Amber's router scenarios: `n` routes (`n / 4` resources with a list, a
/// show, an edit and a files route each), looked up on the last resource, so
/// a router that scans routes in order does its worst case.
pub(crate) fn amber(n: usize) -> Scenario {
    let resources = n / 4;
    let mut routes = Vec::with_capacity(n);
    for k in 0..resources {
        let r = format!("r{k}");
        routes.push(vec![stat("api"), stat(&r)]);
        routes.push(vec![stat("api"), stat(&r), Seg::Param("id")]);
        routes.push(vec![stat("api"), stat(&r), Seg::Param("id"), stat("edit")]);
        routes.push(vec![
            stat("api"),
            stat(&r),
            stat("files"),
            Seg::Glob("path"),
        ]);
    }
    let k = resources - 1;
    let lookups = vec![
        ("static", vec![Lookup::hit(format!("/api/r{k}"), 4 * k)]),
        (
            "param",
            vec![Lookup::hit(format!("/api/r{k}/42"), 4 * k + 1)],
        ),
        (
            "glob",
            vec![Lookup::hit(
                format!("/api/r{k}/files/css/site/main.css"),
                4 * k + 3,
            )],
        ),
        (
            "not_found",
            vec![Lookup::miss(format!("/api/r{k}/42/comments"))],
        ),
    ];
    Scenario {
        table: Table {
            name: format!("amber_{n}"),
            routes,
        },
        lookups,
    }
}

/// AdonisJS's scenarios: 1,000 static and 100 dynamic routes.
///
/// `uniform` inserts all static routes first. The `app` shape is what a
/// real application registers: `/users/{id}` early, then the static and
/// dynamic routes, then a top-level `/{slug}` and a catch-all `/{*rest}`
/// (replacing the last two dynamic routes, so both tables hold 1,100).
pub(crate) fn adonis(app: bool) -> Scenario {
    let mut statics = Vec::new();
    for a in 0..50 {
        for b in 0..20 {
            statics.push((
                vec![stat(format!("docs{a}")), stat(format!("page{b}"))],
                format!("/docs{a}/page{b}"),
            ));
        }
    }
    let mut dynamics = Vec::new();
    for k in 0..50 {
        dynamics.push((
            vec![stat(format!("res{k}")), Seg::Param("id")],
            format!("/res{k}/{}", 100 + k),
        ));
    }
    for k in 0..50 {
        dynamics.push((
            vec![
                stat(format!("res{k}")),
                Seg::Param("id"),
                stat("comments"),
                Seg::Param("cid"),
            ],
            format!("/res{k}/{}/comments/{}", 100 + k, 7 * k),
        ));
    }
    let entries: Vec<(Vec<Seg>, String)> = if app {
        let mut entries = vec![(
            vec![stat("users"), Seg::Param("id")],
            "/users/42".to_owned(),
        )];
        entries.extend(statics);
        entries.extend(dynamics.into_iter().take(97));
        entries.push((vec![Seg::Param("slug")], "/about-us".to_owned()));
        entries.push((vec![Seg::Glob("rest")], "/no/such/page".to_owned()));
        entries
    } else {
        statics.into_iter().chain(dynamics).collect()
    };
    let last = entries.len() - 1;
    let first = Lookup::hit(entries[0].1.clone(), 0);
    let last_lookup = Lookup::hit(entries[last].1.clone(), last);
    let mut varied: Vec<Lookup> = entries
        .iter()
        .enumerate()
        .map(|(i, (_, path))| Lookup::hit(path.clone(), i))
        .collect();
    XorShift::new(0x0ad0_0015).shuffle(&mut varied);
    let routes = entries.into_iter().map(|(segs, _)| segs).collect();
    Scenario {
        table: Table {
            name: format!("adonis_{}", if app { "app" } else { "uniform" }),
            routes,
        },
        lookups: vec![
            ("first", vec![first.clone()]),
            ("last", vec![last_lookup.clone()]),
            ("alternating", vec![first, last_lookup]),
            ("varied", varied),
        ],
    }
}

/// How many lookups one pass of the mixed cycle makes.
pub(crate) const CYCLE: usize = 4096;

/// The bench lab's 1,000-route mixed table and a 4,096-path cycle over it.
///
/// Shapes: 45% static (`/g{n}/page{i}`), 25% `/r{i}/{id}`, 15%
/// `/r{i}/{id}/{action}`, 5% `/n{i}/{x}/b/{y}`, 5% `/c{i}/{id:u64}`, 5%
/// `/f{i}/{*path}`, inserted in a shuffled order. Every path hits; routes
/// are picked uniformly from a fixed seed.
pub(crate) fn mixed() -> Scenario {
    let mut routes: Vec<Vec<Seg>> = Vec::with_capacity(1000);
    for i in 0..450 {
        routes.push(vec![stat(format!("g{}", i % 30)), stat(format!("page{i}"))]);
    }
    for i in 0..250 {
        routes.push(vec![stat(format!("r{i}")), Seg::Param("id")]);
    }
    for i in 0..150 {
        let action = ["edit", "publish", "archive"][i % 3];
        routes.push(vec![stat(format!("r{i}")), Seg::Param("id"), stat(action)]);
    }
    for i in 0..50 {
        routes.push(vec![
            stat(format!("n{i}")),
            Seg::Param("x"),
            stat("b"),
            Seg::Param("y"),
        ]);
    }
    for i in 0..50 {
        routes.push(vec![stat(format!("c{i}")), Seg::U64("id")]);
    }
    for i in 0..50 {
        routes.push(vec![stat(format!("f{i}")), Seg::Glob("path")]);
    }
    let mut rng = XorShift::new(0x7e12_2026);
    rng.shuffle(&mut routes);

    let mut cycle = Vec::with_capacity(CYCLE);
    for _ in 0..CYCLE {
        let route = rng.below(routes.len());
        let mut path = String::new();
        for seg in &routes[route] {
            path.push('/');
            match seg {
                Seg::Static(text) => path.push_str(text),
                Seg::Param(_) => path.push_str(&format!("u{}", rng.below(100_000))),
                Seg::U64(_) => path.push_str(&rng.below(1_000_000).to_string()),
                Seg::Glob(_) => {
                    for d in 0..rng.below(3) {
                        path.push_str(&format!("d{d}/"));
                    }
                    path.push_str(&format!("file{}.txt", rng.below(100)));
                }
            }
        }
        cycle.push(Lookup::hit(path, route));
    }
    Scenario {
        table: Table {
            name: "mixed_1000".to_owned(),
            routes,
        },
        lookups: vec![("cycle", cycle)],
    }
}
