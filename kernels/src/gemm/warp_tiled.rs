//! Warp-tiled SIMT SGEMM, the step after [`super::blocked`]: a 256 x 128 tile of C per block
//! of 8 warps (4 x 2), each warp a 64 x 64 sub-tile, each thread 16 x 8 values of it in
//! registers (128 accumulators: twice the FMAs per shared load of the 8 x 8 kernel). A and B
//! are staged through shared memory 8 values of k at a time, double-buffered; each k-step's
//! fragments are read while the previous step's FMAs run.
//!
//! Within a warp, lane (ly, lx) = (lane / 8, lane % 8) holds rows `16 g + 4 ly + {0..3}` (g in
//! 0..4) and columns `32 h + 4 lx + {0..3}` (h in 0..2) of the warp's sub-tile, so a fragment
//! read is 4 (A) or 8 (B) distinct consecutive 16-byte vectors: one shared-memory wavefront.
//! f32 only: 128 f64 accumulators would not fit in registers.

use crate::device::Float;
use crate::device::memory::{load_quad, store_quad};
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{block_idx_x, block_idx_y, lane_id, sync_threads, thread_idx_x, warp_id};

use super::blocked::{load_checked, store_checked};

/// `$body` once for each listed index, bound to `$i` as a constant: the accumulators stay in
/// registers only while every index into them is a constant, and LLVM leaves a loop of 128
/// FMAs rolled.
macro_rules! unrolled {
    ($i:ident in [$($n:literal),*] $body:block) => { $( { let $i: usize = $n; $body } )* };
}

const BM: u32 = 256;
const BN: u32 = 128;
const BK: u32 = 8;
/// Shared elements of one buffer (A tile, transposed, then B tile).
const STAGE: u32 = BK * BM + BK * BN;

/// This thread's share of one k-tile between its global load and its shared store: row
/// `tid` of A (8 values of k) and a quad of B (k row `tid / 32`, columns `4 (tid % 32)..`).
struct Staged {
    a: [[f32; 4]; 2],
    b: [f32; 4],
}

/// Launch: grid (ceil(n / 128), ceil(m / 256)), 256 threads; shared bytes: 2 * 3072 * 4.
pub unsafe fn warp_tiled(m: u32, n: u32, k: u32, a: *const f32, b: *const f32, c: *mut f32) {
    let tid = thread_idx_x();
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    // The warp's sub-tile and this lane's place in it.
    let (warp_row, warp_col) = (warp_id() / 2 * 64, warp_id() % 2 * 64);
    let (ly, lx) = (lane_id() / 8, lane_id() % 8);
    let (a_off, b_off) = (warp_row + 4 * ly, warp_col + 4 * lx);
    // Vector accesses need 16-byte aligned rows of A, B and C.
    let aligned = k.is_multiple_of(4) && n.is_multiple_of(4);
    let interior = aligned && row0 + BM <= m && col0 + BN <= n;
    let buffers = shared::dynamic::<f32>();

    let tiles = k.div_ceil(BK);
    // SAFETY (loads and stores of tiles): loads are bounds-checked or the whole tile is inside
    // the matrices; shared indices stay inside the two buffers.
    let mut staged = unsafe { load_tile(a, b, m, n, k, row0, col0, 0, interior, tid) };
    unsafe { store_tile(buffers, 0, &staged, tid) };
    sync_threads();

    let mut acc = [[0.0f32; 8]; 16];
    for tile in 0..tiles {
        let next = tile + 1;
        if next < tiles {
            staged = unsafe { load_tile(a, b, m, n, k, row0, col0, next * BK, interior, tid) };
        }
        let a_tile = buffers.after::<f32>((tile % 2) * STAGE);
        let b_tile = a_tile.after::<f32>(BK * BM);
        let mut frags = unsafe { fragments(a_tile, b_tile, 0, a_off, b_off) };
        for kk in 0..BK {
            let (a_frag, b_frag) = frags;
            if kk + 1 < BK {
                frags = unsafe { fragments(a_tile, b_tile, kk + 1, a_off, b_off) };
            }
            unrolled!(i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
                for j in 0..8 {
                    acc[i][j] = a_frag[i].mul_add(b_frag[j], acc[i][j]);
                }
            });
        }
        if next < tiles {
            unsafe { store_tile(buffers, next % 2, &staged, tid) };
        }
        sync_threads();
    }

    // Row i of `acc` is row 16 (i / 4) + i % 4 of this lane's rows; its 8 values are the
    // column quads at 0 and 32.
    unrolled!(i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
        let values = acc[i];
        let i = i as u32;
        let row = row0 + a_off + 16 * (i / 4) + i % 4;
        if row < m {
            let out = c.wrapping_add((row * n) as usize);
            let col = col0 + b_off;
            // SAFETY: row < m; each store is checked against n.
            unsafe {
                store_checked(out, col, n, aligned, [values[0], values[1], values[2], values[3]]);
                store_checked(out, col + 32, n, aligned, [values[4], values[5], values[6], values[7]]);
            }
        }
    });
}

