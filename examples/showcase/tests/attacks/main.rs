//! The composed showcase under outside attack (security round 3): every
//! battery and layer installed, production settings, a real process
//! over real sockets. One module per attack; `Showcase` starts the
//! binary as a user would.
#![allow(clippy::unwrap_used, missing_docs)]

#[path = "../support/mod.rs"]
mod support;

mod harness;

mod host;
mod login_memory;
mod smaller;
mod sse_replay;
mod throttle;
