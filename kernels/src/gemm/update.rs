//! The trailing update of a blocked factorisation, C -= A B, on blocks of larger row-major
//! matrices updated in place (`abi::Strided`), so A, B and C may be blocks of one matrix (C
//! must not overlap A or B).
//!
//! `dmma`: the tensor-core kernel of `gemm::dmma` (64 x 64 tile of C per block of 4 warps, k
//! staged 16 at a time, m8n8k4 f64 mma's), with leading dimensions, the accumulators loaded
//! from C at the start (their loads overlap the first tile's) and A negated, so the mma's
//! compute C - A B directly. `pipelined` (sm_90): the k-loop of `gemm::pipelined` (m16n8k8,
//! f64 DMMA or f32 through TF32) with C -= A B in its epilogue. `dmma_tma` (sm_90a): the k-loop
//! of `gemm::dmma_tma` (f64 DMMA fed by the tensor memory accelerator). `wgmma` (sm_90a): the
//! k-loop of `gemm::wgmma` (TF32 on the warpgroup MMA, fed by the tensor memory accelerator).
//! `simt`: a register-blocked kernel for f32 (and f64 where tensor cores are missing), 64 x 64 tile,
//! 4 x 4 elements per thread.

use abi::gemm::{UPDATE_SIMT_K as BK, UPDATE_TILE};
use abi::{Strided, StridedMut};

use super::dmma::{load_acc, main_loop, mma_step, store_acc, warp_tile};
use crate::device::Float;
use crate::device::shared;
use crate::device::thread::{block_idx_x, block_idx_y, sync_threads, thread_idx_x};

const BM: u32 = UPDATE_TILE;
const BN: u32 = UPDATE_TILE;

/// C -= A B on tensor cores (A m x k, B k x n, C m x n): `gemm::dmma`'s k-loop with the
/// accumulators loaded from C and A negated. Launch: as `gemm::dmma::dmma`.
#[gpu::kernel]
pub unsafe fn dmma(m: u32, n: u32, k: u32, a: Strided<f64>, b: Strided<f64>, c: StridedMut<f64>) {
    let warp = warp_tile();
    let mut acc = [[[0.0f64; 2]; 4]; 4];
    // SAFETY: C is an m x n block; the k-loop stages the tiles that `mma_step` reads.
    unsafe {
        load_acc(&mut acc, c.as_const(), m, n, warp);
        main_loop(m, n, k, a, b, |a_tile, b_tile, kk| mma_step::<true>(&mut acc, a_tile, b_tile, kk, warp));
        store_acc(&acc, c, m, n, warp);
    }
}

/// C -= A B on tensor cores (A m x k, B k x n, C m x n): `gemm::pipelined`'s k-loop, f64 on
/// DMMA, f32 with its inputs rounded to TF32. Launch: as `gemm::pipelined::pipelined`.
#[cfg(target_feature = "sm_90")]
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn pipelined<T: crate::device::mma::Mma16x8x8>(
    m: u32,
    n: u32,
    k: u32,
    a: Strided<T>,
    b: Strided<T>,
    c: StridedMut<T>,
) {
    use super::pipelined::{Epilogue, main_loop};
    // SAFETY: the caller's blocks; C overlaps neither A nor B.
    unsafe { main_loop(m, n, k, a, b, c, Epilogue::Subtract) }
}

/// C -= A B in f64 on `gemm::dmma_tma`'s k-loop (A m x k, B k x n, C m x n: `maps` as the
/// host's `gemm::dmma_tma_maps`), C's tile prefetched to L2 three quarters into the k-loop for
/// the epilogue.
/// Launch: as `gemm::dmma_tma::dmma_tma`.
#[cfg(target_feature = "sm_90a")]
#[gpu::kernel]
#[gpu::max_threads(128)] // as `gemm::dmma_tma::dmma_tma`
pub unsafe fn dmma_tma(m: u32, n: u32, k: u32, maps: *const u64, c: StridedMut<f64>) {
    use super::pipelined::Epilogue;
    // SAFETY: the caller's maps; C overlaps neither A nor B.
    unsafe { super::dmma_tma::main_loop(m, n, k, maps, c, Epilogue::Subtract) }
}

