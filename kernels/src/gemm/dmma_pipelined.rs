//! f64 GEMM at Hopper's tensor-core rate (sm_90 only): `mma.sync` m16n8k8 on 128 x 64 block
//! tiles, fed by a 3-stage `cp.async` pipeline from global to shared memory.
//!
//! Against [`super::dmma16`]: the block tile is twice as large, which cuts the L2 traffic per
//! flop by a third; each warp owns a 64 x 32 tile (4 x 4 mma tiles, 64 accumulators per lane);
//! the copies of the next two k-tiles are in flight while the warps compute on the current
//! one, without holding them in registers (so two blocks of 227 registers a thread fit an SM);
//! and each mma does k = 8, half as many tensor-core instructions as m16n8k4.
//!
//! Shared rows are padded by 4 doubles (A: BK + 4, B: BN + 4, both = 4 mod 16): the 16 lanes of
//! each half-warp's 8-byte fragment reads (A: 4 rows x 4 k, B: 4 k x 4 columns) fall in
//! distinct banks, and rows stay 16-byte aligned for the copies.
//!
//! Blocks run in a grouped order (down [`GROUP_ROWS`] tile rows, then right), so the blocks
//! resident together share A's row panels and B's column panels in L2.
//!
//! The tile shape is a set of const parameters of [`pipelined`], set in `abi::gemm`: the
//! fastest of the shapes measured (PERF.md).

use crate::device::memory::{load_pair, store_pair};
use crate::device::mma::dmma_m16n8k8;
use crate::device::pipeline::{self, copy_8, copy_16};
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{block_idx_x, lane_id, sync_threads, thread_idx_x, warp_id};

/// Block-tile rows of one group in the launch order.
const GROUP_ROWS: u32 = 8;

/// Where a block's k-tiles come from: the matrices, the block's first row and column, and
/// whether A's and B's rows allow 16-byte copies (even row length, 16-byte aligned base).
#[derive(Clone, Copy)]
struct Source {
    a: *const f64,
    b: *const f64,
    m: u32,
    n: u32,
    k: u32,
    row0: u32,
    col0: u32,
    a_vector: bool,
    b_vector: bool,
}

/// The shape of one instantiation; every field is a compile-time constant after inlining.
#[derive(Clone, Copy)]
struct Shape {
    bm: u32,
    bn: u32,
    bk: u32,
    threads: u32,
}

impl Shape {
    const fn a_stride(self) -> u32 {
        self.bk + 4
    }
    const fn b_stride(self) -> u32 {
        self.bn + 4
    }
    /// Doubles of one stage: the A tile (bm x bk) then the B tile (bk x bn), both padded.
    const fn stage_len(self) -> u32 {
        self.bm * self.a_stride() + self.bk * self.b_stride()
    }
    /// Row length of the C tile staged for the stores: = 8 mod 16, so that the 8 lanes of
    /// each quarter-warp's 16-byte fragment stores (2 rows x 4 pairs) hit distinct banks.
    const fn c_stride(self) -> u32 {
        self.bn + 8
    }
}

/// C = A B with WARPS_M x WARPS_N warps of MT x NT mma tiles (16 x 8) each: a block tile of
/// BM = 16 MT WARPS_M by BN = 8 NT WARPS_N, k-tiles of BK (a multiple of 8), STAGES >= 2
/// stages. Launch: grid (ceil(m / BM) * ceil(n / BN)) blocks (1D), 32 WARPS_M WARPS_N
/// threads; shared bytes: 8 STAGES (BM (BK + 4) + BK (BN + 4)).
#[inline(always)]
unsafe fn pipelined<
    const WARPS_M: u32,
    const WARPS_N: u32,
    const MT: usize,
    const NT: usize,
    const BK: u32,
    const STAGES: u32,
