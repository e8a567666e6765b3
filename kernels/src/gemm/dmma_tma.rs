//! f64 GEMM fed by the tensor memory accelerator (the sm_90a module, whose PTX ISA has it):
//! the tiles and the `mma.sync` m16n8k8 DMMAs of [`super::pipelined`] (128 x 64 block tiles,
//! 2 x 2 warps of 64 x 32, k-tiles of 16), but thread 0 queues each k-tile's copies, two boxes,
//! behind an mbarrier, so the warps hold no copy addresses or bounds. The registers that frees
//! hold a second k-step of fragments: each k-step's fragments load while the previous k-step's
//! DMMAs run, as cuBLAS's DGEMM does, where the pipelined kernel's first DMMA of every k-step
//! waits for its loads.
//!
//! Shared memory per stage: A's tile as 128 rows of 128 bytes in the 128-byte swizzle (16-byte
//! chunk c of row r at chunk c ^ (r % 8)), then B's tile as groups of `DMMA_TMA_B_GROUP` columns,
//! each a k-tile of rows of 64 bytes. The lanes' fragment reads then touch each bank twice, the
//! least for 256 bytes. B comes in one box of a three-dimensional map (column in group, row,
//! group), not a box per group: the copies of eight boxes a stage arrived late (PERF.md).
//!
//! The tiles past the last full wave (two blocks an SM) would leave most SMs idle in that
//! wave: [`split_tail`] gives each of them to several blocks, a share of the k-tiles each,
//! and [`sum_pieces`] adds their partial tiles.

use abi::StridedMut;
use abi::gemm::{DMMA_TMA_B_GROUP as GROUP, DMMA_TMA_STAGES as STAGES, PipelinedShape, dmma_tma_stage_bytes};

