//! Sparse matrix-vector product y = A x, one file per format. Each file keeps the classic
//! kernels of the reports as a readable progression beside the fast ones.

pub mod bsr;
pub mod csr;
pub mod hll;
