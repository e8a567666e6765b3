//! Iterative refinement of the mixed-precision solve: the f64 matrix rounded to f32 for the
//! factorisation (with its row sums, for ||A||), the residual r = b - A x in f64, and the
//! corrections that go through the f32 factors and back.

use abi::StridedMut;

use crate::device::Float;
use crate::device::thread::{grid_size_1d, index_1d, lane_id, warp_index_1d};
use crate::device::warp::reduce_sum;

/// `low[i][j] = a[i][j]` rounded to f32, and `row_sums[i]` = sum_j |a[i][j]| (in f64), for an
/// n x n row-major matrix `a` and `low` one with rows `ld` apart (a pointer and `ld`, which LLVM
/// addresses as global memory: `solve::blocked`). Launch: a warp per row.
#[gpu::kernel]
pub unsafe fn demote_matrix(n: u32, a: *const f64, low: *mut f32, ld: u32, row_sums: *mut f64) {
    let low = StridedMut { ptr: low, ld };
    let row = warp_index_1d();
    if row >= n {
        return;
    }
    let mut sum = 0.0f64;
    let mut j = lane_id();
    while j < n {
        // SAFETY: row, j < n: inside both n x n matrices.
        unsafe {
            let v = *a.add((row * n + j) as usize);
            *low.at(row, j) = v as f32;
            sum += v.abs();
        }
        j += 32;
    }
    let sum = reduce_sum(sum);
    if lane_id() == 0 {
        // SAFETY: row < n.
        unsafe { *row_sums.add(row as usize) = sum };
    }
}

/// r = b - A x for an n x n row-major A, in f64. Launch: a warp per row.
#[gpu::kernel]
pub unsafe fn residual(n: u32, a: *const f64, x: *const f64, b: *const f64, r: *mut f64) {
    let row = warp_index_1d();
    if row >= n {
        return;
    }
    let mut sum = 0.0f64;
    let mut j = lane_id();
    while j < n {
        // SAFETY: row, j < n.
        unsafe { sum = (*a.add((row * n + j) as usize)).mul_add(*x.add(j as usize), sum) };
        j += 32;
    }
    let sum = reduce_sum(sum);
    if lane_id() == 0 {
        // SAFETY: row < n.
        unsafe { *r.add(row as usize) = *b.add(row as usize) - sum };
    }
}

/// `low[i] = scale * v[i]` rounded to f32: a residual brought into f32's range before it goes
/// through the f32 factors. Launch: any, grid-stride loop.
#[gpu::kernel]
pub unsafe fn demote_scaled(n: u32, v: *const f64, scale: f64, low: *mut f32) {
    let mut i = index_1d();
    while i < n {
        // SAFETY: i < n, the length of both vectors.
        unsafe { *low.add(i as usize) = (scale * *v.add(i as usize)) as f32 };
        i += grid_size_1d();
    }
}

/// `x[i] += scale * d[i]` in f64: a correction from the f32 factors, scaled back. Launch: any,
/// grid-stride loop.
#[gpu::kernel]
pub unsafe fn add_correction(n: u32, d: *const f32, scale: f64, x: *mut f64) {
    let mut i = index_1d();
    while i < n {
        // SAFETY: i < n, the length of both vectors.
        unsafe { *x.add(i as usize) += scale * *d.add(i as usize) as f64 };
        i += grid_size_1d();
    }
}
