//! Nodes with many static siblings, where static children are hashed
//! rather than scanned, checked lookup by lookup against the reference.
#![allow(clippy::unwrap_used)]

use tern_router::reference::{self, render, Reference, Seg};
use tern_router::Router;

fn stat(text: &str) -> Seg {
    Seg::Static(text.to_owned())
}

/// Hundreds of siblings of every length from 0 to 74 bytes (the hash reads
/// words, so every tail length matters), beside parameter, constrained and
/// glob siblings that catch the near misses.
fn table() -> Vec<Vec<Seg>> {
    let mut routes = Vec::new();
    for i in 0..300 {
        let text = match i % 4 {
            0 => format!("g{i}"),
            1 => "x".repeat(i / 4),
            2 => format!("a-longer-static-segment-{i}"),
            _ => format!("caf\u{e9}{i}"),
        };
        routes.push(vec![stat(&text)]);
        routes.push(vec![stat(&text), stat("edit")]);
        if i % 7 == 0 {
            routes.push(vec![stat(&text), Seg::Param, stat("b")]);
        }
    }
    for i in 0..50 {
        routes.push(vec![stat("wide"), stat(&format!("s{i}"))]);
    }
    routes.push(vec![stat("wide"), Seg::Con("u64".to_owned())]);
    routes.push(vec![Seg::Param, stat("edit")]);
    routes.push(vec![Seg::Glob, stat("tail")]);
    routes.push(vec![Seg::Glob]);
    routes
}

#[test]
fn wide_nodes_agree_with_reference() {
    let mut router = Router::new();
    let mut reference = Reference::default();
    for segs in table() {
        let (pattern, names) = render(&segs, "p");
        assert!(reference.insert(segs.clone(), names, pattern.clone()));
        router.insert(&pattern, ()).unwrap();
    }
    let mut paths = Vec::new();
    for i in 0..300 {
        for text in [
            format!("g{i}"),
            "x".repeat(i / 4),
            "x".repeat(i % 45),
            format!("a-longer-static-segment-{i}"),
            format!("a-longer-static-segment-{i}x"),
            format!("caf\u{e9}{i}"),
            format!("caf%C3%A9{i}"),
            format!("G{i}"),
        ] {
            for suffix in ["", "/", "/edit", "/edit/x", "/7/b", "/7/c", "/tail"] {
                paths.push(format!("/{text}{suffix}"));
            }
        }
    }
    for i in 0..60 {
        paths.push(format!("/wide/s{i}"));
        paths.push(format!("/wide/{i}"));
        paths.push(format!("/wide/s{i}/tail"));
    }
    for path in &paths {
        assert_eq!(
            reference::outcome(&router, path),
            reference.at(path),
            "path {path:?}"
        );
    }
}
