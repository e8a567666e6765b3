//! TF32 GEMM on Hopper's warpgroup MMA (`wgmma.mma_async`, the sm_90a module only): the
//! tensor memory accelerator copies whole tiles into shared memory while the tensor cores run,
//! and the tensor cores read one operand straight from there; about three times the rate of
//! `mma.sync` ([`super::pipelined`]) here (PERF.md).
//!
//! TF32 `wgmma` reads its shared-memory operand K-major only, and B (k x n, row-major) is
//! N-major. So the kernel computes C^T = B^T A^T: A's tile (rows of k, as A is stored) is the
//! shared-memory operand, and B^T comes from registers, read out of B's tile by each warp in the
//! fragment layout (a transposed copy of B would cost a pass over B; cuBLAS too runs this
//! layout in one kernel). The inputs go to the tensor cores as f32, of which they read the TF32
//! part: each input truncated to 10 mantissa bits, where `pipelined` rounds to nearest
//! (rounding here cost a quarter of the speed: PERF.md).
//!
//! A block is a warpgroup that queues the copies (one thread) and two that compute; the copying
//! one gives most of its registers to the others (`setmaxnreg`). Blocks run in clusters of two
//! on neighbouring tiles of C: each copies half of A's tile into both blocks (multicast), which
//! takes a third off the traffic from L2. mbarriers in shared memory say when a stage's copies
//! have landed (the copy engine counts the bytes) and when the computing warps of both blocks
//! have freed it, and the copying thread refills it at once. (The LU's trailing update runs the
//! same k-loop in two warpgroups, thread 0 copying too: `main_loop`'s `COPY_WARPGROUP`.)

use abi::StridedMut;
use abi::gemm::{
    WGMMA_BK, WGMMA_BM, WGMMA_BN, WGMMA_CLUSTER as CLUSTER, WGMMA_MMA_THREADS, WGMMA_STAGES, WGMMA_THREADS,
    wgmma_stage_bytes,
};

use super::pipelined::{Epilogue, prefetch_tile, tile_in_order};
use crate::device::shared;
use crate::device::thread::{block_idx_x, lane_id, sync_threads, thread_idx_x, warp_id};
use crate::device::tma::{self, Barrier};
use crate::device::wgmma;

/// Warps that compute (two warpgroups).
const MMA_WARPS: u32 = WGMMA_MMA_THREADS / 32;
const _: () = assert!(WGMMA_THREADS == 384, "`tf32`'s #[gpu::max_threads]");
/// With the copy warpgroup, registers per thread of it and of the computing ones: the block's
/// 64 K (168 each to start with, `.maxntid 384`) moved to the products; at 168 ptxas would run
/// the products one by one.
const COPY_REGISTERS: u32 = 40;
const MMA_REGISTERS: u32 = 232;
const _: () = assert!(128 * COPY_REGISTERS + WGMMA_MMA_THREADS * MMA_REGISTERS <= 65536);
/// Floats per row of every copied box: one 128-byte row of the swizzle (the host's tensor maps
/// read boxes this wide).
const BOX: u32 = 32;
/// Rows of A's tile that each block of a cluster copies.
const A_HALF_ROWS: u32 = WGMMA_BM / CLUSTER;
const _: () = assert!(CLUSTER == 2, "`tf32`'s #[gpu::cluster]; each block frees stages in the other");
const _: () = assert!(WGMMA_BN == 64 * (MMA_WARPS / 4), "each computing warpgroup takes 64 columns of C");

