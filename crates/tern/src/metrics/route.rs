//! Which route answered: the route table writes the matched route's id
//! where the request's future, on the same thread, reads it.
//!
//! Routing runs inside the request's first call into the app (or, behind
//! a layer that waits before calling on, inside a later poll of the
//! request's future), always on the thread that polls the request. The
//! table writes `(table, id)` into a thread-local slot after it has
//! routed; the request's future clears the slot before each call into
//! the app and reads it after, until it has an id. The table's address
//! tells an app's routes from those of an app served inside one of its
//! routes. A layer that sends the request to another task to be routed
//! there leaves the slot empty: the route is counted as `(unknown)`.

use std::cell::Cell;

/// Ids of the answers that are not a route of the app.
pub(crate) const UNMATCHED: u32 = 0;
pub(crate) const REDIRECT: u32 = 1;
pub(crate) const MALFORMED: u32 = 2;
pub(crate) const REFUSED: u32 = 3;
pub(crate) const UNKNOWN: u32 = 4;
/// Their labels, in id order; the app's routes follow.
pub(crate) const SPECIAL: [&str; 5] = [
    "(unmatched)",
    "(redirect)",
    "(malformed)",
    "(refused)",
    "(unknown)",
];

thread_local! {
    static MATCHED: Cell<(usize, u32)> = const { Cell::new((0, UNKNOWN)) };
}

/// Called by the route table once it has routed.
pub(crate) fn set(table: usize, id: u32) {
    MATCHED.with(|m| m.set((table, id)));
}

/// Clears the slot before a call into the app.
pub(crate) fn clear() {
    MATCHED.with(|m| m.set((0, UNKNOWN)));
}

/// The id `table` wrote since the last `clear`, if any.
pub(crate) fn take(table: usize) -> Option<u32> {
    MATCHED.with(|m| {
        let (t, id) = m.get();
        (t == table).then_some(id)
    })
}
