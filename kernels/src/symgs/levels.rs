//! Level scheduling: the host groups the rows into levels (a row's level is one more than the
//! highest level among the rows it depends on in this sweep direction), so that the rows of
//! a level are independent; one launch per level computes them, a warp per row.

use crate::device::Float;
use crate::device::memory::load_nc;
use crate::device::thread::warp_index_1d;

use super::relax_row_warp;

/// The `count` rows listed in `level_rows`, out of place (see the module `symgs`). Launch: a
/// warp per listed row.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn relax_level<T: Float>(
    count: u32,
    level_rows: *const u32,
    forward: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    diagonal: *const T,
    rhs: *const T,
    old: *const T,
    new: *mut T,
) {
    let k = warp_index_1d();
    if k >= count {
        return; // the whole warp leaves together
    }
    // SAFETY: k < count, the list's length; the host lists rows < rows, each in the level
    // after all the rows it depends on.
    unsafe {
        let row = load_nc(level_rows.add(k as usize));
        relax_row_warp(row, forward != 0, row_ptr, col_idx, values, diagonal, rhs, old, new);
    }
}