>(
    m: u32,
    n: u32,
    k: u32,
    a: *const f64,
    b: *const f64,
    c: *mut f64,
) {
    let shape = const {
        let shape = Shape {
            bm: 16 * MT as u32 * WARPS_M,
            bn: 8 * NT as u32 * WARPS_N,
            bk: BK,
            threads: 32 * WARPS_M * WARPS_N,
        };
        assert!(BK.is_multiple_of(8) && STAGES >= 2, "k-tiles of whole mma steps, 2 stages or more");
        assert!(shape.bm * shape.c_stride() <= STAGES * shape.stage_len(), "the C tile fits in the stages");
        let pairs = (shape.bm * BK / 2, BK * shape.bn / 2);
        assert!(
            pairs.0.is_multiple_of(shape.threads) && pairs.1.is_multiple_of(shape.threads),
            "whole copies per thread"
        );
        shape
    };
    let (tile_row, tile_col) = tile_of_block(m.div_ceil(shape.bm), n.div_ceil(shape.bn));
    let source = Source {
        a,
        b,
        m,
        n,
        k,
        row0: tile_row * shape.bm,
        col0: tile_col * shape.bn,
        a_vector: k.is_multiple_of(2) && (a as usize).is_multiple_of(16),
        b_vector: n.is_multiple_of(2) && (b as usize).is_multiple_of(16),
    };
    let tid = thread_idx_x();
    let (g, t) = (lane_id() / 4, lane_id() % 4);
    let warp_row = warp_id() / WARPS_N * 16 * MT as u32;
    let warp_col = warp_id() % WARPS_N * 8 * NT as u32;
    let tiles = shared::dynamic::<f64>();
    let stage = |s: u32| {
        let a_tile = tiles.after::<f64>(s * shape.stage_len());
        (a_tile, a_tile.after::<f64>(shape.bm * shape.a_stride()))
    };
    let k_tiles = k.div_ceil(BK);

    // Prologue: the first STAGES - 1 k-tiles in flight, one group each (empty past the end).
    for s in 0..STAGES - 1 {
        if s < k_tiles {
            let (a_tile, b_tile) = stage(s);
            // SAFETY: stage s lies inside the shared bytes the host gives; nothing reads it yet.
            unsafe { source.load(shape, a_tile, b_tile, s * BK, tid) };
        }
        pipeline::commit();
    }

    let mut acc = [[[0.0f64; 4]; NT]; MT];
    let (mut read, mut write) = (0, STAGES - 1);
    for kt in 0..k_tiles {
        // k-tile kt has landed (this thread's copies), and after the barrier everyone's has;
        // the barrier also means every warp is done with k-tile kt - 1, whose stage is `write`.
        pipeline::wait_pending(STAGES - 2);
        sync_threads();
        let (a_tile, b_tile) = stage(read);
        let warp_tiles = WarpTiles { a_tile, b_tile, shape, row: warp_row + g, col: warp_col + g, t };
        // SAFETY: k-step 0 of the stage, whose copies have landed; warp tiles inside the block's.
        unsafe { warp_tiles.mma_step(&mut acc, 0) };
        // k-tile kt + STAGES - 1 goes out once the tensor cores have work queued.
        if kt + STAGES - 1 < k_tiles {
            let (a_next, b_next) = stage(write);
            // SAFETY: a stage inside the shared bytes, read by no warp until a later barrier.
            unsafe { source.load(shape, a_next, b_next, (kt + STAGES - 1) * BK, tid) };
        }
        pipeline::commit();
        for step in 1..BK / 8 {
            // SAFETY: the stage's other k-steps, 8 step + 8 <= BK.
            unsafe { warp_tiles.mma_step(&mut acc, 8 * step) };
        }
        read = if read + 1 == STAGES { 0 } else { read + 1 };
        write = if write + 1 == STAGES { 0 } else { write + 1 };
    }

    // The block's C tile goes through shared memory (the stages are free once every warp is
    // past the last k-tile): fragments in, then coalesced, bounds-checked rows out.
    sync_threads();
    let c_tile = tiles;
    let c_stride = shape.c_stride();
    // Lane (g, t) holds C[16i + g][8j + 2t + {0, 1}] and the same 8 rows down.
    let fragment = (warp_row + g) * c_stride + warp_col + 2 * t;
    for (i, row_tiles) in acc.iter().enumerate() {
        for (j, &[d0, d1, d2, d3]) in row_tiles.iter().enumerate() {
            let at = fragment + 16 * i as u32 * c_stride + 8 * j as u32;
            // SAFETY: rows < BM, columns < BN of the C tile, which fits in the stages (checked
            // at compile time); even indices, so 16-byte aligned.
            unsafe {
                store_pair(c_tile.ptr(at), [d0, d1]);
                store_pair(c_tile.ptr(at + 8 * c_stride), [d2, d3]);
            }
        }
    }
    sync_threads();
    // SAFETY: every store is checked against m and n; the C tile was written above.
    unsafe { store_tile(c_tile, shape, c, m, n, source.row0, source.col0, tid) };
}