/// C -= A B on Hopper's warpgroup MMA with TF32 inputs (A m x k, B k x n, C m x n):
/// `gemm::wgmma`'s k-loop without the copy warpgroup and clusters (thread 0 copies, A's tile
/// whole: `maps` as the host's `gemm::wgmma_maps(.., false)`), C's tile prefetched to L2 at the
/// start for the epilogue. Its blocks leave room on their SM for a block of the LU's panel
/// kernel, which runs beside the trailing update (PERF.md). Launch: one block per tile (1D),
/// `abi::gemm::WGMMA_MMA_THREADS` threads, `abi::gemm::wgmma_shared_bytes()`.
#[cfg(target_feature = "sm_90a")]
#[gpu::kernel]
#[inline(always)] // as `gemm::wgmma::tf32`
pub unsafe fn wgmma(m: u32, n: u32, k: u32, maps: *const u64, c: StridedMut<f32>) {
    use super::pipelined::Epilogue;
    // SAFETY: the caller's maps; C overlaps neither A nor B.
    unsafe { super::wgmma::main_loop::<false>(m, n, k, maps, c, Epilogue::Subtract) }
}

/// C -= A B with SIMT FMAs (A m x k, B k x n, C m x n): a 64 x 64 tile of C per block of 256
/// threads, each thread rows `ty + 16 i` and columns `tx + 16 j` (i, j < 4: neighbouring
/// threads touch neighbouring columns); A (transposed) and B staged 16 values of k at a time.
/// Launch: grid (ceil(n / 64), ceil(m / 64)), 256 threads; shared bytes: 2 * 16 * 64 size_of T.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn simt<T: Float>(m: u32, n: u32, k: u32, a: Strided<T>, b: Strided<T>, c: StridedMut<T>) {
    let tid = thread_idx_x();
    let (tx, ty) = (tid % 16, tid / 16);
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    let a_tile = shared::dynamic::<T>(); // [BK][BM]: A transposed
    let b_tile = a_tile.after::<T>(BK * BM); // [BK][BN]
    let mut acc = [[T::ZERO; 4]; 4];
    let mut k0 = 0;
    while k0 < k {
        // Each thread stages 4 elements of each tile: A row tid / 4, k (tid % 4) * 4 + q;
        // B k row tid / 16, column tid % 16 + 16 q.
        for q in 0..4u32 {
            let (a_row, a_k) = (row0 + tid / 4, k0 + (tid % 4) * 4 + q);
            let (b_k, b_col) = (k0 + tid / 16, col0 + tid % 16 + 16 * q);
            // SAFETY: global reads checked against m, n, k; shared indices below 16 x 64.
            unsafe {
                let va = if a_row < m && a_k < k { *a.at(a_row, a_k) } else { T::ZERO };
                let vb = if b_k < k && b_col < n { *b.at(b_k, b_col) } else { T::ZERO };
                a_tile.set(((tid % 4) * 4 + q) * BM + tid / 4, va);
                b_tile.set((tid / 16) * BN + tid % 16 + 16 * q, vb);
            }
        }
        sync_threads();
        for kk in 0..BK {
            // SAFETY: kk < BK, rows and columns < 64.
            let (a_frag, b_frag) = unsafe {
                (
                    [0u32, 1, 2, 3].map(|i| a_tile.get(kk * BM + ty + 16 * i)),
                    [0u32, 1, 2, 3].map(|j| b_tile.get(kk * BN + tx + 16 * j)),
                )
            };
            for i in 0..4 {
                for j in 0..4 {
                    acc[i][j] = a_frag[i].mul_add(b_frag[j], acc[i][j]);
                }
            }
        }
        sync_threads();
        k0 += BK;
    }
    for i in 0..4u32 {
        let row = row0 + ty + 16 * i;
        for j in 0..4u32 {
            let col = col0 + tx + 16 * j;
            if row < m && col < n {
                // SAFETY: bounds checked.
                unsafe {
                    let p = c.at(row, col);
                    *p = *p - acc[i as usize][j as usize];
                }
            }
        }
    }
}
