//! GEMM at Hopper's tensor-core rate (sm_90 only): `mma.sync` m16n8k8 on 128 x 64 block
//! tiles (128 x 128 for f32), fed by a 3-stage `cp.async` pipeline from global to shared
//! memory. One k-loop for
//! f64 (DMMA) and f32 (TF32 inputs, f32 accumulators), for C = A B ([`pipelined`]) and for the
//! blocked LU's trailing update C -= A B (`update::pipelined`), on blocks of row-major matrices.
//!
//! Against [`super::dmma16`]: the block tile is twice as large, which cuts the L2 traffic per
//! flop by a third; each warp owns a 64 x 32 tile (4 x 4 mma tiles, 64 accumulators per lane);
//! the copies of the next two k-tiles are in flight while the warps compute on the current
//! one, without holding them in registers (so two blocks fit an SM); and each mma does k = 8,
//! half as many tensor-core instructions as m16n8k4.
//!
//! A k-tile is 128 bytes of each row of A (16 doubles or 32 floats). Shared rows are padded
//! (`abi::gemm::PipelinedShape`) so that the lanes' fragment reads fall in distinct banks and
//! rows stay 16-byte aligned for the copies.
//!
//! Blocks run in a grouped order (down [`GROUP_ROWS`] tile rows, then right), so the blocks
//! resident together share A's row panels and B's column panels in L2.
//!
//! The tile shape is set in `abi::gemm`: the fastest of the shapes measured (PERF.md).

use abi::gemm::PipelinedShape;
use abi::{Strided, StridedMut};

use crate::device::memory::prefetch_l2;
use crate::device::mma::Mma16x8x8;
use crate::device::pipeline::{self, copy_4, copy_8, copy_16};
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{block_idx_x, lane_id, sync_threads, thread_idx_x, warp_id};

/// Block-tile rows of one group in the launch order.
const GROUP_ROWS: u32 = 8;

/// What the k-loop's result does to C.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Epilogue {
    /// C = A B.
    Store,
    /// C -= A B (the trailing update): C's tile is prefetched to L2 during the k-loop (each
    /// kernel says when), so that the epilogue's loads of it find it there.
    Subtract,
}

/// Checked once, at compile time, for both element types: whole mma steps per k-tile, whole
/// copies per thread, and the C tile fits in the stages it reuses.
const _: () = {
    let mut size = 4;
    while size <= 8 {
        let shape = PipelinedShape::of(size);
        let chunk = 16 / size as u32;
        assert!(shape.k.is_multiple_of(8) && shape.stages >= 2);
        assert!(shape.tile_m * shape.c_stride <= shape.stages * shape.stage_len());
        assert!((shape.tile_m * shape.k / chunk).is_multiple_of(shape.threads));
        assert!((shape.k * shape.tile_n / chunk).is_multiple_of(shape.threads));
        size *= 2;
    }
};

const MT: usize = abi::gemm::PIPELINED_MT;
const NT: usize = abi::gemm::PIPELINED_NT;

/// Elements of a 16-byte chunk: the unit of the copies and of the C stores.
const fn chunk<T>() -> u32 {
    16 / size_of::<T>() as u32
}

