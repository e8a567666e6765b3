//! Register-blocked SIMT GEMM: a 128 x 128 tile of C per block of 256 threads, each thread an
//! 8 x 8 sub-tile held in registers; A and B staged through shared memory 8 columns/rows of
//! k at a time, double-buffered (the next tile's global loads are in flight while the current
//! one is multiplied), with 16-byte vector loads and stores where the shape allows.
//!
//! Shared layout: A transposed (`a_tile[kk][row]`) and B as is (`b_tile[kk][col]`), so a
//! thread reads its 8 rows and 8 columns of one kk as vectors. A thread's rows are
//! `4 ty + {0..3}` and `64 + 4 ty + {0..3}` (columns likewise with tx): consecutive threads read
//! consecutive 16-byte vectors, free of bank conflicts.
//!
//! [`wide`] is the next step for f32, cuBLAS's SGEMM shape: a 256 x 128 tile, 16 x 8 values per
//! thread (twice the products per shared-memory read), one block per SM.

use abi::gemm::{
    BLOCKED_K as BK, BLOCKED_TILE, BLOCKED_WIDE_A_STRIDE as WIDE_AS, BLOCKED_WIDE_M, BLOCKED_WIDE_N,
};

use crate::device::Float;
use crate::device::memory::{load_nc, load_quad, store_quad};
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{block_idx_x, block_idx_y, lane_id, sync_threads, thread_idx_x, warp_id};

const BM: u32 = BLOCKED_TILE;
const BN: u32 = BLOCKED_TILE;
// The k-steps of a tile are written out (`unrolled!`, kk in 0..8).
const _: () = assert!(BK == 8);
const HALF: u32 = 64;
/// Shared elements of one buffer (A tile then B tile).
const STAGE: u32 = BK * BM + BK * BN;

/// This thread's share of one k-tile, between its global load and its shared store.
struct Staged<T> {
    a: [T; 4],
    b: [T; 4],
}

/// Launch: grid (ceil(n / 128), ceil(m / 128)), 256 threads; shared bytes: 2 * 2048 size_of T.
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn blocked<T: Float>(m: u32, n: u32, k: u32, a: *const T, b: *const T, c: *mut T) {
    let tid = thread_idx_x();
    let (tx, ty) = (tid % 16, tid / 16);
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // Vector accesses need 16-byte aligned rows of A, B and C.
    let aligned = k.is_multiple_of(4) && n.is_multiple_of(4);
    let interior = row0 + BM <= m && col0 + BN <= n;
    let buffers = shared::dynamic::<T>();

    let tiles = k.div_ceil(BK);
    let mut staged = unsafe { load_tile(a, b, m, n, k, row0, col0, 0, aligned && interior, tid) };
    unsafe { store_tile(buffers, 0, &staged, tid) };
    sync_threads();

    let mut acc = [[T::ZERO; 8]; 8];
    for tile in 0..tiles {
        let current = tile % 2;
        let next = tile + 1;
        if next < tiles {
            // SAFETY: loads are bounds-checked or the whole tile is inside the matrices.
            staged = unsafe { load_tile(a, b, m, n, k, row0, col0, next * BK, aligned && interior, tid) };
        }
        let a_tile = buffers.after::<T>(current * STAGE);
        let b_tile = a_tile.after::<T>(BK * BM);
        unrolled!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
            let (a_frag, b_frag) = unsafe { fragments(a_tile, b_tile, kk as u32, tx, ty) };
            for i in 0..8 {
                for j in 0..8 {
                    acc[i][j] = a_frag[i].mul_add(b_frag[j], acc[i][j]);
                }
            }
        });
        if next < tiles {
            unsafe { store_tile(buffers, next % 2, &staged, tid) };
        }
        sync_threads();
    }

    // Write the 8 x 8 sub-tile: rows 4 ty + i (+64), columns 4 tx + j (+64). Every index into
    // `acc` is a constant, so it stays in registers.
    let store = |i: u32, values: [T; 8]| {
        let row = row0 + (i / 4) * HALF + 4 * ty + i % 4;
        if row < m {
            let col = col0 + 4 * tx;
            let out = c.wrapping_add((row * n) as usize);
            // SAFETY: row < m; each store is checked against n.
            unsafe {
                store_checked(out, col, n, aligned, [values[0], values[1], values[2], values[3]]);
                store_checked(out, col + HALF, n, aligned, [values[4], values[5], values[6], values[7]]);
            }
        }
    };
    store(0, acc[0]);
    store(1, acc[1]);
    store(2, acc[2]);
    store(3, acc[3]);
    store(4, acc[4]);
    store(5, acc[5]);
    store(6, acc[6]);
    store(7, acc[7]);
}

