//! f64 GEMM on tensor cores: `mma.sync` m8n8k4 (DMMA, sm_80+). A 64 x 64 tile of C per block
//! of 4 warps (2 x 2), each warp a 32 x 32 sub-tile as 4 x 4 mma tiles of 8 x 8 (32
//! accumulators per lane); A and B staged through shared memory 16 values of k at a time,
//! the next k-tile's global loads in flight during the current one's mma's.
//!
//! Shared rows are padded by 4 doubles so that the 32 lanes' fragment reads (8 rows x 4
//! columns of A, 4 rows x 8 columns of B) fall in distinct banks.

use crate::device::memory::{load_quad, store_quad};
use crate::device::mma::dmma_m8n8k4;
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{block_idx_x, block_idx_y, lane_id, sync_threads, thread_idx_x, warp_id};

pub(super) const BM: u32 = 64;
pub(super) const BN: u32 = 64;
pub(super) const BK: u32 = 16;
/// Padded row lengths of the shared tiles (A: BM rows of BK; B: BK rows of BN).
pub(super) const A_STRIDE: u32 = BK + 4;
pub(super) const B_STRIDE: u32 = BN + 4;

/// This thread's 8 values of A and of B (128 threads load the 64 x 16 and 16 x 64 tiles).
pub(super) struct Staged {
    a: [[f64; 4]; 2],
    b: [[f64; 4]; 2],
}

/// The k-loop both tensor-core kernels share: stages each k-tile of the block's A rows and B
/// columns through shared memory (the next tile's global loads in flight meanwhile) and calls
/// `step(a_tile, b_tile, kk)` for each k-step of 4 within the tile.
#[inline(always)]
pub(super) unsafe fn main_loop(
    m: u32,
    n: u32,
    k: u32,
    a: *const f64,
    b: *const f64,
    mut step: impl FnMut(SharedArray<f64>, SharedArray<f64>, u32),
) {
    let tid = thread_idx_x();
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    let vector = k.is_multiple_of(4) && n.is_multiple_of(4) && row0 + BM <= m && col0 + BN <= n;
    let a_tile = shared::dynamic::<f64>();
    let b_tile = a_tile.after::<f64>(BM * A_STRIDE);
    let mut k0 = 0;
    // SAFETY: loads are bounds-checked or the tile lies inside the aligned matrices.
    let mut staged = unsafe { load_tile(a, b, m, n, k, row0, col0, 0, vector, tid) };
    while k0 < k {
        unsafe { store_tile(a_tile, b_tile, &staged, tid) };
        sync_threads();
        if k0 + BK < k {
            staged = unsafe { load_tile(a, b, m, n, k, row0, col0, k0 + BK, vector, tid) };
        }
        let mut kk = 0;
        while kk < BK {
            step(a_tile, b_tile, kk);
            kk += 4;
        }
        sync_threads();
        k0 += BK;
    }
}