/// The k-loop and the epilogue: C (=, or -=) A B for A m x k, B k x n, C m x n, blocks of
/// row-major matrices (where it subtracts, C's tile prefetched to L2 at the start). Launch: grid (ceil(m / BM) * ceil(n / BN)) blocks (1D),
/// `shape.threads` threads, `shape.shared_bytes` of dynamic shared memory, with the shape of
/// `abi::gemm::PipelinedShape::of(size_of T)`.
///
/// # Safety
/// A, B and C hold the blocks; C overlaps neither A nor B.
#[inline(always)]
pub(super) unsafe fn main_loop<T: Mma16x8x8>(
    m: u32,
    n: u32,
    k: u32,
    a: Strided<T>,
    b: Strided<T>,
    c: StridedMut<T>,
    epilogue: Epilogue,
) {
    let shape = const { PipelinedShape::of(size_of::<T>()) };
    let stages = shape.stages;
    let (tile_row, tile_col) = tile_of_block(m.div_ceil(shape.tile_m), n.div_ceil(shape.tile_n));
    let (row0, col0) = (tile_row * shape.tile_m, tile_col * shape.tile_n);
    let a_part =
        Part { matrix: a, rows: m, cols: k, row0, col0: 0, tile_rows: shape.tile_m, tile_cols: shape.k };
    let b_part =
        Part { matrix: b, rows: k, cols: n, row0: 0, col0, tile_rows: shape.k, tile_cols: shape.tile_n };
    let (a_vector, b_vector) = (a_part.vector(), b_part.vector());
    let tid = thread_idx_x();
    let (g, t) = (lane_id() / 4, lane_id() % 4);
    let warp_row = warp_id() / shape.warps_n * 16 * MT as u32;
    let warp_col = warp_id() % shape.warps_n * 8 * NT as u32;
    let tiles = shared::dynamic::<T>();
    let stage = |s: u32| {
        let a_tile = tiles.after::<T>(s * shape.stage_len());
        (a_tile, a_tile.after::<T>(shape.tile_m * shape.a_stride))
    };
    // Queues this thread's copies of k-tile `kt` into stage `s`.
    let load = |s: u32, kt: u32| {
        let (a_tile, b_tile) = stage(s);
        let k0 = kt * shape.k;
        // SAFETY: the stage lies inside the shared bytes the host gives and no warp reads it
        // until a later barrier; vector copies only where the rows allow them.
        unsafe {
            let (a_part, b_part) = (Part { col0: k0, ..a_part }, Part { row0: k0, ..b_part });
            if a_vector {
                a_part.copy::<true>(a_tile, shape.a_stride, shape, tid);
            } else {
                a_part.copy::<false>(a_tile, shape.a_stride, shape, tid);
            }
            if b_vector {
                b_part.copy::<true>(b_tile, shape.b_stride, shape, tid);
            } else {
                b_part.copy::<false>(b_tile, shape.b_stride, shape, tid);
            }
        }
    };
    let k_tiles = k.div_ceil(shape.k);
    if epilogue == Epilogue::Subtract {
        prefetch_tile(c, (m, n), (row0, col0), (shape.tile_m, shape.tile_n), shape.threads, tid);
    }

    // Prologue: the first stages - 1 k-tiles in flight, one group each (empty past the end).
    for s in 0..stages - 1 {
        if s < k_tiles {
            load(s, s);
        }
        pipeline::commit();
    }

    let mut acc = [[[T::ZERO; 4]; NT]; MT];
    let (mut read, mut write) = (0, stages - 1);
    for kt in 0..k_tiles {
        // k-tile kt has landed (this thread's copies), and after the barrier everyone's has;
        // the barrier also means every warp is done with k-tile kt - 1, whose stage is `write`.
        pipeline::wait_pending(stages - 2);
        sync_threads();
        let (a_tile, b_tile) = stage(read);
        let warp_tiles = WarpTiles { a_tile, b_tile, shape, row: warp_row + g, col: warp_col + g, t };
        // SAFETY: k-step 0 of the stage, whose copies have landed; warp tiles inside the block's.
        unsafe { warp_tiles.mma_step(&mut acc, 0) };
        // k-tile kt + stages - 1 goes out once the tensor cores have work queued.
        if kt + stages - 1 < k_tiles {
            load(write, kt + stages - 1);
        }
        pipeline::commit();
        for step in 1..shape.k / 8 {
            // SAFETY: the stage's other k-steps, 8 step + 8 <= BK.
            unsafe { warp_tiles.mma_step(&mut acc, 8 * step) };
        }
        read = if read + 1 == stages { 0 } else { read + 1 };
        write = if write + 1 == stages { 0 } else { write + 1 };
    }

    // The stages are free once every warp is past the last k-tile.
    sync_threads();
    // SAFETY: the block's tile of C, the stages' shared memory holding its C tile.
    unsafe {
        store_block_tile(&acc, tiles, (warp_row + g, warp_col + 2 * t), c, (m, n), (row0, col0), epilogue)
    };
}