/// This lane's 16 values of A and 8 of B at step `kk` of the current k-tile (`a_off`,
/// `b_off`: its first row and column in the block tile).
///
/// # Safety
/// `kk` < BK; the tiles are a current buffer's.
#[inline(always)]
unsafe fn fragments(
    a_tile: SharedArray<f32>,
    b_tile: SharedArray<f32>,
    kk: u32,
    a_off: u32,
    b_off: u32,
) -> ([f32; 16], [f32; 8]) {
    let a_at = |g: u32| unsafe { load_quad(a_tile.ptr(kk * BM + a_off + 16 * g)) };
    let b_at = |h: u32| unsafe { load_quad(b_tile.ptr(kk * BN + b_off + 32 * h)) };
    // SAFETY (above): indices below BK * BM and BK * BN, multiples of 4 (16-byte aligned).
    let (a0, a1, a2, a3, b0, b1) = (a_at(0), a_at(1), a_at(2), a_at(3), b_at(0), b_at(1));
    (
        [
            a0[0], a0[1], a0[2], a0[3], a1[0], a1[1], a1[2], a1[3], a2[0], a2[1], a2[2], a2[3], a3[0], a3[1],
            a3[2], a3[3],
        ],
        [b0[0], b0[1], b0[2], b0[3], b1[0], b1[1], b1[2], b1[3]],
    )
}

/// Loads this thread's share of the k-tile at `k0` (see [`Staged`]).
#[inline(always)]
unsafe fn load_tile(
    a: *const f32,
    b: *const f32,
    m: u32,
    n: u32,
    k: u32,
    row0: u32,
    col0: u32,
    k0: u32,
    interior: bool,
    tid: u32,
) -> Staged {
    let a_row = row0 + tid;
    let (b_k, b_col) = (k0 + tid / 32, col0 + 4 * (tid % 32));
    let pa = a.wrapping_add((a_row * k + k0) as usize);
    let pb = b.wrapping_add((b_k * n + b_col) as usize);
    // SAFETY: the vector path runs only for tiles wholly inside aligned matrices; the checked
    // path reads only the values that exist.
    unsafe {
        if interior && k0 + BK <= k {
            return Staged { a: [load_quad(pa), load_quad(pa.add(4))], b: load_quad(pb) };
        }
        let a_valid = |k_start: u32| if a_row < m { k.saturating_sub(k_start).min(4) } else { 0 };
        let b_valid = if b_k < k { n.saturating_sub(b_col).min(4) } else { 0 };
        Staged {
            a: [load_checked(pa, a_valid(k0)), load_checked(pa.wrapping_add(4), a_valid(k0 + 4))],
            b: load_checked(pb, b_valid),
        }
    }
}

/// Writes a staged k-tile into shared buffer `buffer`: A transposed (`a_tile[kk][row]`,
/// consecutive threads on consecutive rows: no bank conflicts), B as is.
#[inline(always)]
unsafe fn store_tile(buffers: SharedArray<f32>, buffer: u32, staged: &Staged, tid: u32) {
    let a_tile = buffers.after::<f32>(buffer * STAGE);
    let b_tile = a_tile.after::<f32>(BK * BM);
    // SAFETY: indices below BK * BM and BK * BN; the B store is 16-byte aligned.
    unsafe {
        for (half, values) in staged.a.iter().enumerate() {
            for (j, &v) in values.iter().enumerate() {
                a_tile.set((4 * half as u32 + j as u32) * BM + tid, v);
            }
        }
        store_quad(b_tile.ptr((tid / 32) * BN + 4 * (tid % 32)), staged.b);
    }
}

#[unsafe(no_mangle)]
pub unsafe extern "ptx-kernel" fn gemm_warp_tiled_f32(
    m: u32,
    n: u32,
    k: u32,
    a: *const f32,
    b: *const f32,
    c: *mut f32,
) {
    // SAFETY: the host launches this entry point with the arguments it declares.
    unsafe { warp_tiled(m, n, k, a, b, c) }
}
