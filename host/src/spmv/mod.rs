//! Sparse matrix-vector product y = A x: CPU references here, GPU drivers beside them.
