//! f64 GEMM on tensor cores: `mma.sync` m8n8k4 (DMMA, sm_80+). A 64 x 64 tile of C per block
//! of 4 warps (2 x 2), each warp a 32 x 32 sub-tile as 4 x 4 mma tiles of 8 x 8 (32
//! accumulators per lane); A and B staged through shared memory 16 values of k at a time,
//! the next k-tile's global loads in flight during the current one's mma's.
//!
//! Shared rows are padded by 4 doubles so that the 32 lanes' fragment reads (8 rows x 4
//! columns of A, 4 rows x 8 columns of B) fall in distinct banks.

use abi::gemm::{DMMA_A_STRIDE as A_STRIDE, DMMA_B_STRIDE as B_STRIDE, DMMA_K as BK, DMMA_TILE};
use abi::{Strided, StridedMut};

use crate::device::memory::{load_quad, store_quad};
use crate::device::mma::dmma_m8n8k4;
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{block_idx_x, block_idx_y, lane_id, sync_threads, thread_idx_x, warp_id};

pub(super) const BM: u32 = DMMA_TILE;
pub(super) const BN: u32 = DMMA_TILE;

/// This thread's 8 values of A and of B (128 threads load the 64 x 16 and 16 x 64 tiles).
struct Staged {
    a: [[f64; 4]; 2],
    b: [[f64; 4]; 2],
}