use super::pipelined::{Epilogue, prefetch_tile, store_block_tile, tile_in_order, tile_of_block};
use crate::device::mma::dmma_m16n8k8;
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{block_dim_x, block_idx_x, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::device::tma::{self, Barrier};
use crate::device::warp;

const SHAPE: PipelinedShape = PipelinedShape::of(8);
const MT: usize = abi::gemm::PIPELINED_MT;
const NT: usize = abi::gemm::PIPELINED_NT;
/// Doubles of one stage, of A's tile in it, and of one group of B's columns.
const STAGE_LEN: u32 = dmma_tma_stage_bytes() / 8;
const A_LEN: u32 = SHAPE.tile_m * SHAPE.k;
const GROUP_LEN: u32 = SHAPE.k * GROUP;
/// Doubles of a partial tile of [`split_tail`].
const TILE_LEN: u32 = SHAPE.tile_m * SHAPE.tile_n;
const _: () = assert!(SHAPE.threads == 128, "`dmma_tma`'s #[gpu::max_threads]");

/// One k-step's fragments of a warp: A's 16 x 8 tiles down, B's 8 x 8 tiles across.
type Fragments = ([[f64; 4]; MT], [[f64; 2]; NT]);

/// C = A B for row-major f64 matrices (A m x k, B k x n, C m x n). `maps` holds two tensor maps
/// (16 words each, the host's `cuTensorMapEncodeTiled`): A in boxes of 16 columns x 128 rows
/// (128-byte swizzle), and B seen as groups of `DMMA_TMA_B_GROUP` columns (column, row, group) in
/// boxes of 16 rows of 8 groups (no swizzle); the engine fills zeros past the edges, so the
/// copies need no bounds. Rows of A and B must start on 16-byte boundaries, and B's groups must
/// not reach past its rows (the host copies a matrix that does not fit). Launch:
/// `PipelinedShape::of(8).blocks(m, n)` blocks (1D), 128 threads,
/// `abi::gemm::dmma_tma_shared_bytes()` of dynamic shared memory.
#[gpu::kernel]
#[gpu::max_threads(128)] // two blocks an SM at up to 255 registers a thread
pub unsafe fn dmma_tma(m: u32, n: u32, k: u32, maps: *const u64, c: *mut f64) {
    // SAFETY: the caller's maps and dense m x n C.
    unsafe { main_loop(m, n, k, maps, StridedMut { ptr: c, ld: n }, Epilogue::Store) }
}

/// The tiles of [`dmma_tma`]'s C from `whole` on (in the grouped order), split along k in
/// `pieces` (`abi::gemm::SplitTail`): block b takes piece b % pieces of tile whole + b / pieces
/// and stores its partial tile to `partials` (dense 128 x 64, after one another, a tile's pieces
/// together), which [`sum_pieces`] adds into C. `dmma_tma` on `whole` blocks computes the other
/// tiles. Launch: as `dmma_tma`, (tiles - whole) x pieces blocks.
#[gpu::kernel]
#[gpu::max_threads(128)] // as `dmma_tma`
pub unsafe fn split_tail(
    m: u32,
    n: u32,
    k: u32,
    maps: *const u64,
    whole: u32,
    pieces: u32,
    partials: *mut f64,
) {
    let partial = block_idx_x();
    let id = whole + partial / pieces;
    let (tile_row, tile_col) = tile_in_order(id, m.div_ceil(SHAPE.tile_m), n.div_ceil(SHAPE.tile_n));
    let origin = (tile_row * SHAPE.tile_m, tile_col * SHAPE.tile_n);
    let out = StridedMut { ptr: partials.wrapping_add((partial * TILE_LEN) as usize), ld: SHAPE.tile_n };
    let tile = (SHAPE.tile_m, SHAPE.tile_n);
    let share = (k, (partial % pieces, pieces));
    // SAFETY: the caller's maps; `partials` holds this block's partial tile (the launch contract).
    unsafe { tile_product(thread_idx_x(), maps, origin, share, out, tile, (0, 0), Epilogue::Store) }
}

/// C's tiles from `whole` on ([`split_tail`]'s): each element the sum of the tile's `pieces`
/// partial tiles, in their order, so that the result does not depend on which piece finished
/// first. Launch: a thread per element of the split tiles, blocks of 256.
#[gpu::kernel]
pub unsafe fn sum_pieces(m: u32, n: u32, whole: u32, pieces: u32, partials: *const f64, c: *mut f64) {
    let element = block_idx_x() * block_dim_x() + thread_idx_x();
    let (tile, e) = (element / TILE_LEN, element % TILE_LEN);
    let (tile_row, tile_col) =
        tile_in_order(whole + tile, m.div_ceil(SHAPE.tile_m), n.div_ceil(SHAPE.tile_n));
    let origin = (tile_row * SHAPE.tile_m, tile_col * SHAPE.tile_n, SHAPE.tile_n);
    let tile_pieces = (partials.wrapping_add((tile * pieces * TILE_LEN) as usize), pieces, TILE_LEN);
    // SAFETY: the tile's partial tiles (the launch contract) and the dense m x n C.
    unsafe { super::add_pieces(tile_pieces, e, origin, (m, n), c) }
}

/// The k-loop and epilogue of [`dmma_tma`], for C a block of a larger matrix (the maps describe
/// A and B, blocks too) and C = A B or C -= A B (the LU's trailing update,
/// `gemm::update::dmma_tma`).
///
/// # Safety
/// As [`dmma_tma`]; C is an m x n block that overlaps neither A nor B.
#[inline(always)]
pub(super) unsafe fn main_loop(
    m: u32,
    n: u32,
    k: u32,
    maps: *const u64,
    c: StridedMut<f64>,
    epilogue: Epilogue,
) {
    let tid = thread_idx_x();
    let (tile_row, tile_col) = tile_of_block(m.div_ceil(SHAPE.tile_m), n.div_ceil(SHAPE.tile_n));
    let origin = (tile_row * SHAPE.tile_m, tile_col * SHAPE.tile_n);
    // SAFETY: as this function's.
    unsafe { tile_product(tid, maps, origin, (k, WHOLE), c, (m, n), origin, epilogue) }
}

/// Piece 0 of 1: the whole of k.
const WHOLE: (u32, u32) = (0, 1);

/// The product of the block tile at `(row0, col0)` over piece `piece` of `pieces` of k's
/// k-tiles, to C's `m x n` block from `c_origin` (C = A B, or C -= A B): the whole tile's
/// product at C's own place ([`main_loop`]), or a share of k to a partial tile
/// ([`split_tail`]). `tid`, this thread's index in the block, is read by the caller first: so
/// the whole-tile kernels' PTX stayed what it was before the split, and ptxas's schedule with
/// it (a reordered prologue cost 6%: PERF.md).
///
/// # Safety
/// As [`dmma_tma`]; C is an m x n block that overlaps neither A nor B.
#[allow(clippy::too_many_arguments)] // the tile, its share of k and where its product goes
#[inline(always)]
unsafe fn tile_product(
    tid: u32,
    maps: *const u64,
    (row0, col0): (u32, u32),
    (k, (piece, pieces)): (u32, (u32, u32)),
    c: StridedMut<f64>,
    (m, n): (u32, u32),
    c_origin: (u32, u32),
    epilogue: Epilogue,
) {
    // The stages start at the first 1024-byte boundary of the dynamic shared memory (the
    // swizzle's period); the barriers follow them.
    let doubles = shared::dynamic::<f64>();
    let start = shared::address(doubles, 0);
    let first = (1024 - start % 1024) % 1024;
    let tiles = doubles.after::<f64>(first / 8);
    let stage_address = |s: u32| start + first + 8 * s * STAGE_LEN;
    let barriers = stage_address(STAGES);
    let landed = |s: u32| Barrier(barriers + 8 * s);
    let freed = |s: u32| Barrier(barriers + 8 * (STAGES + s));
    let all_k_tiles = k.div_ceil(SHAPE.k);
    let share = |p: u32| (p as u64 * all_k_tiles as u64 / pieces as u64) as u32;
    let (first_k_tile, k_tiles) =
        if pieces == 1 { (0, all_k_tiles) } else { (share(piece), share(piece + 1) - share(piece)) };
    // Thread 0 queues the copies: the loop's k-tile kt (A's and B's first_k_tile + kt) to
    // stage kt % STAGES.
    let load = |kt: u32| {
        let s = kt % STAGES;
        landed(s).arrive_expecting(8 * STAGE_LEN);
        let (a_map, b_map) = (maps, maps.wrapping_add(16));
        let a_tile = stage_address(s);
        // SAFETY: the maps are the launch's; the boxes lie in stage s, which no warp reads
        // until `landed(s)` completes.
        unsafe {
            let k0 = (first_k_tile + kt) * SHAPE.k;
            tma::load_tile(a_tile, a_map, k0, row0, landed(s));
            tma::load_box_3d(a_tile + 8 * A_LEN, b_map, [0, k0, col0 / GROUP], landed(s));
        }
    };
    if tid == 0 {
        for s in 0..STAGES {
            landed(s).init(1);
            freed(s).init(SHAPE.threads / 32);
        }
        tma::fence_barrier_init();
    }
    sync_threads();
    if tid == 0 {
        for kt in 0..STAGES.min(k_tiles) {
            load(kt);
        }
    }

    let (g, t) = (lane_id() / 4, lane_id() % 4);
    let warp_row = warp_id() / SHAPE.warps_n * 16 * MT as u32;
    let warp_col = warp_id() % SHAPE.warps_n * 8 * NT as u32;
    let lanes = LaneOffsets::new(warp_row + g, warp_col + g, t);
    let mut acc = [[[0.0f64; 4]; NT]; MT];
    if k_tiles > 0 {
        landed(0).wait(0);
    }
    // SAFETY (every read): k-step 0 or 8 of a stage whose copies have landed and which this
    // warp has not freed yet.
    let mut current = unsafe { lanes.fragments(tiles, 0, 0) };
    for kt in 0..k_tiles {
        // Thread 0 refills the stage that k-tile kt - 1 used, which every warp freed a turn
        // ago (so the wait is short), with k-tile kt - 1 + STAGES.
        if tid == 0 && kt >= 1 && kt - 1 + STAGES < k_tiles {
            let done = kt - 1;
            freed(done % STAGES).wait(done / STAGES % 2);
            load(done + STAGES);
        }
        // C's tile goes to L2 three quarters into the k-loop: early enough to land before the
        // epilogue, late enough to leave the first k-tiles' copies alone (PERF.md).
        if epilogue == Epilogue::Subtract && kt == k_tiles * 3 / 4 {
            prefetch_tile(c, (m, n), c_origin, (SHAPE.tile_m, SHAPE.tile_n), SHAPE.threads, tid);
        }
        let s = kt % STAGES;
        let second = unsafe { lanes.fragments(tiles, s, 8) };
        mma_step(&mut acc, current);
        if kt + 1 < k_tiles {
            let next = (kt + 1) % STAGES;
            landed(next).wait((kt + 1) / STAGES % 2);
            current = unsafe { lanes.fragments(tiles, next, 0) };
        }
        mma_step(&mut acc, second);
        // The warp is done with the stage once its DMMAs have taken the fragments read from it:
        // an arrival right after the loads could let the copy engine refill the stage before
        // their values land (PERF.md).
        warp::sync_warp();
        if lane_id() == 0 {
            freed(s).arrive();
        }
    }

    // The stages are free: every copy queued has landed and every warp is past its reads.
    sync_threads();
    let fragment = (warp_row + g, warp_col + 2 * t);
    // SAFETY: the C tile fits in the stages (checked in `abi`); C is an m x n block.
    unsafe { store_block_tile(&acc, tiles, fragment, c, (m, n), c_origin, epilogue) };
}

/// acc[i][j] += A's tile i times B's tile j over one k-step.
#[inline(always)]
fn mma_step(acc: &mut [[[f64; 4]; NT]; MT], (a, b): Fragments) {
    for i in 0..MT {
        for j in 0..NT {
            acc[i][j] = dmma_m16n8k8(a[i], b[j], acc[i][j]);
        }
    }
}

/// Where lane (g, t)'s fragments lie in a stage (doubles from the stage's start).
#[derive(Clone, Copy)]
struct LaneOffsets {
    /// A's element (row, t): the lane's row (warp row + g) and its chunk t / 2 swizzled by the
    /// row (g). Columns t + 4 and k-step 8 move the chunk by 2 and 4: `^ 4` and `^ 8` here.
    a: u32,
    /// B's element (t, column): the lane's column (warp column + g) in its group, row t.
    b: u32,
}

impl LaneOffsets {
    #[inline(always)]
    fn new(row: u32, column: u32, t: u32) -> LaneOffsets {
        let a = row * SHAPE.k + 2 * ((t / 2) ^ (row % 8)) + t % 2;
        let b = A_LEN + column / GROUP * GROUP_LEN + t * GROUP + column % GROUP;
        LaneOffsets { a, b }
    }

    /// The fragments of k-step `kk` (0 or 8) of stage `s`.
    ///
    /// # Safety
    /// The stage's copies have landed and nobody writes it until this warp frees it.
    #[inline(always)]
    unsafe fn fragments(self, tiles: SharedArray<f64>, s: u32, kk: u32) -> Fragments {
        let stage = s * STAGE_LEN;
        // SAFETY (both): inside stage s (rows < 128 of A's tile, rows < 16 of B's groups).
        let a_at =
            |down: u32, right: u32| unsafe { tiles.get(stage + ((self.a + down * SHAPE.k) ^ (right + kk))) };
        let b_at = |down: u32, group: u32| unsafe {
            tiles.get(stage + self.b + (kk + down) * GROUP + group * GROUP_LEN)
        };
        let a = core::array::from_fn(|i| {
            let row = 16 * i as u32;
            [a_at(row, 0), a_at(row + 8, 0), a_at(row, 4), a_at(row + 8, 4)]
        });
        let b = core::array::from_fn(|j| [b_at(0, j as u32), b_at(4, j as u32)]);
        (a, b)
    }
}
