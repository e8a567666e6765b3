//! Aligned rows for the `cp.async` and copy-engine GEMMs ([`super::pipelined`], [`super::wgmma`]):
//! they copy tiles 16 bytes at a time only where every row of a matrix starts on a 16-byte
//! boundary (the pipelined kernel copies element by element otherwise, the copy engine not at
//! all), and fastest where rows start on 128-byte lines. A matrix whose rows are not 16-byte
//! aligned (k or n not a multiple of 16 bytes' worth of elements) is first copied into rows
//! that start on lines (PERF.md). The blocked LU keeps its matrix in such rows too, for its
//! trailing updates.

use abi::StridedMut;

use crate::device::Float;
use crate::device::thread::{block_dim_x, block_idx_x, block_idx_y, grid_dim_y, thread_idx_x};

/// dst[r][c] = a[r][c] for a dense rows x cols matrix `a`, and zero past a's rows and columns:
/// `dst` is a dense `rows_to x ld` matrix (rows_to >= rows, ld >= cols), every element written,
/// so it needs no zeros first. Launch: a 2D grid, x over dst's columns (one thread each), y
/// over its rows (each block row takes every `grid_dim_y`-th row).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn copy_rows<T: Float>(rows: u32, cols: u32, a: *const T, dst: *mut T, rows_to: u32, ld: u32) {
    let dst = StridedMut { ptr: dst, ld };
    let col = block_idx_x() * block_dim_x() + thread_idx_x();
    if col >= ld {
        return;
    }
    let mut row = block_idx_y();
    while row < rows_to {
        let value = if row < rows && col < cols {
            // SAFETY: row < rows and col < cols, inside `a`.
            unsafe { *a.add(row as usize * cols as usize + col as usize) }
        } else {
            T::ZERO
        };
        // SAFETY: row < rows_to and col < ld, inside `dst`.
        unsafe { *dst.at(row, col) = value };
        row += grid_dim_y();
    }
}
