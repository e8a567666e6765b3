//! The trailing update of a blocked factorisation, C -= A B, on sub-matrices of a larger
//! row-major matrix updated in place: element (i, j) of A is a[i * lda + j] (B, C likewise),
//! so A, B and C may be blocks of one matrix (C must not overlap A or B).
//!
//! `dmma`: the tensor-core kernel of `gemm::dmma` (64 x 64 tile of C per block of 4 warps, k
//! staged 16 at a time, m8n8k4 f64 mma's), with leading dimensions, the accumulators loaded
//! from C at the start (their loads overlap the first tile's) and A negated, so the mma's
//! compute C - A B directly. `simt`: a register-blocked kernel for f32 (and f64 where tensor
//! cores are missing), 64 x 64 tile, 4 x 4 elements per thread.

use crate::device::Float;
use crate::device::memory::{load_quad, store_quad};
use crate::device::mma::dmma_m8n8k4;
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{block_idx_x, block_idx_y, lane_id, sync_threads, thread_idx_x, warp_id};

const BM: u32 = 64;
const BN: u32 = 64;
const BK: u32 = 16;
/// Padded row lengths of the shared tiles (A: BM rows of BK; B: BK rows of BN).
const A_STRIDE: u32 = BK + 4;
const B_STRIDE: u32 = BN + 4;

/// A matrix block: its first element and leading dimension.
#[derive(Clone, Copy)]
struct Block<P> {
    at: P,
    ld: u32,
}

/// This thread's 8 values of A and of B (128 threads load the 64 x 16 and 16 x 64 tiles).
struct Staged {
    a: [[f64; 4]; 2],
    b: [[f64; 4]; 2],
}

/// C -= A B on tensor cores (A m x k, B k x n, C m x n). Launch: grid (ceil(n / 64),
/// ceil(m / 64)), 128 threads; shared bytes: (64 * 20 + 16 * 68) * 8.
pub unsafe fn dmma(
    m: u32,
    n: u32,
    k: u32,
    a: *const f64,
    lda: u32,
    b: *const f64,
    ldb: u32,
    c: *mut f64,
    ldc: u32,
) {
    let tid = thread_idx_x();
    let lane = lane_id();
    let (warp_row, warp_col) = (warp_id() / 2 * 32, warp_id() % 2 * 32);
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // 16-byte vector loads need aligned blocks and leading dimensions, and a full tile.
    let aligned = |p: *const f64, ld: u32| (p as usize).is_multiple_of(16) && ld.is_multiple_of(4);
    let vector = aligned(a, lda) && aligned(b, ldb) && row0 + BM <= m && col0 + BN <= n;
    let (a, b) = (Block { at: a, ld: lda }, Block { at: b, ld: ldb });
    let a_tile = shared::dynamic::<f64>();
    let b_tile = a_tile.after::<f64>(BM * A_STRIDE);

    // Lane l holds C[8i + l / 4][8j + 2 (l % 4) + {0, 1}] of the warp's 32 x 32 sub-tile.
    let c_at =
        |i: u32, j: u32| (row0 + warp_row + 8 * i + lane / 4, col0 + warp_col + 8 * j + 2 * (lane % 4));
    let mut acc = [[[0.0f64; 2]; 4]; 4];
    for i in 0..4u32 {
        for j in 0..4u32 {
            let (row, col) = c_at(i, j);
            if row < m {
                // SAFETY: bounds checked against m and n.
                unsafe {
                    let p = c.add((row * ldc + col) as usize);
                    let cell = &mut acc[i as usize][j as usize];
                    if col < n {
                        cell[0] = *p;
                    }
                    if col + 1 < n {
                        cell[1] = *p.add(1);
                    }
                }
            }
        }
    }

    let mut k0 = 0;
    // SAFETY: loads are bounds-checked or the tile lies inside the aligned blocks.
    let mut staged = unsafe { load_tile(a, b, m, n, k, row0, col0, 0, vector, tid) };
    while k0 < k {
        unsafe { store_tile(a_tile, b_tile, &staged, tid) };
        sync_threads();
        if k0 + BK < k {
            staged = unsafe { load_tile(a, b, m, n, k, row0, col0, k0 + BK, vector, tid) };
        }
        let mut kk = 0;
        while kk < BK {
            // SAFETY: rows < BM, columns < BK (A) and rows < BK, columns < BN (B).
            let (a_frag, b_frag) = unsafe {
                let mut a_frag = [0.0f64; 4];
                let mut b_frag = [0.0f64; 4];
                for i in 0..4u32 {
                    // Negated: the mma's then accumulate C - A B.
                    a_frag[i as usize] =
                        -a_tile.get((warp_row + 8 * i + lane / 4) * A_STRIDE + kk + lane % 4);
                    b_frag[i as usize] = b_tile.get((kk + lane % 4) * B_STRIDE + warp_col + 8 * i + lane / 4);
                }
                (a_frag, b_frag)
            };
            for i in 0..4 {
                for j in 0..4 {
                    acc[i][j] = dmma_m8n8k4(a_frag[i], b_frag[j], acc[i][j]);
                }
            }
            kk += 4;
        }
        sync_threads();
        k0 += BK;
    }

    for i in 0..4u32 {
        for j in 0..4u32 {
            let (row, col) = c_at(i, j);
            if row >= m {
                continue;
            }
            let [v0, v1] = acc[i as usize][j as usize];
            // SAFETY: bounds checked against m and n.
            unsafe {
                let p = c.add((row * ldc + col) as usize);
                if col < n {
                    *p = v0;
                }
                if col + 1 < n {
                    *p.add(1) = v1;
                }
            }
        }
    }
}

