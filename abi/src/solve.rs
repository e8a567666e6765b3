//! Shapes of the dense-solve kernels.

/// Rows per chunk of the triangular solve (one warp's lanes solve a chunk's diagonal block).
pub const TRIANGULAR_CHUNK: u32 = 32;
/// Threads per block of the triangular solve: 4 warps, 8 rows of the chunk each.
pub const TRIANGULAR_THREADS: u32 = 128;
/// Row stride of the triangular solve's staged diagonal block (padded: lanes read down a
/// column).
pub const TRIANGULAR_STRIDE: u32 = TRIANGULAR_CHUNK + 1;

/// Shared bytes of the triangular solve: the diagonal block, its inverse, the block left of
/// it (then that times the inverse) and the row sums, each chunk x stride.
pub const fn triangular_shared_bytes(elem_size: usize) -> usize {
    4 * (TRIANGULAR_CHUNK * TRIANGULAR_STRIDE) as usize * elem_size
}

/// Threads per block of the blocked LU's panel and block-row (trsm) kernels.
pub const BLOCKED_THREADS: u32 = 256;
/// Columns of the block row per block of the trsm kernel: 16 keep its shared memory small
/// enough to sit beside a block of the LU's trailing update (PERF.md).
pub const TRSM_COLS: u32 = 16;

/// Shared bytes of the panel kernel for `rows_per_block` rows of a panel `nb` wide: the rows
/// (padded to nb + 1), the pivot row and the inverse pivots (nb each), 32 values of scratch,
/// 32 row indices, and the block's candidate row, each part starting on a 16-byte boundary.
pub const fn panel_shared_bytes(rows_per_block: usize, nb: usize, elem_size: usize) -> usize {
    round16(rows_per_block * (nb + 1) * elem_size)
        + 2 * round16(nb * elem_size)
        + round16(32 * elem_size)
        + 32 * 4
        + 16
}

/// Tagged words (`kernels::device::tagged`, 4 bytes of a value each) per value.
pub const fn tagged_words(elem_size: usize) -> usize {
    elem_size.div_ceil(4)
}

/// Tagged words of a panel block's candidate: its row, |pivot| and the row's nb values, made
/// even so that every slot starts 16-byte aligned (the row and |pivot|'s first word go out in
/// one 16-byte store).
pub const fn panel_slot_words(nb: usize, elem_size: usize) -> usize {
    (1 + (nb + 1) * tagged_words(elem_size)).next_multiple_of(2)
}

/// Tagged words the panel kernel exchanges through, for `blocks` blocks: two candidate slots
/// per block (even and odd columns), then two diagonal rows.
pub const fn panel_exchange_words(blocks: usize, nb: usize, elem_size: usize) -> usize {
    2 * blocks * panel_slot_words(nb, elem_size) + 2 * nb * tagged_words(elem_size)
}

/// Tagged words of the triangular solve's published x for `n` rows and `nrhs` right-hand
/// sides (the last chunk padded to 32 rows).
pub const fn triangular_exchange_words(n: usize, nrhs: usize, elem_size: usize) -> usize {
    n.div_ceil(TRIANGULAR_CHUNK as usize) * TRIANGULAR_CHUNK as usize * nrhs * tagged_words(elem_size)
}

/// Shared bytes of the trsm kernel for a panel `nb` wide: L11 (nb x (nb + 1)) and the block
/// row's `TRSM_COLS` columns.
pub const fn trsm_shared_bytes(nb: usize, elem_size: usize) -> usize {
    (nb * (nb + 1) + nb * TRSM_COLS as usize) * elem_size
}

/// Columns per block of the row-swap (laswp) kernel.
pub const SWAP_COLS: u32 = 32;

/// Shared bytes of the row-swap kernel for `width` steps: the steps' rows and the rows they
/// reach below (width x SWAP_COLS values each), the partners and their slots (width words each).
pub const fn swap_rows_shared_bytes(width: usize, elem_size: usize) -> usize {
    2 * width * SWAP_COLS as usize * elem_size + round16(width * 4) + width * 4
}

/// Tile side of the transpose (rows of the input per block, and columns).
pub const TRANSPOSE_TILE: u32 = 32;
/// Thread rows of a transpose block (each thread moves TILE / ROWS values).
pub const TRANSPOSE_ROWS: u32 = 8;

/// Shared bytes of the transpose: one tile, rows padded by one.
pub const fn transpose_shared_bytes(elem_size: usize) -> usize {
    (TRANSPOSE_TILE * (TRANSPOSE_TILE + 1)) as usize * elem_size
}

/// Shared arrays carved from one allocation start on 16-byte boundaries.
const fn round16(bytes: usize) -> usize {
    bytes.next_multiple_of(16)
}