/// C = A B for row-major f32 matrices (A m x k, B k x n, C m x n) with TF32 inputs (truncated
/// by the tensor cores) and f32 accumulators, on `wgmma.mma_async` m64n256k8, computing C^T =
/// B^T A^T: two warpgroups take 64 columns of the block's 256 x 128 tile of C each, one k-tile
/// of products in flight while they read the next k-tile's fragments. `maps` holds two tensor
/// maps (16 words each, the host's `cuTensorMapEncodeTiled`, 128-byte swizzle): A in
/// WGMMA_BK x (WGMMA_BM / WGMMA_CLUSTER) boxes and B in BOX x WGMMA_BK boxes; the engine fills
/// zeros past the edges, so the copies need no addresses or bounds. Rows of A and B must start
/// on 16-byte boundaries (where k or n is not a multiple of 4, the host copies the matrix into
/// rows that do). Launch (`gemm::wgmma_launch`): ceil(m / WGMMA_BM) tile rows
/// times ceil(n / WGMMA_BN) tile columns rounded up to whole clusters, blocks in a 1D grid,
/// WGMMA_THREADS threads, `abi::gemm::wgmma_shared_bytes()` of dynamic shared memory.
///
/// Shared memory per stage: A's tile, WGMMA_BM rows of 128 bytes (16-byte chunk c of row r at
/// chunk c ^ (r % 8), the layout the descriptor names), then B's tile as WGMMA_BN / BOX boxes of
/// WGMMA_BK rows of BOX floats, swizzled the same way (the lanes' fragment reads then fall in
/// distinct banks).
#[gpu::kernel]
#[gpu::max_threads(384)] // WGMMA_THREADS: ptxas keeps to 168 registers, so that 3 warpgroups fit
#[gpu::cluster(2)] // blocks in pairs that share A's tile
#[inline(always)] // into its entry point: a call inside the k-loop would serialize the products
pub unsafe fn tf32(m: u32, n: u32, k: u32, maps: *const u64, c: *mut f32) {
    // SAFETY: the caller's maps and dense m x n C.
    unsafe { main_loop::<true>(m, n, k, maps, StridedMut { ptr: c, ld: n }, Epilogue::Store) }
}

