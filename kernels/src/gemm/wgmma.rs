//! TF32 GEMM on Hopper's warpgroup MMA (`wgmma.mma_async`, the sm_90a module only): the
//! tensor cores read one operand straight from shared memory and run while the threads queue
//! the next copies; about twice the rate of `mma.sync` ([`super::pipelined`]) here (PERF.md).
//!
//! TF32 `wgmma` reads its shared-memory operand K-major only, and B (k x n, row-major) is
//! N-major. So the kernel computes C^T = B^T A^T: A's tile (rows of k, as A is stored) is the
//! shared-memory operand, and B^T comes from registers, read out of B's tile by each warp in the
//! fragment layout. Two warpgroups share A's 128-row tile and take 64 columns of C each. The
//! inputs go to the tensor cores as f32, of which they read the TF32 part: each input truncated
//! to 10 mantissa bits, where `pipelined` rounds to nearest (rounding here cost a quarter of
//! the speed: PERF.md).
//!
//! Shared memory per stage: A's tile in the 128-byte swizzle the descriptor names (row r of 32
//! floats, its 16-byte chunk c at chunk c ^ (r % 8)), then B's tile, rows padded. Copies by
//! `cp.async`, [`WGMMA_STAGES`] k-tiles in flight.

use abi::gemm::{
    WGMMA_B_STRIDE, WGMMA_BK, WGMMA_BM, WGMMA_BN, WGMMA_STAGES, WGMMA_THREADS, wgmma_stage_bytes,
};

use super::pipelined::tile_of_block;
use crate::device::pipeline::{self, copy_16};
use crate::device::shared;
use crate::device::thread::{lane_id, sync_threads, thread_idx_x, warp_id};
use crate::device::wgmma;

/// Chunks (16 bytes, 4 floats) of A's and of B's tile each thread copies per k-tile.
const A_CHUNKS: u32 = WGMMA_BM * WGMMA_BK / 4 / WGMMA_THREADS;
const B_CHUNKS: u32 = WGMMA_BK * WGMMA_BN / 4 / WGMMA_THREADS;
const _: () = assert!(A_CHUNKS * WGMMA_THREADS * 4 == WGMMA_BM * WGMMA_BK && WGMMA_BK * 4 == 128);
const _: () = assert!(B_CHUNKS * WGMMA_THREADS * 4 == WGMMA_BK * WGMMA_BN);

