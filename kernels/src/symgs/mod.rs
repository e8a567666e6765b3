//! Symmetric Gauss-Seidel (SymGS): a forward sweep over rows 0..n, then a backward sweep over
//! rows n-1..0, each row taking the newest values of the others:
//! `x[i] = (r[i] - sum_j a_ij x[j] + a_ii x[i]) / a_ii`.
//!
//! The exact-order kernels (`ready_done`, `levels`, `sync_free`) work out of place, as the
//! GPU101 report does: a sweep reads `old` and writes `new`, taking `new[j]` for the columns
//! this sweep has already updated (below the row going forward, above it going backward) and
//! `old[j]` for the others and the diagonal. The host runs the forward sweep x -> tmp and the
//! backward sweep tmp -> x, so no row overwrites a value that another row still has to read in
//! its old state, whether or not the pattern is symmetric. `multicolor` is a different
//! smoother (rows reordered by color) and updates in place.

pub mod blocks;
pub mod breadth_first;
pub mod levels;
pub mod multicolor;
pub mod ready_done;
pub mod sync_free;

use crate::device::memory::load_nc;
use crate::device::thread::{WARP_SIZE, lane_id};
use crate::device::{Float, warp};

/// Whether column `col` of row `row` has already been updated in this sweep: it lies below
/// the diagonal going forward (`forward != 0`), above it going backward.
#[inline(always)]
pub(crate) fn updated_earlier(forward: bool, row: u32, col: u32) -> bool {
    if forward { col < row } else { col > row }
}

/// The first entry of row `row` (of a matrix whose rows are sorted by column) whose column is
/// not below `col`: a binary search; the row's end where none is.
///
/// # Safety
/// `row` < rows; `row_ptr` holds rows + 1 offsets within `col_idx`.
#[inline(always)]
pub(crate) unsafe fn first_column_from(row_ptr: *const u32, col_idx: *const u32, row: u32, col: u32) -> u32 {
    // SAFETY (every access): the caller's row; low <= mid < high <= the row's end.
    let (mut low, mut high) =
        unsafe { (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1))) };
    while low < high {
        let mid = low + (high - low) / 2;
        if unsafe { load_nc(col_idx.add(mid as usize)) } < col {
            low = mid + 1;
        } else {
            high = mid;
        }
    }
    low
}

/// The row's new value from its whole dot product `sum` (diagonal term included, with the
/// row's old value): `(rhs - sum + a_ii old) / a_ii`, as HPCG writes it.
#[inline(always)]
pub(crate) fn relaxed<T: Float>(rhs: T, sum: T, diagonal: T, old: T) -> T {
    (rhs - sum + diagonal * old) / diagonal
}

/// One row, out of place, by a whole warp: lanes stride the row, a shuffle reduction sums,
/// lane 0 stores `new[row]`. Every lane of the warp must call it with the same row.
///
/// # Safety
/// `row` < rows; the arrays are a valid CSR matrix and vectors of `rows` values; `old` and
/// `rhs` are not written while the kernel runs; `new[j]` is final for every column `j` this
/// sweep has updated earlier.
#[inline(always)]
pub(crate) unsafe fn relax_row_warp<T: Float>(
    row: u32,
    forward: bool,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    diagonal: *const T,
    rhs: *const T,
    old: *const T,
    new: *mut T,
) {
    let r = row as usize;
    // SAFETY (every access): row < rows; j < end <= nnz; columns < rows (square matrix).
    let (start, end) = unsafe { (load_nc(row_ptr.add(r)), load_nc(row_ptr.add(r + 1))) };
    // The row's own terms, loaded with the row rather than after the reduction.
    let (own_rhs, own_diagonal, own_old) =
        unsafe { (load_nc(rhs.add(r)), load_nc(diagonal.add(r)), load_nc(old.add(r))) };
    let mut sum = T::ZERO;
    let mut j = start + lane_id();
    while j < end {
        let col = unsafe { load_nc(col_idx.add(j as usize)) };
        // `new` changes during the sweep: plain loads, never the read-only path.
        let x = if updated_earlier(forward, row, col) {
            unsafe { *new.add(col as usize) }
        } else {
            unsafe { load_nc(old.add(col as usize)) }
        };
        sum = unsafe { load_nc(values.add(j as usize)) }.mul_add(x, sum);
        j += WARP_SIZE;
    }
    let sum = warp::reduce_sum(sum);
    if lane_id() == 0 {
        unsafe { *new.add(r) = relaxed(own_rhs, sum, own_diagonal, own_old) };
    }
}
