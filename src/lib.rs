//! Tests and benchmarks of the workspace live in `tests/` and `benches/`; the library is `host`.
pub use host::*;