/// Copies the BM x BN tile of C at (row0, col0) from `c_tile` (rows of `shape.c_stride()`) to
/// C, pairs of consecutive columns per thread (coalesced), the parts inside m x n only.
///
/// # Safety
/// `c_tile` holds the tile in shared memory; `c` is an m x n matrix.
#[inline(always)]
unsafe fn store_tile(
    c_tile: SharedArray<f64>,
    shape: Shape,
    c: *mut f64,
    m: u32,
    n: u32,
    row0: u32,
    col0: u32,
    tid: u32,
) {
    let pairs = shape.bn / 2;
    let vector = n.is_multiple_of(2) && (c as usize).is_multiple_of(16);
    for p in (tid..shape.bm * pairs).step_by(shape.threads as usize) {
        let (r, cc) = (p / pairs, p % pairs * 2);
        let (row, col) = (row0 + r, col0 + cc);
        if row >= m || col >= n {
            continue;
        }
        // SAFETY: (row, col) is inside C, and so is col + 1 where it is stored; a vector store
        // has an even col and n, so a 16-byte aligned address.
        unsafe {
            let [v0, v1] = load_pair(c_tile.ptr(r * shape.c_stride() + cc));
            let out = c.add((row * n + col) as usize);
            if vector {
                store_pair(out, [v0, v1]);
            } else {
                *out = v0;
                if col + 1 < n {
                    *out.add(1) = v1;
                }
            }
        }
    }
}

/// One warp's view of a stage: its rows of A's tile and columns of B's, for lane (g, t).
#[derive(Clone, Copy)]
struct WarpTiles {
    a_tile: SharedArray<f64>,
    b_tile: SharedArray<f64>,
    shape: Shape,
    /// The lane's first row of A (warp row + g) and column of B (warp column + g).
    row: u32,
    col: u32,
    t: u32,
}

impl WarpTiles {
    /// acc[i][j] += the warp's A rows 16i.. times B columns 8j.. over k-step `kk..kk + 8`.
    ///
    /// # Safety
    /// `kk + 8 <= BK`, and the warp's tile rows and columns lie inside the stage's tiles.
    #[inline(always)]
    unsafe fn mma_step<const MT: usize, const NT: usize>(self, acc: &mut [[[f64; 4]; NT]; MT], kk: u32) {
        let (a_stride, b_stride, t) = (self.shape.a_stride(), self.shape.b_stride(), self.t);
        // SAFETY: rows < BM and columns kk + t (+ 4) < BK of A's tile, by the contract.
        let a_at = |row: u32, col: u32| unsafe { self.a_tile.get((self.row + row) * a_stride + kk + col) };
        // SAFETY: rows kk + t (+ 4) < BK and columns < BN of B's tile, by the contract.
        let b_at = |row: u32, col: u32| unsafe { self.b_tile.get((kk + row) * b_stride + self.col + col) };
        let a_frag: [[f64; 4]; MT] = core::array::from_fn(|i| {
            let row = 16 * i as u32;
            [a_at(row, t), a_at(row + 8, t), a_at(row, t + 4), a_at(row + 8, t + 4)]
        });
        let b_frag: [[f64; 2]; NT] =
            core::array::from_fn(|j| [b_at(t, 8 * j as u32), b_at(t + 4, 8 * j as u32)]);
        for i in 0..MT {
            for j in 0..NT {
                acc[i][j] = dmma_m16n8k8(a_frag[i], b_frag[j], acc[i][j]);
            }
        }
    }
}

/// The (row, column) of the block tile this block computes, in the grouped order: block ids
/// go down a group of [`GROUP_ROWS`] tile rows, then one tile column right.
#[inline(always)]
fn tile_of_block(tile_rows: u32, tile_cols: u32) -> (u32, u32) {
    let id = block_idx_x();
    let per_group = GROUP_ROWS * tile_cols;
    let first_row = id / per_group * GROUP_ROWS;
    let rows = (tile_rows - first_row).min(GROUP_ROWS);
    let within = id % per_group;
    (first_row + within % rows, within / rows)
}

