//! The tutorial kernel (`examples/custom_kernel.rs` launches it): the squared 2-norm of each
//! row of a dense row-major matrix, a warp per row. Copy this file to start a kernel of your
//! own: write the algorithm with `crate::device`, mark it `#[gpu::kernel(..)]`, add the module
//! to `lib.rs`, and the host gets `rgla::kernels::examples::row_norms` with the same
//! parameters, typed.

use crate::device::Float;
use crate::device::thread::{WARP_SIZE, index_1d, lane_id};
use crate::device::warp;

/// `norms[row] = sum_j a[row][j]^2` for the `rows x cols` matrix `a`. The lanes of a warp
/// stride the row (neighbouring lanes read neighbouring values: coalesced), then a shuffle
/// reduction adds their sums. Launch: a warp per row, blocks a multiple of 32.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn row_norms<T: Float>(rows: u32, cols: u32, a: *const T, norms: *mut T) {
    let row = index_1d() / WARP_SIZE;
    if row >= rows {
        return; // the whole warp leaves together
    }
    let mut sum = T::ZERO;
    let mut col = lane_id();
    while col < cols {
        // SAFETY: row < rows and col < cols index the rows x cols matrix.
        let v = unsafe { *a.add((row * cols + col) as usize) };
        sum = v.mul_add(v, sum);
        col += WARP_SIZE;
    }
    let sum = warp::reduce_sum(sum);
    if lane_id() == 0 {
        // SAFETY: row < rows, the length of `norms`.
        unsafe { *norms.add(row as usize) = sum };
    }
}