/// Stores (or subtracts) the block's accumulators to its tile of C at (row0, col0): through
/// `c_tile` in shared memory (fragments in, then coalesced, bounds-checked rows out). Lane (g,
/// t) of the warp at (warp_row, warp_col) passes `fragment` = (warp_row + g, warp_col + 2t).
///
/// # Safety
/// `c_tile` holds the C tile of `PipelinedShape::of(size_of T)` in shared memory that no warp
/// reads or writes any more (a block barrier before); C is an m x n block; every thread of the
/// block calls this.
#[inline(always)]
pub(super) unsafe fn store_block_tile<T: Mma16x8x8>(
    acc: &[[[T; 4]; NT]; MT],
    c_tile: SharedArray<T>,
    (row, col): (u32, u32),
    c: StridedMut<T>,
    (m, n): (u32, u32),
    (row0, col0): (u32, u32),
    epilogue: Epilogue,
) {
    let shape = const { PipelinedShape::of(size_of::<T>()) };
    // Lane (g, t) holds C[16i + g][8j + 2t + {0, 1}] and the same 8 rows down.
    let fragment = row * shape.c_stride + col;
    for (i, row_tiles) in acc.iter().enumerate() {
        for (j, &[d0, d1, d2, d3]) in row_tiles.iter().enumerate() {
            let at = fragment + 16 * i as u32 * shape.c_stride + 8 * j as u32;
            // SAFETY: rows < BM, columns < BN of the C tile, by the contract.
            unsafe {
                c_tile.set(at, d0);
                c_tile.set(at + 1, d1);
                c_tile.set(at + 8 * shape.c_stride, d2);
                c_tile.set(at + 8 * shape.c_stride + 1, d3);
            }
        }
    }
    sync_threads();
    // SAFETY: every store is checked against m and n; the C tile was written above.
    unsafe { store_tile(c_tile, shape, c, m, n, row0, col0, thread_idx_x(), epilogue) };
}

/// Sixteen bytes of elements, the unit of a vector access.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
struct Chunk([u32; 4]);

/// Copies the BM x BN tile of C at (row0, col0) from `c_tile` (rows of `shape.c_stride`) to C
/// (or subtracts it), a 16-byte chunk of consecutive columns per thread (coalesced), the parts
/// inside m x n only.
///
/// # Safety
/// `c_tile` holds the tile in shared memory; `c` is an m x n block.
#[inline(always)]
#[allow(clippy::too_many_arguments)] // the tile, its place, and what to do with it
unsafe fn store_tile<T: Mma16x8x8>(
    c_tile: SharedArray<T>,
    shape: PipelinedShape,
    c: StridedMut<T>,
    m: u32,
    n: u32,
    row0: u32,
    col0: u32,
    tid: u32,
    epilogue: Epilogue,
) {
    let chunk = chunk::<T>();
    let chunks = shape.tile_n / chunk;
    let vector = (c.ptr as usize).is_multiple_of(16) && c.ld.is_multiple_of(chunk);
    for p in (tid..shape.tile_m * chunks).step_by(shape.threads as usize) {
        let (r, cc) = (p / chunks, p % chunks * chunk);
        let (row, col) = (row0 + r, col0 + cc);
        if row >= m || col >= n {
            continue;
        }
        let tile_at = r * shape.c_stride + cc;
        // SAFETY: (row, col + e) is inside C for every e stored; a vector access has col a
        // multiple of the chunk and a 16-byte aligned row start, so a 16-byte aligned address.
        // The tile's rows are 16-byte aligned (c_stride) and cc a multiple of the chunk.
        unsafe {
            let out = c.at(row, col);
            if vector && col + chunk <= n {
                let product = *c_tile.ptr(tile_at).cast::<Chunk>();
                let mut values = product;
                if epilogue == Epilogue::Subtract {
                    values = *out.cast::<Chunk>();
                    let (old, product) = ((&raw mut values).cast::<T>(), (&raw const product).cast::<T>());
                    for e in 0..chunk as usize {
                        *old.add(e) = *old.add(e) - *product.add(e);
                    }
                }
                *out.cast::<Chunk>() = values;
            } else {
                for e in 0..chunk.min(n - col) {
                    let value = c_tile.get(tile_at + e);
                    let out = out.add(e as usize);
                    *out = if epilogue == Epilogue::Subtract { *out - value } else { value };
                }
            }
        }
    }
}

