//! Vector kernels: `y = a x + y` (the end-to-end example), the dot products and updates
//! that PCG needs, and a gather.

use crate::device::memory::load_nc;
use crate::device::thread::{block_idx_x, grid_size_1d, index_1d, thread_idx_x};
use crate::device::{Float, block, shared};

/// `y[i] += a * x[i]` for `i < n`, grid-stride loop.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn axpy<T: Float>(n: u32, a: T, x: *const T, y: *mut T) {
    let mut i = index_1d();
    while i < n {
        let i_ = i as usize;
        // SAFETY: i < n, the length of x and y.
        unsafe { *y.add(i_) = a.mul_add(*x.add(i_), *y.add(i_)) };
        i += grid_size_1d();
    }
}

/// One step of conjugate gradients in Chronopoulos and Gear's form, for `i < n`: the search
/// direction `p = u + beta p` and its product `s = w + beta s` (w = A u, so s = A p), then
/// `x += alpha p` and `r -= alpha s`; grid-stride loop.
#[gpu::kernel(T = f32 | f64)]
#[allow(clippy::too_many_arguments)] // the two scalars and the six vectors of the step
pub unsafe fn cg_step<T: Float>(
    n: u32,
    alpha: T,
    beta: T,
    u: *const T,
    w: *const T,
    p: *mut T,
    s: *mut T,
    x: *mut T,
    r: *mut T,
) {
    let mut i = index_1d();
    while i < n {
        let k = i as usize;
        // SAFETY: k < n, the length of every vector.
        unsafe {
            let p_k = beta.mul_add(*p.add(k), *u.add(k));
            let s_k = beta.mul_add(*s.add(k), *w.add(k));
            *p.add(k) = p_k;
            *s.add(k) = s_k;
            *x.add(k) = alpha.mul_add(p_k, *x.add(k));
            *r.add(k) = (-alpha).mul_add(s_k, *r.add(k));
        }
        i += grid_size_1d();
    }
}

/// First pass of a dot product: `partials[block]` = this block's share of `sum x[i] y[i]`
/// (grid-stride loop, block reduction). Launch: one pass's blocks; shared bytes: 32 * size_of T.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn dot_partials<T: Float>(n: u32, x: *const T, y: *const T, partials: *mut T) {
    let mut sum = T::ZERO;
    let mut i = index_1d();
    while i < n {
        // SAFETY: i < n, the length of x and y.
        unsafe { sum = (*x.add(i as usize)).mul_add(*y.add(i as usize), sum) };
        i += grid_size_1d();
    }
    let total = block::reduce_sum(sum, T::ZERO, shared::dynamic::<T>());
    if thread_idx_x() == 0 {
        // SAFETY: the host allocates one partial per block.
        unsafe { *partials.add(block_idx_x() as usize) = total };
    }
}

/// Second pass: `out[0] = sum of the count partials`, in a fixed order (deterministic).
/// Launch: one block; shared bytes: 32 * size_of T.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn sum_partials<T: Float>(count: u32, partials: *const T, out: *mut T) {
    let mut sum = T::ZERO;
    let mut i = thread_idx_x();
    while i < count {
        // SAFETY: i < count, the number of partials.
        sum = sum + unsafe { *partials.add(i as usize) };
        i += crate::device::thread::block_dim_x();
    }
    let total = block::reduce_sum(sum, T::ZERO, shared::dynamic::<T>());
    if thread_idx_x() == 0 {
        // SAFETY: out holds one value.
        unsafe { *out = total };
    }
}

/// `out[i] = x[index[i]]` for `i < count`: the x values a part of a distributed SpMV sends,
/// those of a graph's hot columns (the merge-path SpMV), or a vector in another numbering (the
/// renumbered SpMV). Launch: a thread per entry.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn gather<T: Float>(count: u32, index: *const u32, x: *const T, out: *mut T) {
    let i = index_1d();
    if i < count {
        // SAFETY: i < count, the length of index and out; index holds positions of x (the
        // host's plan).
        unsafe { *out.add(i as usize) = *x.add(load_nc(index.add(i as usize)) as usize) };
    }
}
