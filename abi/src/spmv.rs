//! Shapes of the SpMV kernels.

/// Shared bytes of the one-thread-per-nonzero CSR kernel for blocks of `threads`: a product
/// and a row index per thread, the second array starting on a 16-byte boundary.
pub const fn nnz_atomic_shared_bytes(threads: u32, elem_size: usize) -> usize {
    threads as usize * (elem_size + 4) + 16
}

/// Nonzeros per warp on a long row of the vector CSR kernel: 8 per lane.
pub const LONG_ROW_CHUNK: u32 = 256;

/// Items (row ends and nonzeros) per lane of the merge-path CSR kernel for elements of
/// `elem_size` bytes: 5 for f64, 7 for f32. Odd, so that the lanes' strided reads of the staged
/// tile fall in distinct shared-memory banks; the fastest of 5, 7, 8 and 11 (PERF.md).
pub const fn merge_items_per_lane(elem_size: usize) -> u32 {
    if elem_size == 8 { 5 } else { 7 }
}

/// Items of one warp's tile.
pub const fn merge_tile(elem_size: usize) -> u32 {
    32 * merge_items_per_lane(elem_size)
}

/// Warps per block of the nonzero-split CSR kernel: a block takes a chunk of four
/// consecutive nonzeros a thread.
pub const SPLIT_WARPS: u32 = 16;

/// Nonzeros of one chunk (one block) of the nonzero-split kernel.
pub const fn split_chunk(warps: u32) -> u32 {
    warps * 32 * 4
}

/// Dynamic shared bytes of a nonzero-split block of `warps` warps, each part on a 16-byte
/// boundary: a row sum for each nonzero of the chunk (in elements of `elem_size`), a byte for
/// each nonzero (where rows end), then each warp's open sum and its first row end.
pub const fn split_shared_bytes(warps: u32, elem_size: usize) -> usize {
    let chunk = split_chunk(warps) as usize;
    (chunk * elem_size).next_multiple_of(16)
        + chunk.next_multiple_of(16)
        + (warps as usize * elem_size).next_multiple_of(16)
        + warps as usize * 4
}

/// Dynamic shared bytes of a merge-path block of `warps` warps, each part on a 16-byte
/// boundary: the block's products and the sums of its rows (together at most its items, in
/// elements of `elem_size`), its items + 1 row ends, then one element per warp for the warps'
/// open sums.
pub const fn merge_shared_bytes(warps: u32, elem_size: usize) -> usize {
    let items = warps as usize * merge_tile(elem_size) as usize;
    (items * elem_size).next_multiple_of(16)
        + ((items + 1) * 4).next_multiple_of(16)
        + warps as usize * elem_size
}
