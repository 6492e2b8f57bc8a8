//! See the module list in `main.rs`.

#[allow(unused_imports)]
use super::harness::*;
