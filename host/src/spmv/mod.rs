//! Sparse matrix-vector product y = A x: the CPU references (`cpu`) and, beside them, the GPU
//! drivers of each format (`csr`, `bsr`, `hll`) with their kernels in `kernels/src/spmv/`.

pub mod bsr;
pub mod cpu;
pub mod csr;
mod gpu;
pub mod hll;

pub use gpu::BlockWarps;