/// Prefetches the `tile_m x tile_n` tile of C at (row0, col0), inside m x n, to L2: a 128-byte
/// line per thread (of `threads`) and pass, so that the epilogue's loads of C find it there.
#[inline(always)]
pub(super) fn prefetch_tile<T>(
    c: StridedMut<T>,
    (m, n): (u32, u32),
    (row0, col0): (u32, u32),
    (tile_m, tile_n): (u32, u32),
    threads: u32,
    tid: u32,
) {
    let per_line = 128 / size_of::<T>() as u32;
    let lines = tile_n.div_ceil(per_line);
    for p in (tid..tile_m * lines).step_by(threads as usize) {
        let (row, col) = (row0 + p / lines, col0 + p % lines * per_line);
        if row < m && col < n {
            // SAFETY: (row, col) is inside C.
            unsafe { prefetch_l2(c.at(row, col)) };
        }
    }
}

/// One warp's view of a stage: its rows of A's tile and columns of B's, for lane (g, t).
#[derive(Clone, Copy)]
struct WarpTiles<T: Copy> {
    a_tile: SharedArray<T>,
    b_tile: SharedArray<T>,
    shape: PipelinedShape,
    /// The lane's first row of A (warp row + g) and column of B (warp column + g).
    row: u32,
    col: u32,
    t: u32,
}

impl<T: Mma16x8x8> WarpTiles<T> {
    /// acc[i][j] += the warp's A rows 16i.. times B columns 8j.. over k-step `kk..kk + 8`.
    ///
    /// # Safety
    /// `kk + 8 <= BK`, and the warp's tile rows and columns lie inside the stage's tiles.
    #[inline(always)]
    unsafe fn mma_step(self, acc: &mut [[[T; 4]; NT]; MT], kk: u32) {
        let (a_stride, b_stride, t) = (self.shape.a_stride, self.shape.b_stride, self.t);
        // SAFETY: rows < BM and columns kk + t (+ 4) < BK of A's tile, by the contract.
        let a_at = |row: u32, col: u32| {
            unsafe { self.a_tile.get((self.row + row) * a_stride + kk + col) }.fragment()
        };
        // SAFETY: rows kk + t (+ 4) < BK and columns < BN of B's tile, by the contract.
        let b_at = |row: u32, col: u32| {
            unsafe { self.b_tile.get((kk + row) * b_stride + self.col + col) }.fragment()
        };
        let a_frag: [[T::Fragment; 4]; MT] = core::array::from_fn(|i| {
            let row = 16 * i as u32;
            [a_at(row, t), a_at(row + 8, t), a_at(row, t + 4), a_at(row + 8, t + 4)]
        });
        let b_frag: [[T::Fragment; 2]; NT] =
            core::array::from_fn(|j| [b_at(t, 8 * j as u32), b_at(t + 4, 8 * j as u32)]);
        for i in 0..MT {
            for j in 0..NT {
                acc[i][j] = T::mma_16x8x8(a_frag[i], b_frag[j], acc[i][j]);
            }
        }
    }
}

/// The (row, column) of the block tile this block computes, in the grouped order: block ids
/// go down a group of [`GROUP_ROWS`] tile rows, then one tile column right.
#[inline(always)]
pub(super) fn tile_of_block(tile_rows: u32, tile_cols: u32) -> (u32, u32) {
    tile_in_order(block_idx_x(), tile_rows, tile_cols)
}

/// The (row, column) of tile `id` in the grouped order of [`tile_of_block`].
#[inline(always)]
pub(super) fn tile_in_order(id: u32, tile_rows: u32, tile_cols: u32) -> (u32, u32) {
    let per_group = GROUP_ROWS * tile_cols;
    let first_row = id / per_group * GROUP_ROWS;
    let rows = (tile_rows - first_row).min(GROUP_ROWS);
    let within = id % per_group;
    (first_row + within % rows, within / rows)
}

/// The part of a `rows x cols` block that one tile holds: `tile_rows x tile_cols` from
/// (`row0`, `col0`), zeros where it reaches past the block.
#[derive(Clone, Copy)]
struct Part<T> {
    matrix: Strided<T>,
    rows: u32,
    cols: u32,
    row0: u32,
    col0: u32,
    tile_rows: u32,
    tile_cols: u32,
}