/// Launch: grid (ceil(n / 64), ceil(m / 64)), 128 threads; shared bytes:
/// (64 * 20 + 16 * 68) * 8.
pub unsafe fn dmma(m: u32, n: u32, k: u32, a: *const f64, b: *const f64, c: *mut f64) {
    let lane = lane_id();
    let (warp_row, warp_col) = (warp_id() / 2 * 32, warp_id() % 2 * 32);
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    let mut acc = [[[0.0f64; 2]; 4]; 4];
    // SAFETY: fragment reads stay inside the tiles: rows < BM, columns < BK (A) and rows < BK,
    // columns < BN (B).
    unsafe {
        main_loop(m, n, k, a, b, |a_tile, b_tile, kk| {
            let mut a_frag = [0.0f64; 4];
            let mut b_frag = [0.0f64; 4];
            for i in 0..4u32 {
                a_frag[i as usize] = a_tile.get((warp_row + 8 * i + lane / 4) * A_STRIDE + kk + lane % 4);
                b_frag[i as usize] = b_tile.get((kk + lane % 4) * B_STRIDE + warp_col + 8 * i + lane / 4);
            }
            for i in 0..4 {
                for j in 0..4 {
                    acc[i][j] = dmma_m8n8k4(a_frag[i], b_frag[j], acc[i][j]);
                }
            }
        })
    };

    // Lane l holds C[8i + l / 4][8j + 2 (l % 4) + {0, 1}] of the warp's sub-tile.
    for i in 0..4u32 {
        let row = row0 + warp_row + 8 * i + lane / 4;
        if row >= m {
            continue;
        }
        for j in 0..4u32 {
            let col = col0 + warp_col + 8 * j + 2 * (lane % 4);
            let [v0, v1] = acc[i as usize][j as usize];
            // SAFETY: bounds checked against m and n.
            unsafe {
                let out = c.add((row * n + col) as usize);
                if col < n {
                    *out = v0;
                }
                if col + 1 < n {
                    *out.add(1) = v1;
                }
            }
        }
    }
}

/// This thread's 8 values of A (row `tid / 2`, k `k0 + 8 (tid % 2)..+8`) and of B (k row
/// `k0 + tid / 8`, columns `8 (tid % 8)..+8`) for the k-tile at `k0`.
#[inline(always)]
pub(super) unsafe fn load_tile(
    a: *const f64,
    b: *const f64,
    m: u32,
    n: u32,
    k: u32,
    row0: u32,
    col0: u32,
    k0: u32,
    vector: bool,
    tid: u32,
) -> Staged {
    let (a_row, a_k) = (row0 + tid / 2, k0 + 8 * (tid % 2));
    let (b_k, b_col) = (k0 + tid / 8, col0 + 8 * (tid % 8));
    // SAFETY: vector loads only for tiles inside the aligned matrices; scalars are checked.
    unsafe {
        if vector && k0 + BK <= k {
            let (pa, pb) = (a.add((a_row * k + a_k) as usize), b.add((b_k * n + b_col) as usize));
            return Staged {
                a: [load_quad(pa), load_quad(pa.add(4))],
                b: [load_quad(pb), load_quad(pb.add(4))],
            };
        }
        let mut s = Staged { a: [[0.0; 4]; 2], b: [[0.0; 4]; 2] };
        for j in 0..8u32 {
            if a_row < m && a_k + j < k {
                s.a[(j / 4) as usize][(j % 4) as usize] = *a.add((a_row * k + a_k + j) as usize);
            }
            if b_k < k && b_col + j < n {
                s.b[(j / 4) as usize][(j % 4) as usize] = *b.add((b_k * n + b_col + j) as usize);
            }
        }
        s
    }
}

#[inline(always)]
pub(super) unsafe fn store_tile(a_tile: SharedArray<f64>, b_tile: SharedArray<f64>, s: &Staged, tid: u32) {
    let (a_row, a_k) = (tid / 2, 8 * (tid % 2));
    let (b_k, b_col) = (tid / 8, 8 * (tid % 8));
    // SAFETY: indices inside the padded tiles; rows of 20 and 68 doubles keep the 4-double
    // groups 16-byte aligned.
    unsafe {
        store_quad(a_tile.ptr(a_row * A_STRIDE + a_k), s.a[0]);
        store_quad(a_tile.ptr(a_row * A_STRIDE + a_k + 4), s.a[1]);
        store_quad(b_tile.ptr(b_k * B_STRIDE + b_col), s.b[0]);
        store_quad(b_tile.ptr(b_k * B_STRIDE + b_col + 4), s.b[1]);
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_dmma_f64(
    m: u32,
    n: u32,
    k: u32,
    a: *const f64,
    b: *const f64,
    c: *mut f64,
) {
    // SAFETY: the host launches this entry point with the arguments it declares.
    unsafe { dmma(m, n, k, a, b, c) }
}
