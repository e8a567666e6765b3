//! The GPU101 report's algorithm: two flag arrays and a host loop. `ready` (the report's
//! `fready`/`bready`) marks every row not yet done whose earlier-updated columns are all done;
//! `relax_ready` (`fdo`/`bdo`) computes the ready rows out of place and marks them done. The
//! host repeats the pair until every row is done, for each sweep direction.
//!
//! Two slips of the report's pseudo-code are not copied: its `fready` reads
//! `done[row_ptr[row] + j]` (a nonzero's position) where the column's flag `done[col]` is
//! meant, and it sums a row into one shared variable from every thread without an atomic (a
//! race); here a warp reduces the row with shuffles. The report launched a block per row for
//! `fdo`; this launches a warp per row (a grid sized to the rows, 4 warps a block).

use crate::device::atomic;
use crate::device::thread::{index_1d, lane_id, warp_index_1d};
use crate::device::{Float, memory::load_nc};

use super::{relax_row_warp, updated_earlier};

/// `ready[row]` = 1 for every row not done whose dependencies (the columns updated earlier
/// in this sweep) are all done, else 0; done rows are left alone. Launch: a thread per row.
#[gpu::kernel]
pub unsafe fn ready(
    rows: u32,
    forward: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    done: *const u32,
    ready: *mut u32,
) {
    let row = index_1d();
    if row >= rows {
        return;
    }
    let r = row as usize;
    // SAFETY (every access): row < rows; j < end <= nnz; columns < rows.
    unsafe {
        if *done.add(r) != 0 {
            return;
        }
        let (start, end) = (load_nc(row_ptr.add(r)), load_nc(row_ptr.add(r + 1)));
        let mut all_done = 1;
        for j in start..end {
            let col = load_nc(col_idx.add(j as usize));
            if updated_earlier(forward != 0, row, col) && *done.add(col as usize) == 0 {
                all_done = 0;
                break;
            }
        }
        *ready.add(r) = all_done;
    }
}

/// Computes every row that is ready and not done, `new[row]` from `old` and `new` (see the
/// module `symgs`), marks it done and counts it in `done_count`. Launch: a warp per row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn relax_ready<T: Float>(
    rows: u32,
    forward: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    diagonal: *const T,
    rhs: *const T,
    old: *const T,
    new: *mut T,
    ready: *const u32,
    done: *mut u32,
    done_count: *mut u32,
) {
    let row = warp_index_1d();
    if row >= rows {
        return; // the whole warp leaves together
    }
    let r = row as usize;
    // SAFETY: row < rows; the flags and vectors hold `rows` values. Flags written in this
    // launch are only this row's own; the ready flags came from the previous launch.
    unsafe {
        if *done.add(r) != 0 || *ready.add(r) == 0 {
            return;
        }
        relax_row_warp(row, forward != 0, row_ptr, col_idx, values, diagonal, rhs, old, new);
        if lane_id() == 0 {
            *done.add(r) = 1;
            atomic::add(done_count, 1u32);
        }
    }
}
