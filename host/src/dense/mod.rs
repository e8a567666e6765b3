//! Dense matrices (row-major) and the dense operations: GEMM and the LU solve.