/// Shared floats of one buffer of `wide` (A's tile then B's).
const WIDE_STAGE: u32 = BK * WIDE_AS + BK * BLOCKED_WIDE_N;

/// This thread's share of one k-tile of `wide`: two rows of A (`tid / 2` and `128 + tid / 2`,
/// k `4 (tid % 2)..`) and four columns of B (k row `tid / 32`, columns `4 (tid % 32)..`).
struct WideStaged {
    a: [[f32; 4]; 2],
    b: [f32; 4],
}

/// C = A B in f32 as [`blocked`], on a 256 x 128 tile of C per block of 256 threads: warps of
/// 64 x 64 in 4 x 2, each lane 16 rows (`16 q + 4 (lane / 8) + {0..3}` of its warp's, q < 4) and
/// 8 columns (`32 h + 4 (lane % 8) + {0..3}`, h < 2), so that a k-step's 24 values come in six
/// 16-byte shared reads for 128 products. Launch: grid (ceil(n / 128), ceil(m / 256)), 256
/// threads; shared bytes: `abi::gemm::blocked_wide_shared_bytes()`.
#[gpu::kernel]
pub unsafe fn wide(m: u32, n: u32, k: u32, a: *const f32, b: *const f32, c: *mut f32) {
    let (tid, warp, lane) = (thread_idx_x(), warp_id(), lane_id());
    // This lane's first row and column in the tile.
    let (row_in, col_in) = ((warp / 2) * 64 + 4 * (lane / 8), (warp % 2) * 64 + 4 * (lane % 8));
    let (row0, col0) = (block_idx_y() * BLOCKED_WIDE_M, block_idx_x() * BLOCKED_WIDE_N);
    // Vector accesses need 16-byte aligned rows of A, B and C.
    let aligned = k.is_multiple_of(4) && n.is_multiple_of(4);
    let interior = aligned && row0 + BLOCKED_WIDE_M <= m && col0 + BLOCKED_WIDE_N <= n;
    let buffers = shared::dynamic::<f32>();
    let tiles = k.div_ceil(BK);

    // SAFETY: loads are bounds-checked or the whole tile is inside the matrices.
    let mut staged = unsafe { load_wide_tile(a, b, (m, n, k), (row0, col0), 0, interior, tid) };
    // SAFETY: buffer 0 of the launch's shared memory, read by no one yet.
    unsafe { store_wide_tile(buffers, 0, &staged, tid) };
    sync_threads();

    // This lane's 16 values of A and 8 of B at step `kk` of the k-tile in `buffer`.
    let fragments = |buffer: u32, kk: u32| {
        let a_tile = buffers.after::<f32>(buffer * WIDE_STAGE);
        let b_tile = a_tile.after::<f32>(BK * WIDE_AS);
        // SAFETY: inside the buffer; offsets are multiples of 4 floats.
        unsafe {
            let a4 = |q: u32| load_quad(a_tile.ptr(kk * WIDE_AS + row_in + 16 * q));
            let b4 = |h: u32| load_quad(b_tile.ptr(kk * BLOCKED_WIDE_N + col_in + 32 * h));
            ([a4(0), a4(1), a4(2), a4(3)], [b4(0), b4(1)])
        }
    };
    let mut acc = [[0.0f32; 8]; 16];
    let mut frag = fragments(0, 0);
    for tile in 0..tiles {
        let next = tile + 1;
        if next < tiles {
            // SAFETY: as above.
            staged = unsafe { load_wide_tile(a, b, (m, n, k), (row0, col0), next * BK, interior, tid) };
        }
        // Each step's products run on fragments loaded the step before. The last step stores
        // the next tile and passes the barrier first, so that the next tile's first fragments
        // load while its products run, not after them.
        unrolled!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
            let (a_frag, b_frag) = frag;
            if kk < 7 {
                frag = fragments(tile % 2, kk as u32 + 1);
            } else if next < tiles {
                // SAFETY: the other buffer, whose last fragments every thread loaded before
                // the previous barrier.
                unsafe { store_wide_tile(buffers, next % 2, &staged, tid) };
                sync_threads();
                frag = fragments(next % 2, 0);
            }
            // Column by column, the rows there and back: ptxas's registers for this order left
            // fewer dispatch stalls than row by row (PERF.md).
            unrolled!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
                unrolled!(step in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                    let i = if j.is_multiple_of(2) { step } else { 15 - step };
                    acc[i][j] = a_frag[i / 4][i % 4].mul_add(b_frag[j / 4][j % 4], acc[i][j]);
                });
            });
        });
    }

    // Row i of the sub-tile: 16 (i / 4) + i % 4 past the lane's first; its 8 columns in two
    // vectors 32 apart. (Unrolled, so that acc's indices are constants.)
    unrolled!(i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
        let row = row0 + row_in + 16 * (i as u32 / 4) + i as u32 % 4;
        if row < m {
            let (out, col) = (c.wrapping_add((row * n) as usize), col0 + col_in);
            let v = acc[i];
            // SAFETY: row < m; each store is checked against n.
            unsafe {
                store_checked(out, col, n, aligned, [v[0], v[1], v[2], v[3]]);
                store_checked(out, col + 32, n, aligned, [v[4], v[5], v[6], v[7]]);
            }
        }
    });
}

