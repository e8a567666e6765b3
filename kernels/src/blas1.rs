//! Vector kernels: `y = a x + y` (the end-to-end example), later the dot products and updates
//! that PCG needs.

use crate::device::Float;
use crate::device::thread::{grid_size_1d, index_1d};

/// `y[i] += a * x[i]` for `i < n`, grid-stride loop.
pub unsafe fn axpy<T: Float>(n: u32, a: T, x: *const T, y: *mut T) {
    let mut i = index_1d();
    while i < n {
        let i_ = i as usize;
        // SAFETY: i < n, the length of x and y.
        unsafe { *y.add(i_) = a.mul_add(*x.add(i_), *y.add(i_)) };
        i += grid_size_1d();
    }
}

f32_f64_kernels! {
    axpy_f32, axpy_f64 => axpy(n: u32, a: T, x: *const T, y: *mut T);
}
