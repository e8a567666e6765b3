//! Shapes of the SpMV kernels.

/// Shared bytes of the one-thread-per-nonzero CSR kernel for blocks of `threads`: a product
/// and a row index per thread, the second array starting on a 16-byte boundary.
pub const fn nnz_atomic_shared_bytes(threads: u32, elem_size: usize) -> usize {
    threads as usize * (elem_size + 4) + 16
}
