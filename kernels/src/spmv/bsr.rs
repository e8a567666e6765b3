//! BSR SpMV kernels (square `b x b` blocks stored row-major, indexed like CSR by block row).
//!
//! Arguments common to all: `block_rows`, `b`, `rows`, `cols` (the matrix's true size: the
//! last block row/column may stick out, its extra slots are zeros and never read against x),
//! `block_row_ptr` (block_rows + 1), `block_col` (blocks), `values` (blocks * b * b), x, y.

use crate::device::Float;
use crate::device::atomic;
use crate::device::thread::{WARP_SIZE, index_1d, lane_id};
use crate::device::warp;
use crate::search::segment_of;

/// Kernel 1: One thread per block row, producing the block row's `b` outputs one after another
/// (the Uruguay report's first variant). Launch: one thread per block row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn thread_per_block_row<T: Float>(
    block_rows: u32,
    b: u32,
    rows: u32,
    cols: u32,
    block_row_ptr: *const u32,
    block_col: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let br = index_1d();
    if br >= block_rows {
        return;
    }
    // SAFETY: br < block_rows; k < blocks; slot indices stay inside block k; col < cols.
    unsafe {
        let (start, end) = (*block_row_ptr.add(br as usize), *block_row_ptr.add(br as usize + 1));
        for i in 0..b {
            let row = br * b + i;
            if row >= rows {
                break;
            }
            let mut sum = T::ZERO;
            for k in start..end {
                let first_col = *block_col.add(k as usize) * b;
                let block_row = values.add(((k * b + i) * b) as usize);
                for j in 0..b.min(cols - first_col) {
                    sum = (*block_row.add(j as usize)).mul_add(*x.add((first_col + j) as usize), sum);
                }
            }
            *y.add(row as usize) = sum;
        }
    }
}

/// Kernel 2: One thread per stored cell, adding its product into `y` atomically (the Uruguay
/// report's second variant). `y` must be zeroed first. Launch: one thread per cell
/// (blocks * b * b).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn thread_per_cell<T: Float>(
    block_rows: u32,
    b: u32,
    rows: u32,
    cols: u32,
    block_row_ptr: *const u32,
    block_col: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let cell = index_1d();
    let block_cells = b * b;
    // SAFETY: block_row_ptr has block_rows + 1 entries; the last is the block count.
    let blocks = unsafe { *block_row_ptr.add(block_rows as usize) };
    if cell >= blocks * block_cells {
        return;
    }
    let k = cell / block_cells;
    let (i, j) = ((cell % block_cells) / b, cell % b);
    // The block row of block k: the last whose start is <= k.
    // SAFETY: the search reads starts below block_rows.
    let block_row = segment_of(block_rows, k, |r| unsafe { *block_row_ptr.add(r as usize) });
    // SAFETY: k < blocks; row/col bounds checked before use.
    unsafe {
        let (row, col) = (block_row * b + i, *block_col.add(k as usize) * b + j);
        if row < rows && col < cols {
            atomic::add(y.add(row as usize), *values.add(cell as usize) * *x.add(col as usize));
        }
    }
}

/// Kernel 3: One warp per block row: for each of the block row's `b` rows, the lanes walk the
/// (block, column) pairs of that row, so each load instruction reads `32 / b` contiguous
/// block rows; a shuffle reduction gives the output. Launch: one warp per block row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn warp_per_block_row<T: Float>(
    block_rows: u32,
    b: u32,
    rows: u32,
    cols: u32,
    block_row_ptr: *const u32,
    block_col: *const u32,
    values: *const T,
    x: *const T,
    y: *mut T,
) {
    let br = index_1d() / WARP_SIZE;
    if br >= block_rows {
        return; // the whole warp leaves together
    }
    let lane = lane_id();
    // SAFETY: br < block_rows; k < blocks; slots inside block k; col checked against cols.
    unsafe {
        let (start, end) = (*block_row_ptr.add(br as usize), *block_row_ptr.add(br as usize + 1));
        let pairs = (end - start) * b;
        for i in 0..b {
            let mut sum = T::ZERO;
            let mut p = lane;
            while p < pairs {
                let k = start + p / b;
                let j = p % b;
                let col = *block_col.add(k as usize) * b + j;
                if col < cols {
                    sum = (*values.add(((k * b + i) * b + j) as usize)).mul_add(*x.add(col as usize), sum);
                }
                p += WARP_SIZE;
            }
            let sum = warp::reduce_sum(sum);
            let row = br * b + i;
            if lane == 0 && row < rows {
                *y.add(row as usize) = sum;
            }
        }
    }
}