impl Source {
    /// Queues this thread's share of the copies of the k-tile at `k0`: A[row0.., k0..k0 + BK]
    /// into `a_tile` and B[k0..k0 + BK, col0..] into `b_tile`, zeros outside the matrices.
    ///
    /// # Safety
    /// Both tiles lie inside the dynamic shared memory, with the padded strides of `shape`.
    #[inline(always)]
    unsafe fn load(
        self,
        shape: Shape,
        a_tile: SharedArray<f64>,
        b_tile: SharedArray<f64>,
        k0: u32,
        tid: u32,
    ) {
        let Source { a, b, m, n, k, row0, col0, a_vector, b_vector } = self;
        let a_part =
            Part { matrix: a, rows: m, cols: k, row0, col0: k0, tile_rows: shape.bm, tile_cols: shape.bk };
        let b_part =
            Part { matrix: b, rows: k, cols: n, row0: k0, col0, tile_rows: shape.bk, tile_cols: shape.bn };
        // SAFETY: the tiles are as the caller promises; vector copies only where rows allow.
        unsafe {
            if a_vector {
                a_part.copy::<true>(a_tile, shape.a_stride(), tid, shape.threads);
            } else {
                a_part.copy::<false>(a_tile, shape.a_stride(), tid, shape.threads);
            }
            if b_vector {
                b_part.copy::<true>(b_tile, shape.b_stride(), tid, shape.threads);
            } else {
                b_part.copy::<false>(b_tile, shape.b_stride(), tid, shape.threads);
            }
        }
    }
}

/// The part of a row-major `rows x cols` matrix that one tile holds: `tile_rows x tile_cols`
/// from (`row0`, `col0`), zeros where it reaches past the matrix.
#[derive(Clone, Copy)]
struct Part {
    matrix: *const f64,
    rows: u32,
    cols: u32,
    row0: u32,
    col0: u32,
    tile_rows: u32,
    tile_cols: u32,
}

impl Part {
    /// Queues this thread's copies of the part into `tile` (rows of `stride` doubles): pairs of
    /// doubles, consecutive threads on consecutive pairs of a row (coalesced); one 16-byte copy
    /// per pair if `VECTOR`, else two of 8 bytes.
    ///
    /// # Safety
    /// `tile` holds `tile_rows` rows of `stride` (even) doubles in shared memory, 16-byte
    /// aligned; with `VECTOR`, `cols` is even and the matrix 16-byte aligned.
    #[inline(always)]
    unsafe fn copy<const VECTOR: bool>(self, tile: SharedArray<f64>, stride: u32, tid: u32, threads: u32) {
        let pairs = self.tile_cols / 2;
        for i in 0..self.tile_rows * pairs / threads {
            let p = tid + i * threads;
            let (r, c) = (p / pairs, p % pairs * 2);
            let (row, col) = (self.row0 + r, self.col0 + c);
            let valid = if row < self.rows { self.cols.saturating_sub(col).min(2) } else { 0 };
            let offset = row * self.cols + col;
            // SAFETY: the `valid` doubles at (row, col) are inside the matrix (row < rows,
            // col + valid <= cols); an empty copy names the base and reads nothing. The
            // destination pair is inside the tile, 16-byte aligned (even stride and column),
            // and so is the source of a vector copy (even cols and col).
            unsafe {
                if VECTOR {
                    let src = if valid > 0 { self.matrix.add(offset as usize) } else { self.matrix };
                    copy_16(tile, r * stride + c, src, 8 * valid);
                } else {
                    for j in 0..2 {
                        let src =
                            if j < valid { self.matrix.add((offset + j) as usize) } else { self.matrix };
                        copy_8(tile, r * stride + c + j, src, if j < valid { 8 } else { 0 });
                    }
                }
            }
        }
    }
}

/// C = A B for row-major f64 matrices of any shape (A m x k, B k x n, C m x n) at the shape of
/// `abi::gemm::PIPELINED_*`: block tiles of 128 x 64, 4 warps (2 x 2) of 64 x 32, k-tiles of 16,
/// 3 stages. Launch: grid (ceil(m / 128) * ceil(n / 64), 1, 1), 128 threads;
/// `abi::gemm::PIPELINED_SHARED_BYTES` (87 552) of dynamic shared memory, which needs the
/// raised shared-memory limit.
#[gpu::kernel]
pub unsafe fn dmma_pipelined(m: u32, n: u32, k: u32, a: *const f64, b: *const f64, c: *mut f64) {
    use abi::gemm::*;
    // SAFETY: the caller's arguments, for this shape.
    unsafe {
        pipelined::<
            PIPELINED_WARPS_M,
            PIPELINED_WARPS_N,
            PIPELINED_MT,
            PIPELINED_NT,
            PIPELINED_K,
            PIPELINED_STAGES,
        >(m, n, k, a, b, c)
    }
}