/// Loads this thread's share ([`WideStaged`]) of the k-tile at `k0` of `wide`.
#[inline(always)]
unsafe fn load_wide_tile(
    a: *const f32,
    b: *const f32,
    (m, n, k): (u32, u32, u32),
    (row0, col0): (u32, u32),
    k0: u32,
    interior: bool,
    tid: u32,
) -> WideStaged {
    let (a_row, a_k) = (row0 + tid / 2, k0 + 4 * (tid % 2));
    let (b_k, b_col) = (k0 + tid / 32, col0 + 4 * (tid % 32));
    let a_at = |row: u32| a.wrapping_add((row * k + a_k) as usize);
    let b_at = b.wrapping_add((b_k * n + b_col) as usize);
    // SAFETY: the vector path runs only for tiles wholly inside aligned matrices; the scalar
    // path checks each element.
    unsafe {
        if interior && k0 + BK <= k {
            return WideStaged {
                a: [load_quad(a_at(a_row)), load_quad(a_at(a_row + 128))],
                b: load_quad(b_at),
            };
        }
        let a_valid = |row: u32| if row < m { k.saturating_sub(a_k).min(4) } else { 0 };
        let b_valid = if b_k < k { n.saturating_sub(b_col).min(4) } else { 0 };
        WideStaged {
            a: [
                load_checked(a_at(a_row), a_valid(a_row)),
                load_checked(a_at(a_row + 128), a_valid(a_row + 128)),
            ],
            b: load_checked(b_at, b_valid),
        }
    }
}

/// Writes a staged k-tile of `wide` into shared buffer `buffer`: A transposed (rows of
/// WIDE_AS), B as is.
#[inline(always)]
unsafe fn store_wide_tile(buffers: SharedArray<f32>, buffer: u32, staged: &WideStaged, tid: u32) {
    let a_tile = buffers.after::<f32>(buffer * WIDE_STAGE);
    let b_tile = a_tile.after::<f32>(BK * WIDE_AS);
    let (row, kk) = (tid / 2, 4 * (tid % 2));
    // SAFETY: indices below BK * WIDE_AS and BK * BLOCKED_WIDE_N; the B store is 16-byte
    // aligned.
    unsafe {
        for (half, values) in staged.a.iter().enumerate() {
            for (i, &v) in values.iter().enumerate() {
                a_tile.set((kk + i as u32) * WIDE_AS + row + 128 * half as u32, v);
            }
        }
        store_quad(b_tile.ptr((tid / 32) * BLOCKED_WIDE_N + 4 * (tid % 32)), staged.b);
    }
}

/// This thread's 8 values of A (rows `4 ty + {0..3}`, `64 + 4 ty + {0..3}`) and of B (columns
/// likewise with `tx`) at step `kk` of the current k-tile.
///
/// # Safety
/// `kk` < BK; the tiles are a current buffer's.
#[inline(always)]
unsafe fn fragments<T: Float>(
    a_tile: SharedArray<T>,
    b_tile: SharedArray<T>,
    kk: u32,
    tx: u32,
    ty: u32,
) -> ([T; 8], [T; 8]) {
    // SAFETY: indices below BK * BM and BK * BN, 16-byte aligned (multiples of 4).
    let (a_lo, a_hi, b_lo, b_hi) = unsafe {
        (
            load_quad(a_tile.ptr(kk * BM + 4 * ty)),
            load_quad(a_tile.ptr(kk * BM + HALF + 4 * ty)),
            load_quad(b_tile.ptr(kk * BN + 4 * tx)),
            load_quad(b_tile.ptr(kk * BN + HALF + 4 * tx)),
        )
    };
    (
        [a_lo[0], a_lo[1], a_lo[2], a_lo[3], a_hi[0], a_hi[1], a_hi[2], a_hi[3]],
        [b_lo[0], b_lo[1], b_lo[2], b_lo[3], b_hi[0], b_hi[1], b_hi[2], b_hi[3]],
    )
}