impl<T: Copy> Part<T> {
    /// Whether every chunk of the block's rows is 16-byte aligned (aligned start, whole chunks
    /// per leading dimension).
    fn vector(self) -> bool {
        (self.matrix.ptr as usize).is_multiple_of(16) && self.matrix.ld.is_multiple_of(chunk::<T>())
    }

    /// Queues this thread's copies of the part into `tile` (rows of `stride` elements): chunks
    /// of 16 bytes, consecutive threads on consecutive chunks of a row (coalesced); one 16-byte
    /// copy per chunk if `VECTOR`, else one per element.
    ///
    /// # Safety
    /// `tile` holds `tile_rows` rows of `stride` elements in shared memory, rows 16-byte
    /// aligned; with `VECTOR`, the block's rows are 16-byte aligned chunks.
    #[inline(always)]
    unsafe fn copy<const VECTOR: bool>(
        self,
        tile: SharedArray<T>,
        stride: u32,
        shape: PipelinedShape,
        tid: u32,
    ) {
        let (size, chunk) = (size_of::<T>() as u32, chunk::<T>());
        let chunks = self.tile_cols / chunk;
        for i in 0..self.tile_rows * chunks / shape.threads {
            let p = tid + i * shape.threads;
            let (r, c) = (p / chunks, p % chunks * chunk);
            let (row, col) = (self.row0 + r, self.col0 + c);
            let valid = if row < self.rows { self.cols.saturating_sub(col).min(chunk) } else { 0 };
            let dst = r * stride + c;
            // SAFETY: the `valid` elements at (row, col) are inside the block (row < rows,
            // col + valid <= cols); an empty copy names the base and reads nothing. The
            // destination chunk is inside the tile, 16-byte aligned (aligned rows, c a multiple
            // of the chunk), and so is the source of a vector copy.
            unsafe {
                if VECTOR {
                    let src = if valid > 0 { self.matrix.at(row, col) } else { self.matrix.ptr };
                    copy_16(tile, dst, src, size * valid);
                } else {
                    for e in 0..chunk {
                        let (src, bytes) = if e < valid {
                            (self.matrix.at(row, col + e), size)
                        } else {
                            (self.matrix.ptr, 0)
                        };
                        if size == 8 {
                            copy_8(tile, dst + e, src, bytes);
                        } else {
                            copy_4(tile, dst + e, src, bytes);
                        }
                    }
                }
            }
        }
    }
}

/// C = A B for row-major matrices of any shape (A m x k, B k x n, C m x n) on tensor cores:
/// f64 on DMMA, f32 with its inputs rounded to TF32 (10 mantissa bits) and f32 accumulators.
/// The shape is `abi::gemm::PipelinedShape::of(size_of T)` (f64: block tiles of 128 x 64, 4
/// warps; f32: 128 x 128, 8 warps). Launch: `shape.blocks(m, n)` blocks (1D), `shape.threads`
/// threads, `shape.shared_bytes` of dynamic shared memory (over 48 KiB: it needs the raised
/// shared-memory limit).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn pipelined<T: Mma16x8x8>(m: u32, n: u32, k: u32, a: *const T, b: *const T, c: *mut T) {
    let (a, b) = (Strided { ptr: a, ld: k }, Strided { ptr: b, ld: n });
    // SAFETY: the caller's arguments: dense m x k, k x n and m x n matrices.
    unsafe { main_loop(m, n, k, a, b, StridedMut { ptr: c, ld: n }, Epilogue::Store) }
}

/// [`pipelined`] with A and B blocks of larger matrices, for the copies in aligned rows that
/// the host makes where a matrix's rows are not 16-byte aligned (`super::aligned_rows`). An
/// entry point of its own: with leading dimensions apart from k and n, ptxas schedules the
/// dense f64 kernel slower (PERF.md).
#[gpu::kernel(T = f32 | f64)]
pub unsafe fn strided<T: Mma16x8x8>(m: u32, n: u32, k: u32, a: Strided<T>, b: Strided<T>, c: *mut T) {
    // SAFETY: the caller's arguments: m x k and k x n blocks, dense m x n C.
    unsafe { main_loop(m, n, k, a, b, StridedMut { ptr: c, ld: n }, Epilogue::Store) }
}
