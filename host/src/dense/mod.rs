//! Dense matrices (row-major) and the dense operations: GEMM and the LU solve.

pub mod matrix;
pub use matrix::DenseMatrix;

pub mod gemm;
pub mod lu;