/// Stores four values at columns `col..col + 4` of the row starting at `row`: one vector store
/// when they all fit and rows are aligned, else each column checked against `n`.
#[inline(always)]
unsafe fn store_checked<T: Float>(row: *mut T, col: u32, n: u32, aligned: bool, values: [T; 4]) {
    // SAFETY: the caller passes a row of n elements; columns are checked.
    unsafe {
        let out = row.add(col as usize);
        if aligned && col + 4 <= n {
            store_quad(out, values);
        } else {
            let [v0, v1, v2, v3] = values;
            if col < n {
                *out = v0;
            }
            if col + 1 < n {
                *out.add(1) = v1;
            }
            if col + 2 < n {
                *out.add(2) = v2;
            }
            if col + 3 < n {
                *out.add(3) = v3;
            }
        }
    }
}

/// Four values from `p`, of which the first `valid` exist (the rest are zero).
///
/// Read with `load_nc` (inline assembly), not plain loads: LLVM merged a plain load of the
/// fourth value with the vector path's load of the same address, and the vector path then
/// reloaded that value after its vector load, waiting on it at the top of every k-tile (a
/// sixth of all stall cycles: PERF.md).
#[inline(always)]
unsafe fn load_checked<T: Float>(p: *const T, valid: u32) -> [T; 4] {
    // SAFETY: only the first `valid` values are read; A and B are read-only in the kernel.
    unsafe {
        [
            if valid > 0 { load_nc(p) } else { T::ZERO },
            if valid > 1 { load_nc(p.add(1)) } else { T::ZERO },
            if valid > 2 { load_nc(p.add(2)) } else { T::ZERO },
            if valid > 3 { load_nc(p.add(3)) } else { T::ZERO },
        ]
    }
}

/// Loads this thread's four elements of A (row `tid / 2`, k `k0 + 4 (tid % 2)..`) and of B
/// (k row `k0 + tid / 32`, columns `4 (tid % 32)..`) for the k-tile at `k0`.
#[inline(always)]
unsafe fn load_tile<T: Float>(
    a: *const T,
    b: *const T,
    m: u32,
    n: u32,
    k: u32,
    row0: u32,
    col0: u32,
    k0: u32,
    interior: bool,
    tid: u32,
) -> Staged<T> {
    let (a_row, a_k) = (row0 + tid / 2, k0 + 4 * (tid % 2));
    let (b_k, b_col) = (k0 + tid / 32, col0 + 4 * (tid % 32));
    // SAFETY: the vector path runs only for tiles wholly inside aligned matrices; the scalar
    // path checks each element.
    unsafe {
        if interior && k0 + BK <= k {
            return Staged {
                a: load_quad(a.add((a_row * k + a_k) as usize)),
                b: load_quad(b.add((b_k * n + b_col) as usize)),
            };
        }
        let a_valid = if a_row < m { k.saturating_sub(a_k).min(4) } else { 0 };
        let b_valid = if b_k < k { n.saturating_sub(b_col).min(4) } else { 0 };
        Staged {
            a: load_checked(a.wrapping_add((a_row * k + a_k) as usize), a_valid),
            b: load_checked(b.wrapping_add((b_k * n + b_col) as usize), b_valid),
        }
    }
}

/// Writes a staged k-tile into shared buffer `buffer`: A transposed, B as is.
#[inline(always)]
unsafe fn store_tile<T: Float>(buffers: SharedArray<T>, buffer: u32, staged: &Staged<T>, tid: u32) {
    let a_tile = buffers.after::<T>(buffer * STAGE);
    let b_tile = a_tile.after::<T>(BK * BM);
    let (a_row, a_k) = (tid / 2, 4 * (tid % 2));
    // SAFETY: indices below BK * BM and BK * BN; the B store is 16-byte aligned.
    unsafe {
        let [a0, a1, a2, a3] = staged.a;
        a_tile.set(a_k * BM + a_row, a0);
        a_tile.set((a_k + 1) * BM + a_row, a1);
        a_tile.set((a_k + 2) * BM + a_row, a2);
        a_tile.set((a_k + 3) * BM + a_row, a3);
        store_quad(b_tile.ptr((tid / 32) * BN + 4 * (tid % 32)), staged.b);
    }
}
