//! The Naples report's kernel: T x T shared-memory tiles, one thread per element of C.
//! T is the block's width (2, 4, 8, 16 or 32); sizes that are no multiple of T are handled by
//! bounds checks (the report padded with zeros instead).

use crate::device::thread::{
    block_dim_x, block_idx_x, block_idx_y, sync_threads, thread_idx_x, thread_idx_y,
};
use crate::device::{Float, shared};

/// Launch: a 2D grid of T x T blocks over C (x along columns); shared bytes: 2 T^2 size_of T.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn tiled<T: Float>(m: u32, n: u32, k: u32, a: *const T, b: *const T, c: *mut T) {
    let t = block_dim_x();
    let (tx, ty) = (thread_idx_x(), thread_idx_y());
    let (row, col) = (block_idx_y() * t + ty, block_idx_x() * t + tx);
    let a_tile = shared::dynamic::<T>();
    let b_tile = a_tile.after::<T>(t * t);
    let mut sum = T::ZERO;
    let mut k0 = 0;
    while k0 < k {
        // Each thread loads one element of each tile (zero outside the matrices).
        let (ak, bk) = (k0 + tx, k0 + ty);
        // SAFETY: global reads are bounds-checked; shared indices are below T^2.
        unsafe {
            a_tile
                .set(ty * t + tx, if row < m && ak < k { *a.add((row * k + ak) as usize) } else { T::ZERO });
            b_tile
                .set(ty * t + tx, if bk < k && col < n { *b.add((bk * n + col) as usize) } else { T::ZERO });
        }
        sync_threads();
        for i in 0..t {
            // SAFETY: i, tx, ty < T.
            sum = unsafe { a_tile.get(ty * t + i).mul_add(b_tile.get(i * t + tx), sum) };
        }
        sync_threads();
        k0 += t;
    }
    if row < m && col < n {
        // SAFETY: bounds checked.
        unsafe { *c.add((row * n + col) as usize) = sum };
    }
}
