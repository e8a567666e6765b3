//! The check every factorisation ends with: is a pivot too small to divide by?

use abi::Strided;

use crate::device::Float;

/// info = max over singular columns k of (n - k): the first column whose pivot |a[k][k]| is
/// not above `tolerance` has the largest n - k, so an atomic max on a zeroed word finds it
/// (0: no singular column). Launch: one thread per column.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn check<T: Float>(n: u32, a: Strided<T>, tolerance: T, info: *mut u32) {
    let k = crate::device::thread::index_1d();
    if k >= n {
        return;
    }
    // SAFETY: k < n; info is one word.
    unsafe {
        let usable = (*a.at(k, k)).abs() > tolerance; // false for NaN too
        if !usable {
            crate::device::atomic::max_u32(info, n - k);
        }
    }
}
