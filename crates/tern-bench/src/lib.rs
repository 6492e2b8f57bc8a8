//! The Tern bench lab.
//!
//! Three layers, never mixed in one table:
//! 1. **router lookups**: criterion benches in `crates/tern-router/benches`;
//! 2. **in-process overhead**: one request through the whole app against a
//!    hand-written handler doing the same work ([`inprocess`]), timed with
//!    criterion (`benches/inprocess.rs`) and counted in instructions with
//!    callgrind ([`callgrind`]);
//! 3. **real sockets**: each server a separate process pinned to its
//!    cores, wrk or h2load pinned to the others, servers rotated each
//!    round, every response checked first ([`process`], [`wrk`]).
//!
//! The schema contracts of `tern-contract` (validation, CBOR, COSE) are
//! measured on their own, in layers 2 and 3 ([`contracts`]); so are the
//! database workloads ([`data`]), the admin's pages ([`admin`]), the
//! WebSockets, Tern against the
//! protocol libraries bare on hyper ([`ws`]), Tern's realtime
//! channels: held sockets, fan-out, slow consumers ([`realtime`]), and
//! Tern's website, the showcase's pages beside its `/plaintext`, plain
//! and compressed ([`site`]).
//!
//! Each run writes an [`evidence::Evidence`] JSON file, a terminal summary
//! and an HTML report ([`report`]).

pub mod admin;
pub mod callgrind;
pub mod cli;
pub mod client;
pub mod compare;
mod console;
pub mod contracts;
pub mod data;
pub mod evidence;
pub mod inprocess;
mod load_client;
pub mod machine;
pub mod process;
pub mod realtime;
pub mod report;
pub mod run;
pub mod scaling;
pub mod site;
pub mod soak;
pub mod stats;
mod workloads;
pub mod wrk;
pub mod ws;
