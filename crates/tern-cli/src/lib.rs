//! The `tern` command.
//!
//! ```text
//! tern new NAME            a project: an app with a route, a template, a
//!                          static file, a test and a README
//! tern bench COMMAND ...   the bench lab (the commands of `tern-bench`;
//!                          built with the `bench` feature)
//! ```
//!
//! An app's own commands (`serve`, `routes`, `check`, `migrate`, ...) are
//! the app binary's: see `tern::command`.

pub mod new;
