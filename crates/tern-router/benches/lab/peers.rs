//! One adapter per router: translate a [`Table`] to the router's syntax,
//! build it, and look a path up.

use super::{Lookup, Seg, Table};

/// A router under test.
pub(crate) trait Peer: Sized {
    /// The name used as the criterion function id and on the command line.
    const NAME: &'static str;

    /// Builds the table, or says why this router cannot hold it.
    fn build(table: &Table) -> Result<Self, String>;

    /// The index of the matched route and how many parameters were captured.
    ///
    /// Returning the count makes every router materialize its captures, so
    /// none is timed doing less work than the others.
    fn find(&self, path: &str) -> Option<(usize, usize)>;

    /// Checks every lookup once, outside any timed loop, so no router is
    /// measured returning a wrong answer.
    fn verify(&self, table: &Table, lookups: &[Lookup]) -> Result<(), String> {
        for lookup in lookups {
            let expected = lookup.route.map(|route| {
                let params = table.routes[route]
                    .iter()
                    .filter(|seg| !matches!(seg, Seg::Static(_)))
                    .count();
                (route, params)
            });
            let got = self.find(&lookup.path);
            if got != expected {
                return Err(format!(
                    "{} on {:?}: expected (route, params) {expected:?}, got {got:?}",
                    Self::NAME,
                    lookup.path
                ));
            }
        }
        Ok(())
    }
}

/// The pattern text for `segs`, with one closure per segment kind.
fn render(segs: &[Seg], write: impl Fn(&Seg, &mut String)) -> String {
    let mut pattern = String::new();
    for seg in segs {
        pattern.push('/');
        match seg {
            Seg::Static(text) => pattern.push_str(text),
            other => write(other, &mut pattern),
        }
    }
    pattern
}

/// `{id}`, `{id:u64}`, `{*path}`.
pub(crate) struct Tern(tern_router::Router<usize>);

impl Peer for Tern {
    const NAME: &'static str = "tern-router";

    fn build(table: &Table) -> Result<Self, String> {
        let mut router = tern_router::Router::new();
        for (i, segs) in table.routes.iter().enumerate() {
            let pattern = render(segs, |seg, out| match seg {
                Seg::Param(name) => out.push_str(&format!("{{{name}}}")),
                Seg::U64(name) => out.push_str(&format!("{{{name}:u64}}")),
                Seg::Glob(name) => out.push_str(&format!("{{*{name}}}")),
                Seg::Static(_) => unreachable!(),
            });
            router.insert(&pattern, i).map_err(|e| e.to_string())?;
        }
        Ok(Tern(router))
    }

    #[inline]
    fn find(&self, path: &str) -> Option<(usize, usize)> {
        self.0.at(path).ok().map(|m| (*m.value, m.params.len()))
    }
}

/// matchit 0.8: `{id}`, `{*path}`; no constraints, so `{id:u64}` becomes
/// `{id}`.
pub(crate) struct Matchit(matchit::Router<usize>);

impl Peer for Matchit {
    const NAME: &'static str = "matchit";

    fn build(table: &Table) -> Result<Self, String> {
        let mut router = matchit::Router::new();
        for (i, segs) in table.routes.iter().enumerate() {
            let pattern = render(segs, |seg, out| match seg {
                Seg::Param(name) | Seg::U64(name) => out.push_str(&format!("{{{name}}}")),
                Seg::Glob(name) => out.push_str(&format!("{{*{name}}}")),
                Seg::Static(_) => unreachable!(),
            });
            router
                .insert(pattern.clone(), i)
                .map_err(|e| format!("refuses {pattern}: {e}"))?;
        }
        Ok(Matchit(router))
    }

    #[inline]
    fn find(&self, path: &str) -> Option<(usize, usize)> {
        self.0.at(path).ok().map(|m| (*m.value, m.params.len()))
    }
}

/// path-tree 0.8: `:id`, and `:path+` for a glob of one or more segments
/// (the closest to `{*path}`); no constraints, so `{id:u64}` becomes `:id`.
pub(crate) struct PathTree(path_tree::PathTree<usize>);

impl Peer for PathTree {
    const NAME: &'static str = "path-tree";

    fn build(table: &Table) -> Result<Self, String> {
        let mut tree = path_tree::PathTree::new();
        for (i, segs) in table.routes.iter().enumerate() {
            let pattern = render(segs, |seg, out| match seg {
                Seg::Param(name) | Seg::U64(name) => out.push_str(&format!(":{name}")),
                Seg::Glob(name) => out.push_str(&format!(":{name}+")),
                Seg::Static(_) => unreachable!(),
            });
            // path-tree never refuses a route: a pattern that lands on an
            // occupied node silently replaces the earlier route's value.
            let id = tree.insert(&pattern, i);
            if id != i {
                return Err(format!(
                    "silently replaces route {id} with {pattern} (route {i})"
                ));
            }
        }
        Ok(PathTree(tree))
    }

    #[inline]
    fn find(&self, path: &str) -> Option<(usize, usize)> {
        self.0.find(path).map(|(value, p)| (*value, p.raws.len()))
    }
}

/// actix-router 0.5: `{id}`, `{id:\d+}` (its constraints are regexes) and
/// `{path}*` for the tail. Routes are tried in insertion order, first match
/// wins; the lab's tables insert the more specific route first wherever two
/// overlap, as an actix application must.
pub(crate) struct Actix(actix_router::Router<usize>);

impl Peer for Actix {
    const NAME: &'static str = "actix-router";

    fn build(table: &Table) -> Result<Self, String> {
        let mut builder = actix_router::Router::<usize>::build();
        for (i, segs) in table.routes.iter().enumerate() {
            let pattern = render(segs, |seg, out| match seg {
                Seg::Param(name) => out.push_str(&format!("{{{name}}}")),
                Seg::U64(name) => out.push_str(&format!("{{{name}:\\d+}}")),
                Seg::Glob(name) => out.push_str(&format!("{{{name}}}*")),
                Seg::Static(_) => unreachable!(),
            });
            builder.path(pattern.as_str(), i);
        }
        Ok(Actix(builder.finish()))
    }

    #[inline]
    fn find(&self, path: &str) -> Option<(usize, usize)> {
        let mut resource = actix_router::Path::new(path);
        let value = *self.0.recognize(&mut resource)?.0;
        Some((value, resource.segment_count()))
    }
}
