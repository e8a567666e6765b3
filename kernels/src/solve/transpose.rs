//! Out-of-place transpose, for handing row-major matrices to column-major libraries
//! (cuSOLVER): 32 x 32 tiles through shared memory, so reads and writes are both coalesced.

use abi::solve::{TRANSPOSE_ROWS as ROWS, TRANSPOSE_TILE as TILE};

use crate::device::Float;
use crate::device::shared;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y};

/// Padded row of the shared tile: reading down a column hits distinct banks.
const STRIDE: u32 = TILE + 1;

/// out (cols x rows) = a^T (a: rows x cols, both row-major). Launch: grid
/// (ceil(cols / TILE), ceil(rows / TILE)), TILE x ROWS threads; shared bytes:
/// `abi::solve::transpose_shared_bytes`.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn transpose<T: Float>(rows: u32, cols: u32, a: *const T, out: *mut T) {
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let tile = shared::dynamic::<T>();
    let (row0, col0) = (block_idx_y() * TILE, block_idx_x() * TILE);
    let mut r = ty;
    while r < TILE {
        let (row, col) = (row0 + r, col0 + tx);
        if row < rows && col < cols {
            // SAFETY: bounds checked; shared index below 32 * 33.
            unsafe { tile.set(r * STRIDE + tx, *a.add((row * cols + col) as usize)) };
        }
        r += ROWS;
    }
    sync_threads();
    let mut c = ty;
    while c < TILE {
        // Row col0 + c of the output, columns row0 + tx.
        let (row, col) = (col0 + c, row0 + tx);
        if row < cols && col < rows {
            // SAFETY: bounds checked.
            unsafe { *out.add((row * rows + col) as usize) = tile.get(tx * STRIDE + c) };
        }
        c += ROWS;
    }
}