/// The k-loop of the 64 x 64 tensor-core kernels (`dmma`, `dmma16`, the update's `dmma`):
/// stages each k-tile of the block's A rows and B columns through shared memory (the next
/// tile's global loads in flight meanwhile) and calls `step(a_tile, b_tile, kk)` for each
/// k-step of 4 within the tile. A is m x k, B k x n, both blocks of row-major matrices.
#[inline(always)]
pub(super) unsafe fn main_loop(
    m: u32,
    n: u32,
    k: u32,
    a: Strided<f64>,
    b: Strided<f64>,
    mut step: impl FnMut(SharedArray<f64>, SharedArray<f64>, u32),
) {
    let tid = thread_idx_x();
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // 16-byte vector loads need aligned blocks and leading dimensions, and a full tile.
    let aligned = |p: Strided<f64>| (p.ptr as usize).is_multiple_of(16) && p.ld.is_multiple_of(4);
    let vector = aligned(a) && aligned(b) && row0 + BM <= m && col0 + BN <= n;
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

/// acc[i][j] += this warp's A rows 8i.. times B columns 8j.. over the k-step at `kk` (A
/// negated when `NEGATE`: the update's C - A B). Lane l holds C[8i + l / 4][8j + 2 (l % 4) +
/// {0, 1}] of the warp's 32 x 32 sub-tile at (`warp_row`, `warp_col`).
///
/// # Safety
/// The tiles hold a staged k-tile (rows < BM, columns < BK of A; rows < BK, columns < BN of B).
#[inline(always)]
pub(super) unsafe fn mma_step<const NEGATE: bool>(
    acc: &mut [[[f64; 2]; 4]; 4],
    a_tile: SharedArray<f64>,
    b_tile: SharedArray<f64>,
    kk: u32,
    (warp_row, warp_col): (u32, u32),
) {
    let lane = lane_id();
    let mut a_frag = [0.0f64; 4];
    let mut b_frag = [0.0f64; 4];
    for i in 0..4u32 {
        // SAFETY: rows < BM, columns kk + lane % 4 < BK of A; rows < BK, columns < BN of B.
        let a = unsafe { a_tile.get((warp_row + 8 * i + lane / 4) * A_STRIDE + kk + lane % 4) };
        a_frag[i as usize] = if NEGATE { -a } else { a };
        b_frag[i as usize] = unsafe { b_tile.get((kk + lane % 4) * B_STRIDE + warp_col + 8 * i + lane / 4) };
    }
    for i in 0..4 {
        for j in 0..4 {
            acc[i][j] = dmma_m8n8k4(a_frag[i], b_frag[j], acc[i][j]);
        }
    }
}

/// This warp's 32 x 32 sub-tile of the block tile: the (row, column) of its first element.
#[inline(always)]
pub(super) fn warp_tile() -> (u32, u32) {
    (warp_id() / 2 * 32, warp_id() % 2 * 32)
}

/// The C element (row, col) of this lane's accumulator pair (i, j).
#[inline(always)]
fn acc_at(i: u32, j: u32, (warp_row, warp_col): (u32, u32)) -> (u32, u32) {
    let lane = lane_id();
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    (row0 + warp_row + 8 * i + lane / 4, col0 + warp_col + 8 * j + 2 * (lane % 4))
}

/// C = A B on tensor cores (A m x k, B k x n, C m x n, row-major). Launch: grid (ceil(n / 64),
/// ceil(m / 64)), `abi::gemm::DMMA_THREADS` threads; shared bytes `abi::gemm::DMMA_SHARED_BYTES`.
#[gpu::kernel]
pub unsafe fn dmma(m: u32, n: u32, k: u32, a: *const f64, b: *const f64, c: *mut f64) {
    let warp = warp_tile();
    let mut acc = [[[0.0f64; 2]; 4]; 4];
    let (a, b) = (Strided { ptr: a, ld: k }, Strided { ptr: b, ld: n });
    // SAFETY: the k-loop stages the tiles that `mma_step` reads.
    unsafe {
        main_loop(m, n, k, a, b, |a_tile, b_tile, kk| mma_step::<false>(&mut acc, a_tile, b_tile, kk, warp))
    };
    // SAFETY: C is m x n.
    unsafe { store_acc(&acc, StridedMut { ptr: c, ld: n }, m, n, warp) };
}

/// Loads this lane's accumulators from C (m x n), zeros outside it.
///
/// # Safety
/// C holds an m x n block.
#[inline(always)]
pub(super) unsafe fn load_acc(
    acc: &mut [[[f64; 2]; 4]; 4],
    c: Strided<f64>,
    m: u32,
    n: u32,
    warp: (u32, u32),
) {
    for i in 0..4u32 {
        for j in 0..4u32 {
            let (row, col) = acc_at(i, j, warp);
            if row < m {
                // SAFETY: bounds checked against m and n.
                unsafe {
                    let cell = &mut acc[i as usize][j as usize];
                    if col < n {
                        cell[0] = *c.at(row, col);
                    }
                    if col + 1 < n {
                        cell[1] = *c.at(row, col + 1);
                    }
                }
            }
        }
    }
}

/// Stores this lane's accumulators into C (m x n), the parts inside it.
///
/// # Safety
/// C holds an m x n block.
#[inline(always)]
pub(super) unsafe fn store_acc(
    acc: &[[[f64; 2]; 4]; 4],
    c: StridedMut<f64>,
    m: u32,
    n: u32,
    warp: (u32, u32),
) {
    for i in 0..4u32 {
        for j in 0..4u32 {
            let (row, col) = acc_at(i, j, warp);
            if row >= m {
                continue;
            }
            let [v0, v1] = acc[i as usize][j as usize];
            // SAFETY: bounds checked against m and n.
            unsafe {
                if col < n {
                    *c.at(row, col) = v0;
                }
                if col + 1 < n {
                    *c.at(row, col + 1) = v1;
                }
            }
        }
    }
}

/// This thread's 8 values of A (row `tid / 2`, k `k0 + 8 (tid % 2)..+8`) and of B (k row
/// `k0 + tid / 8`, columns `8 (tid % 8)..+8`) for the k-tile at `k0`.
#[inline(always)]
unsafe fn load_tile(
    a: Strided<f64>,
    b: Strided<f64>,
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
    // SAFETY: vector loads only for tiles inside the aligned blocks; scalars are checked.
    unsafe {
        if vector && k0 + BK <= k {
            let (pa, pb) = (a.at(a_row, a_k), b.at(b_k, b_col));
            return Staged {
                a: [load_quad(pa), load_quad(pa.add(4))],
                b: [load_quad(pb), load_quad(pb.add(4))],
            };
        }
        let mut s = Staged { a: [[0.0; 4]; 2], b: [[0.0; 4]; 2] };
        for j in 0..8u32 {
            if a_row < m && a_k + j < k {
                s.a[(j / 4) as usize][(j % 4) as usize] = *a.at(a_row, a_k + j);
            }
            if b_k < k && b_col + j < n {
                s.b[(j / 4) as usize][(j % 4) as usize] = *b.at(b_k, b_col + j);
            }
        }
        s
    }
}

#[inline(always)]
unsafe fn store_tile(a_tile: SharedArray<f64>, b_tile: SharedArray<f64>, s: &Staged, tid: u32) {
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