/// This thread's 8 values of A (row `tid / 2`, k `k0 + 8 (tid % 2)..+8`) and of B (k row
/// `k0 + tid / 8`, columns `8 (tid % 8)..+8`) for the k-tile at `k0`.
#[inline(always)]
unsafe fn load_tile(
    a: Block<*const f64>,
    b: Block<*const f64>,
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
            let pa = a.at.add((a_row * a.ld + a_k) as usize);
            let pb = b.at.add((b_k * b.ld + b_col) as usize);
            return Staged {
                a: [load_quad(pa), load_quad(pa.add(4))],
                b: [load_quad(pb), load_quad(pb.add(4))],
            };
        }
        let mut s = Staged { a: [[0.0; 4]; 2], b: [[0.0; 4]; 2] };
        for j in 0..8u32 {
            if a_row < m && a_k + j < k {
                s.a[(j / 4) as usize][(j % 4) as usize] = *a.at.add((a_row * a.ld + a_k + j) as usize);
            }
            if b_k < k && b_col + j < n {
                s.b[(j / 4) as usize][(j % 4) as usize] = *b.at.add((b_k * b.ld + b_col + j) as usize);
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

/// C -= A B with SIMT FMAs (A m x k, B k x n, C m x n): a 64 x 64 tile of C per block of 256
/// threads, each thread rows `ty + 16 i` and columns `tx + 16 j` (i, j < 4: neighbouring
/// threads touch neighbouring columns); A (transposed) and B staged 16 values of k at a time.
/// Launch: grid (ceil(n / 64), ceil(m / 64)), 256 threads; shared bytes: 2 * 16 * 64 size_of T.
pub unsafe fn simt<T: Float>(
    m: u32,
    n: u32,
    k: u32,
    a: *const T,
    lda: u32,
    b: *const T,
    ldb: u32,
    c: *mut T,
    ldc: u32,
) {
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
                let va = if a_row < m && a_k < k { *a.add((a_row * lda + a_k) as usize) } else { T::ZERO };
                let vb = if b_k < k && b_col < n { *b.add((b_k * ldb + b_col) as usize) } else { T::ZERO };
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
                    let p = c.add((row * ldc + col) as usize);
                    *p = *p - acc[i as usize][j as usize];
                }
            }
        }
    }
}

f32_f64_kernels! {
    gemm_update_simt_f32, gemm_update_simt_f64 => simt(
        m: u32, n: u32, k: u32, a: *const T, lda: u32, b: *const T, ldb: u32, c: *mut T, ldc: u32);
}

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_update_dmma_f64(
    m: u32,
    n: u32,
    k: u32,
    a: *const f64,
    lda: u32,
    b: *const f64,
    ldb: u32,
    c: *mut f64,
    ldc: u32,
) {
    // SAFETY: the host launches this entry point with the arguments it declares.
    unsafe { dmma(m, n, k, a, lda, b, ldb, c, ldc) }
}
