//! Shapes of the SpMV kernels.

/// Shared bytes of the one-thread-per-nonzero CSR kernel for blocks of `threads`: a product
/// and a row index per thread, the second array starting on a 16-byte boundary.
pub const fn nnz_atomic_shared_bytes(threads: u32, elem_size: usize) -> usize {
    threads as usize * (elem_size + 4) + 16
}

/// Items (row ends and nonzeros) per lane of the merge-path CSR kernel, and per warp tile. Odd,
/// so that the lanes' strided reads of the staged tile fall in distinct shared-memory banks.
pub const MERGE_ITEMS_PER_LANE: u32 = 5;
pub const MERGE_TILE: u32 = 32 * MERGE_ITEMS_PER_LANE;

/// Shared bytes one warp of the merge-path kernel stages its tile in: the products (elements
/// of `elem_size`), then TILE + 1 row ends, each part on a 16-byte boundary.
pub const fn merge_warp_bytes(elem_size: usize) -> usize {
    (MERGE_TILE as usize * elem_size).next_multiple_of(16)
        + ((MERGE_TILE as usize + 1) * 4).next_multiple_of(16)
}

/// The same, in elements of `elem_size` (warp w's slice starts w of these in).
pub const fn merge_warp_elements(elem_size: usize) -> u32 {
    (merge_warp_bytes(elem_size) / elem_size) as u32
}