/// C = A B for row-major f32 matrices (A m x k, B k x n, C m x n) with TF32 inputs (truncated
/// by the tensor cores) and f32 accumulators, on `wgmma.mma_async` m64n128k8. Rows of A and B
/// must be 16-byte chunks: k and n multiples of 4, A and B 16-byte aligned (the host falls back
/// to [`super::pipelined`] otherwise). Launch: ceil(m / 128) * ceil(n / 128) blocks (1D),
/// `WGMMA_THREADS` threads, `abi::gemm::wgmma_shared_bytes()` of dynamic shared memory.
#[gpu::kernel]
pub unsafe fn tf32(m: u32, n: u32, k: u32, a: *const f32, b: *const f32, c: *mut f32) {
    let tid = thread_idx_x();
    let (tile_row, tile_col) = tile_of_block(m.div_ceil(WGMMA_BM), n.div_ceil(WGMMA_BN));
    let (row0, col0) = (tile_row * WGMMA_BM, tile_col * WGMMA_BN);
    // The stages start at the first 1024-byte boundary of the dynamic shared memory.
    let raw = shared::dynamic::<u8>();
    let misalignment = shared::address(raw, 0) % 1024;
    let stages = raw.after::<u8>((1024 - misalignment) % 1024);
    let stage = |s: u32| {
        // (`after` counts in the elements of the array it starts from: bytes here.)
        let a_tile = stages.after::<f32>(s * wgmma_stage_bytes());
        (a_tile, a_tile.after::<f32>(WGMMA_BM * WGMMA_BK))
    };

    // Chunk i of this thread in A's tile: row tid / 8 + 32 i, chunk tid % 8 of the row.
    let (a_row, a_chunk) = (tid / 8, tid % 8);
    let a_place = |i: u32| {
        let row = a_row + i * (WGMMA_THREADS / 8);
        row * WGMMA_BK + (a_chunk ^ (row % 8)) * 4
    };
    // Chunk i in B's tile: row tid / 32 + 8 i, floats 4 (tid % 32)...
    let (b_row, b_col) = (tid / 32, tid % 32 * 4);
    let load = |s: u32, kt: u32| {
        let (a_tile, b_tile) = stage(s);
        let k0 = kt * WGMMA_BK;
        for i in 0..A_CHUNKS {
            let (row, col) = (row0 + a_row + i * (WGMMA_THREADS / 8), k0 + a_chunk * 4);
            let bytes = if row < m { 4 * k.saturating_sub(col).min(4) } else { 0 };
            let src = if bytes > 0 { a.wrapping_add((row * k + col) as usize) } else { a };
            // SAFETY: `bytes` of A at (row, col) lie inside A (row < m, col + bytes / 4 <= k),
            // 16-byte aligned (the launch's contract); the chunk is inside the stage.
            unsafe { copy_16(a_tile, a_place(i), src, bytes) };
        }
        for i in 0..B_CHUNKS {
            let (row, col) = (k0 + b_row + i * (WGMMA_THREADS / 32), col0 + b_col);
            let bytes = if row < k { 4 * n.saturating_sub(col).min(4) } else { 0 };
            let src = if bytes > 0 { b.wrapping_add((row * n + col) as usize) } else { b };
            // SAFETY: as for A, inside B.
            unsafe {
                copy_16(b_tile, (b_row + i * (WGMMA_THREADS / 32)) * WGMMA_B_STRIDE + b_col, src, bytes)
            };
        }
    };
    let k_tiles = k.div_ceil(WGMMA_BK);
    for s in 0..WGMMA_STAGES - 1 {
        if s < k_tiles {
            load(s, s);
        }
        pipeline::commit();
    }

    // Warp w of warpgroup wg, lane (g, t): B^T rows (C columns) 64 wg + 16 w + g (+ 8).
    let (group, warp, g, t) = (warp_id() / 4, warp_id() % 4, lane_id() / 4, lane_id() % 4);
    let b_column = 64 * group + 16 * warp + g;
    let mut acc = [0.0f32; 64];
    for kt in 0..k_tiles {
        let (a_tile, b_tile) = stage(kt % WGMMA_STAGES);
        // This thread's copies of k-tile kt have landed: fenced for the tensor cores, and after
        // the barrier everyone's have, and both warpgroups are done with k-tile kt - 1 (waited
        // for below).
        pipeline::wait_pending(WGMMA_STAGES - 2);
        wgmma::fence_shared_for_async();
        sync_threads();
        // B^T's fragments for the four k-steps, from B's tile, as f32 bits (the tensor cores
        // read their TF32 part).
        let at = |row: u32, col: u32| {
            // SAFETY: row < BK and col < BN: inside B's tile.
            unsafe { b_tile.get(row * WGMMA_B_STRIDE + col) }.to_bits()
        };
        let fragment = |step: u32| {
            let row = 8 * step + t;
            [at(row, b_column), at(row, b_column + 8), at(row + 4, b_column), at(row + 4, b_column + 8)]
        };
        let fragments = [fragment(0), fragment(1), fragment(2), fragment(3)];
        wgmma::fence();
        unrolled!(step in [0, 1, 2, 3] {
            let descriptor = wgmma::descriptor_k_major_128b(a_tile, 32 * step as u32);
            // SAFETY: A's tile of this stage, fenced and behind the barrier; it is not written
            // again before the wait below (the next copies go to another stage).
            unsafe { wgmma::mma_m64n128k8_tf32(&mut acc, fragments[step], descriptor) };
        });
        wgmma::commit_group();
        // The copies of k-tile kt + stages - 1 go out while the tensor cores work, into the
        // stage of k-tile kt - 1, which both warpgroups have finished with.
        if kt + WGMMA_STAGES - 1 < k_tiles {
            load((kt + WGMMA_STAGES - 1) % WGMMA_STAGES, kt + WGMMA_STAGES - 1);
        }
        pipeline::commit();
        // The tensor cores read A's fragments from registers until the products are done.
        wgmma::wait_group::<0>();
    }

    // acc[q], q = 4j + 2h + e, is C[row0 + 8j + 2t + e][col0 + b_column + 8h] (C^T's
    // accumulators); unrolled, so that acc stays in registers.
    unrolled!(q in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63] {
        let (j, h, e) = (q as u32 / 4, q as u32 / 2 % 2, q as u32 % 2);
        let (row, col) = (row0 + 8 * j + 2 * t + e, col0 + b_column + 8 * h);
        if row < m && col < n {
            // SAFETY: (row, col) is inside C.
            unsafe { *c.add((row * n + col) as usize) = acc[q] };
        }
    });
}
