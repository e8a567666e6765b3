//! Dense C = A B for row-major matrices of any shape (A m x k, B k x n, C m x n), as a
//! progression: the Naples report's shared-memory tiles, a register-blocked SIMT kernel, and
//! tensor cores for f64.

pub mod blocked;
pub mod dmma;
pub mod tiled;
pub mod update;
