//! A connection's watchdog: what the connection is doing, for its
//! timeouts, and the socket wrapper that tells it.
//!
//! - [`timeouts`]: [`Activity`], the connection's state as the watchdog
//!   reads it (a head begun, requests in flight, a write blocked), and the
//!   head, keep-alive, write and drain rules it applies ([`Verdict`]).
//! - [`io`]: [`WatchedIo`], the socket as hyper sees it; it reports reads
//!   and stalled writes to the `Activity`, follows HTTP/1 framing, answers
//!   a pipelined batch with one write and replaces hyper's own refusals.
//! - [`linger`]: how the socket closes ([`Linger`]): a reset for a client
//!   that stopped reading, else a lingering close.

mod io;
mod linger;
mod timeouts;

pub(super) use io::WatchedIo;
pub(super) use linger::Linger;
pub(super) use timeouts::{Activity, Verdict, DRAIN_IDLE_GRACE};