/// The k-loop and epilogue of [`tf32`], for C a block of a larger matrix (the maps describe A
/// and B, blocks too) and C = A B or C -= A B (the LU's trailing update, `gemm::update::wgmma`).
///
/// # Safety
/// As [`tf32`]; C is an m x n block that overlaps neither A nor B.
#[inline(always)]
pub(super) unsafe fn main_loop<const COPY_WARPGROUP: bool>(
    m: u32,
    n: u32,
    k: u32,
    maps: *const u64,
    c: StridedMut<f32>,
    epilogue: Epilogue,
) {
    let tid = thread_idx_x();
    // With the copy warpgroup, the two blocks of a cluster take neighbouring tiles of one tile
    // row (the second past the last column when the columns are odd: it copies and computes,
    // and stores nothing) and share A's tile: each copies half of it into both.
    let (cluster, rank) = if COPY_WARPGROUP { (CLUSTER, tma::cluster_rank()) } else { (1, 0) };
    let (tile_row, tile_pair) =
        tile_in_order(block_idx_x() / cluster, m.div_ceil(WGMMA_BM), n.div_ceil(WGMMA_BN).div_ceil(cluster));
    let tile_col = cluster * tile_pair + rank;
    let (row0, col0) = (tile_row * WGMMA_BM, tile_col * WGMMA_BN);
    // The stages start at the first 1024-byte boundary of the dynamic shared memory (the
    // swizzle's period); the barriers follow them.
    let words = shared::dynamic::<u32>();
    let start = shared::address(words, 0);
    let stages = start + (1024 - start % 1024) % 1024;
    let a_tile = |s: u32| stages + s * wgmma_stage_bytes();
    let b_box = |s: u32, i: u32| a_tile(s) + (WGMMA_BM + i * WGMMA_BK) * BOX * 4;
    let barriers = stages + WGMMA_STAGES * wgmma_stage_bytes();
    let landed = |s: u32| Barrier(barriers + 8 * s);
    let freed = |s: u32| Barrier(barriers + 8 * (WGMMA_STAGES + s));
    // One thread queues the copies: k-tile kt to stage kt % stages.
    let load = |kt: u32| {
        let s = kt % WGMMA_STAGES;
        landed(s).arrive_expecting(wgmma_stage_bytes());
        let (a_map, b_map) = (maps, maps.wrapping_add(16));
        // SAFETY: the maps are the launch's; the tiles lie in stage s, which no warp of either
        // block reads until `landed(s)` completes (each block's counts both halves of A).
        unsafe {
            if COPY_WARPGROUP {
                let half = a_tile(s) + rank * A_HALF_ROWS * BOX * 4;
                tma::load_tile_multicast(
                    half,
                    a_map,
                    kt * WGMMA_BK,
                    row0 + rank * A_HALF_ROWS,
                    landed(s),
                    0b11,
                );
            } else {
                tma::load_tile(a_tile(s), a_map, kt * WGMMA_BK, row0, landed(s));
            }
            for i in 0..WGMMA_BN / BOX {
                tma::load_tile(b_box(s, i), b_map, col0 + BOX * i, kt * WGMMA_BK, landed(s));
            }
        }
    };
    let k_tiles = k.div_ceil(WGMMA_BK);
    if epilogue == Epilogue::Subtract {
        let threads = if COPY_WARPGROUP { WGMMA_THREADS } else { WGMMA_MMA_THREADS };
        prefetch_tile(c, (m, n), (row0, col0), (WGMMA_BM, WGMMA_BN), threads, tid);
    }
    if tid == 0 {
        for s in 0..WGMMA_STAGES {
            landed(s).init(1);
            freed(s).init(cluster * MMA_WARPS);
        }
        tma::fence_barrier_init();
    }
    // The barriers are set up, in both blocks of a cluster.
    if COPY_WARPGROUP {
        tma::cluster_sync();
    } else {
        sync_threads();
    }
    if !COPY_WARPGROUP {
        if tid == 0 {
            for kt in 0..WGMMA_STAGES.min(k_tiles) {
                load(kt);
            }
        }
    } else if warp_id() < 4 {
        // The copy warpgroup: thread 0 fills stage kt % stages with k-tile kt once the computing
        // warps of both blocks have freed it from k-tile kt - stages.
        wgmma::set_max_registers::<COPY_REGISTERS, false>();
        if tid == 0 {
            for kt in 0..k_tiles {
                if kt >= WGMMA_STAGES {
                    let done = kt - WGMMA_STAGES;
                    freed(done % WGMMA_STAGES).wait(done / WGMMA_STAGES % 2);
                }
                load(kt);
            }
        }
        // Every block's barriers and stages stay until the other's arrivals and copies are in.
        tma::cluster_sync();
        return;
    } else {
        wgmma::set_max_registers::<MMA_REGISTERS, true>();
    }

    // Warp w of warpgroup wg, lane (g, t): B^T rows (C columns) 64 wg + 16 w + g (+ 8), in
    // box `column / BOX` of B's tile.
    let group = warp_id() / 4 - COPY_WARPGROUP as u32;
    let (warp, g, t) = (warp_id() % 4, lane_id() / 4, lane_id() % 4);
    let column = 64 * group + 16 * warp + g;
    let (bx, q) = (column / BOX, column % BOX);
    // Word of B's element (k row 8 step + t (+ 4), column q (+ 8)) in a box: row r, chunk
    // (q / 4) ^ (r % 8), word q % 4; the row part 256 step is added per step.
    let swizzled = |r: u32, q: u32| r * BOX + ((q / 4) ^ (r % 8)) * 4 + q % 4;
    let offsets = [swizzled(t, q), swizzled(t, q + 8), swizzled(t + 4, q), swizzled(t + 4, q + 8)];
    let mut acc = [0.0f32; 128];
    // One k-tile: wait for its copies, read B^T's fragments, queue the four k-steps' products,
    // and free the previous k-tile's stage once its products are done. The fragments are
    // registers the tensor cores read until then, so the loop below runs two k-tiles per turn,
    // each into variables of its own (and an odd last one after it, into a third set): ptxas
    // serializes the products if a path could overwrite them early.
    macro_rules! k_tile {
        ($kt:expr) => {{
            let kt: u32 = $kt;
            let s = kt % WGMMA_STAGES;
            landed(s).wait(kt / WGMMA_STAGES % 2);
            let base = (b_box(s, bx) - start) / 4;
            // SAFETY: inside stage s's B tile, whose copies have landed.
            let at = |step: u32, i: usize| unsafe { words.get(base + 256 * step + offsets[i]) };
            let fragment = |step: u32| [at(step, 0), at(step, 1), at(step, 2), at(step, 3)];
            let fragments = [fragment(0), fragment(1), fragment(2), fragment(3)];
            let descriptor = |step: u32| wgmma::descriptor_k_major_128b(a_tile(s) + 32 * step);
            let descriptors = [descriptor(0), descriptor(1), descriptor(2), descriptor(3)];
            wgmma::fence();
            unrolled!(step in [0, 1, 2, 3] {
                // SAFETY: A's tile of stage s has landed; the stage is not freed before these
                // products are done.
                unsafe { wgmma::mma_m64n256k8_tf32(&mut acc, fragments[step], descriptors[step]) };
            });
            wgmma::commit_group();
            wgmma::wait_group::<1>();
            if kt > 0 && lane_id() == 0 {
                freed((kt - 1) % WGMMA_STAGES).arrive();
                if COPY_WARPGROUP {
                    // Both blocks' copies write this stage: free it in both.
                    freed((kt - 1) % WGMMA_STAGES).arrive_in(rank ^ 1);
                }
            }
            // Without the copy warpgroup, thread 0 refills the stage k-tile kt - 2 used, freed
            // by every warp a turn ago (so the wait is short: its warp computes too), with
            // k-tile kt - 2 + stages.
            if !COPY_WARPGROUP && kt > 1 && tid == 0 && kt - 2 + WGMMA_STAGES < k_tiles {
                let done = kt - 2;
                freed(done % WGMMA_STAGES).wait(done / WGMMA_STAGES % 2);
                load(done + WGMMA_STAGES);
            }
        }};
    }
    for pair in 0..k_tiles / 2 {
        k_tile!(2 * pair);
        k_tile!(2 * pair + 1);
    }
    if k_tiles % 2 == 1 {
        k_tile!(k_tiles - 1);
    }
    wgmma::wait_group::<0>();
    if COPY_WARPGROUP {
        tma::cluster_arrive(); // this block's last arrivals in the other are made
    }

    // acc[4j + 2h + e] is C^T[column + 8h][8j + 2t + e]: C[row0 + 8j + 2t + e][col0 + column
    // + 8h]. (Unrolled, so that acc's indices are constants and it stays in registers.) For C
    // -= A B, each batch of 16 values of C is loaded before it is stored: a store between two
    // loads would make the second wait for the first (the compiler cannot move loads of C past
    // stores to C). All 128 loads at once spill; 32 take 250 registers, which leave no room
    // on the SM for the LU's panel kernel beside the update (PERF.md); 16 take no more than the
    // k-loop.
    //
    // each_in_batch: for each of this thread's 16 entries of C in batch $batch inside m x n,
    // $i its index in acc and ($row, $col) its place in C.
    macro_rules! each_in_batch {
        ($batch:expr, |$i:ident, $row:ident, $col:ident| $body:block) => {
            unrolled!(j in [0, 1, 2, 3] {
                let j = 4 * $batch + j;
                for h in 0..2 {
                    for e in 0..2 {
                        let $i = 4 * j + 2 * h + e;
                        let ($row, $col) = (row0 + 8 * j as u32 + 2 * t + e as u32, col0 + column + 8 * h as u32);
                        if $row < m && $col < n $body
                    }
                }
            });
        };
    }
    unrolled!(batch in [0, 1, 2, 3, 4, 5, 6, 7] {
        if epilogue == Epilogue::Subtract {
            // SAFETY: (row, col) is inside C.
            each_in_batch!(batch, |i, row, col| { acc[i] = unsafe { *c.at(row, col) } - acc[i]; });
        }
        // SAFETY: as above.
        each_in_batch!(batch, |i, row, col| { unsafe { *c.at(row, col) = acc[i] }; });
    });
    if COPY_WARPGROUP {
        tma::cluster_wait();
    }
}
