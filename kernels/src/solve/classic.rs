//! The Milan report's kernels, one launch each per column: the augmented matrix
//! `[A | b]` stored row-major in a `len x len` buffer (`len` = n + 1 rounded up to a multiple
//! of 32, the padding zero), then for each column `col`:
//!
//! 1. `findmax`: each block of 1024 threads finds its largest |m[row][col]| (rows >= col) by
//!    the report's shared-memory tree ("confronto parallelo"), with its row;
//! 2. `getmax`: one thread picks the largest of the blocks' maxima;
//! 3. `pivoting`: swaps row `col` with the pivot row (nothing when the pivot is zero);
//! 4. `triangolo` (`eliminate`): every element below and right of the pivot subtracts its
//!    row's multiple of the pivot row.
//!
//! Then back substitution: the report's single thread (`back_substitution`), or the parallel
//! triangular solve (`solve::triangular`).

use crate::device::Float;
use crate::device::shared;
use crate::device::thread::{block_dim_x, block_idx_x, index_1d, index_2d, sync_threads, thread_idx_x};

/// Builds the augmented matrix: m[i][j] = a[i][j] (j < n), b[i] (j = n), zero in the padding
/// (the report's host-to-device copy and `completa_matrice` in one). Launch: 2D, 32 x 32
/// threads per block, covering len x len.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn augment<T: Float>(n: u32, len: u32, a: *const T, b: *const T, m: *mut T) {
    let (j, i) = index_2d();
    if i >= len || j >= len {
        return;
    }
    // SAFETY: i, j < len (m is len x len); a and b are read only inside n x n and n.
    unsafe {
        let value = if i < n && j < n {
            *a.add((i * n + j) as usize)
        } else if i < n && j == n {
            *b.add(i as usize)
        } else {
            T::ZERO
        };
        *m.add((i * len + j) as usize) = value;
    }
}

/// Each block's largest |m[row][col]| over rows >= col, and its row. Launch: ceil(len / 1024)
/// blocks of 1024 threads; shared bytes: 1024 * (size_of T + 4).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn findmax<T: Float>(len: u32, m: *const T, col: u32, block_max: *mut T, block_row: *mut u32) {
    let row = index_1d();
    let t = thread_idx_x();
    let cache = shared::dynamic::<T>();
    let indices = cache.after::<u32>(block_dim_x());
    // SAFETY (shared accesses): t and t + i are below block_dim_x, the documented size.
    unsafe {
        indices.set(t, row);
        let value =
            if row >= col && row < len { (*m.add((row * len + col) as usize)).abs() } else { T::ZERO };
        cache.set(t, value);
    }
    sync_threads();
    // The report's tree: the first half keeps the larger of itself and its partner in the
    // second half, halving until thread 0 holds the block's maximum (ties keep the lower row).
    let mut i = block_dim_x() / 2;
    while i != 0 {
        if t < i {
            unsafe {
                if cache.get(t) < cache.get(t + i) {
                    cache.set(t, cache.get(t + i));
                    indices.set(t, indices.get(t + i));
                }
            }
        }
        i /= 2;
        sync_threads();
    }
    if t == 0 {
        // SAFETY: one slot per block.
        unsafe {
            *block_max.add(block_idx_x() as usize) = cache.get(0);
            *block_row.add(block_idx_x() as usize) = indices.get(0);
        }
    }
}

/// The report's final reduction, in one thread: the largest block maximum and its row go to
/// slot 0. Launch: 1 block of 1 thread.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn getmax<T: Float>(blocks: u32, block_max: *mut T, block_row: *mut u32) {
    // SAFETY: `blocks` slots were written by `findmax`.
    unsafe {
        for i in 0..blocks as usize {
            if *block_max < *block_max.add(i) {
                *block_max = *block_max.add(i);
                *block_row = *block_row.add(i);
            }
        }
    }
}

/// Swaps row `col` with the pivot row found by `getmax`; nothing when the pivot is zero (a
/// singular column, reported by the host's pivot check). Launch: one thread per column (len).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn pivoting<T: Float>(len: u32, m: *mut T, col: u32, block_max: *const T, block_row: *const u32) {
    let j = index_1d();
    // SAFETY: slot 0 holds the pivot; the pivot row and col are < len, j < len.
    unsafe {
        if *block_max == T::ZERO || j >= len {
            return;
        }
        let pivot_row = *block_row;
        core::ptr::swap(m.add((col * len + j) as usize), m.add((pivot_row * len + j) as usize));
    }
}

/// The report's `triangolo`: m[i][j] -= m[index][j] * (m[i][index] / m[index][index]) for
/// every i, j > index. Column `index` below the pivot is left as it is (never read again).
/// Launch: 2D, 32 x 32 threads per block, covering len x len.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn eliminate<T: Float>(len: u32, m: *mut T, index: u32) {
    let (j, i) = index_2d();
    if i <= index || j <= index || i >= len || j >= len {
        return;
    }
    // SAFETY: i, j, index < len. Row `index` and column `index` are only read here.
    unsafe {
        let pivot = *m.add((index * len + index) as usize);
        if pivot != T::ZERO {
            let coef = *m.add((i * len + index) as usize) / pivot;
            let offset = (i * len + j) as usize;
            *m.add(offset) = *m.add(offset) - *m.add((index * len + j) as usize) * coef;
        }
    }
}

/// The report's `solveCuda`: back substitution on the triangular augmented matrix in one
/// thread, x[i] = (m[i][n] - sum_{j > i} m[i][j] x[j]) / m[i][i] (0 where m[i][i] is zero).
/// Launch: 1 block of 1 thread.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn back_substitution<T: Float>(n: u32, len: u32, m: *mut T, x: *mut T) {
    if n == 0 {
        return;
    }
    // SAFETY: every index is below n <= len in a len x len matrix; x holds n values.
    unsafe {
        let at = |i: u32, j: u32| m.add((i * len + j) as usize);
        let last = n - 1;
        *x.add(last as usize) = *at(last, n) / *at(last, last);
        for i in (0..last).rev() {
            for j in (i + 1..n).rev() {
                *at(i, n) = *at(i, n) - *at(i, j) * *x.add(j as usize);
            }
            let diagonal = *at(i, i);
            *x.add(i as usize) = if diagonal != T::ZERO { *at(i, n) / diagonal } else { T::ZERO };
        }
    }
}
