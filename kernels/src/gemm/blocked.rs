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
//!
//! One block an SM leaves SMs idle in the last wave of tiles: [`wide_pieces`] computes the last
//! rows of tiles in pieces along k beside it, and [`wide_sum_pieces`] adds the pieces up.

use abi::Strided;
use abi::gemm::{
    BLOCKED_K as BK, BLOCKED_TILE, BLOCKED_WIDE_A_STRIDE as WIDE_AS, BLOCKED_WIDE_M, BLOCKED_WIDE_N,
};

use crate::device::Float;
use crate::device::memory::{load_nc, load_quad, load_quad_nc, store_quad};
use crate::device::shared::{self, SharedArray};
use crate::device::thread::{
    block_dim_x, block_idx_x, block_idx_y, lane_id, sync_threads, thread_idx_x, warp_id,
};

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

impl WideStaged {
    const ZERO: Self = WideStaged { a: [[0.0; 4]; 2], b: [0.0; 4] };
}

/// C = A B in f32 as [`blocked`], on a 256 x 128 tile of C per block of 256 threads: warps of
/// 64 x 64 in 4 x 2, each lane 16 rows (`16 q + 4 (lane / 8) + {0..3}` of its warp's, q < 4) and
/// 8 columns (`32 h + 4 (lane % 8) + {0..3}`, h < 2), so that a k-step's 24 values come in six
/// 16-byte shared reads for 128 products. Launch: grid (ceil(n / 128), ceil(m / 256)), 256
/// threads; shared bytes: `abi::gemm::blocked_wide_shared_bytes()`.
#[gpu::kernel]
pub unsafe fn wide(m: u32, n: u32, k: u32, a: *const f32, b: *const f32, c: *mut f32) {
    // SAFETY: the caller's dense m x k, k x n and m x n matrices.
    unsafe { wide_tile(m, n, k, Strided { ptr: a, ld: k }, Strided { ptr: b, ld: n }, WidePart::Whole(c)) }
}

/// [`wide`] with A and B blocks of larger matrices, for the copies in 16-byte aligned rows
/// that the host makes where a matrix's rows are not aligned (with k padded by zeros to a
/// multiple of 4): the k-loop then reads vectors.
#[gpu::kernel]
pub unsafe fn wide_strided(m: u32, n: u32, k: u32, a: Strided<f32>, b: Strided<f32>, c: *mut f32) {
    // SAFETY: the caller's m x k and k x n blocks and dense m x n C.
    unsafe { wide_tile(m, n, k, a, b, WidePart::Whole(c)) }
}

/// Tiles of [`wide`]'s C from tile `whole` on (row-major), split along k in `pieces`
/// (`abi::gemm::SplitTail::beside`): block b takes piece b % pieces of tile whole + b / pieces,
/// a share of the k-tiles, and stores its partial 256 x 128 tile to `partials` (dense, after one
/// another, a tile's pieces together), which [`wide_sum_pieces`] adds into C. They run beside
/// `wide` on the tiles before `whole`, on the SMs its last wave leaves idle. Launch: (tiles -
/// whole) x pieces blocks (1D), 256 threads; shared bytes as `wide`.
#[gpu::kernel]
pub unsafe fn wide_pieces(
    m: u32,
    n: u32,
    k: u32,
    a: Strided<f32>,
    b: Strided<f32>,
    whole: u32,
    pieces: u32,
    partials: *mut f32,
) {
    // This piece's share of k: whole k-tiles of 8 (the last piece takes the rest), so that its
    // columns of A and rows of B start as aligned as A's and B's.
    let piece = block_idx_x() % pieces;
    let share =
        |p: u32| if p == pieces { k } else { (p as u64 * (k / BK) as u64 / pieces as u64) as u32 * BK };
    let (k0, k1) = (share(piece), share(piece + 1));
    let a = Strided { ptr: a.ptr.wrapping_add(k0 as usize), ld: a.ld };
    let b = Strided { ptr: b.ptr.wrapping_add(k0 as usize * b.ld as usize), ld: b.ld };
    // SAFETY: the caller's m x k and k x n blocks (these are their columns and rows k0..k1),
    // and the partial tiles (the launch contract).
    unsafe { wide_tile(m, n, k1 - k0, a, b, WidePart::Piece { whole, pieces, partials }) }
}

/// Floats of a partial tile of [`wide_pieces`].
const PARTIAL_LEN: u32 = BLOCKED_WIDE_M * BLOCKED_WIDE_N;

/// C's tiles from `whole` on ([`wide_pieces`]'s), each element the sum of its tile's `pieces`
/// partial tiles in order. Launch: a thread per element of the split tiles, blocks of 256.
#[gpu::kernel]
pub unsafe fn wide_sum_pieces(m: u32, n: u32, whole: u32, pieces: u32, partials: *const f32, c: *mut f32) {
    let element = block_idx_x() * block_dim_x() + thread_idx_x();
    let (tile, e) = (element / PARTIAL_LEN, element % PARTIAL_LEN);
    let (row0, col0) = tile_of_tail(whole + tile, n);
    let tile_pieces = (partials.wrapping_add((tile * pieces * PARTIAL_LEN) as usize), pieces, PARTIAL_LEN);
    // SAFETY: the tile's partial tiles (the launch contract) and the dense m x n C.
    unsafe { super::add_pieces(tile_pieces, e, (row0, col0, BLOCKED_WIDE_N), (m, n), c) }
}

/// The first row and column of tile `id` of a `wide` C with n columns, in row-major order.
#[inline(always)]
fn tile_of_tail(id: u32, n: u32) -> (u32, u32) {
    let cols = n.div_ceil(BLOCKED_WIDE_N);
    (id / cols * BLOCKED_WIDE_M, id % cols * BLOCKED_WIDE_N)
}

/// What a `wide` block computes: C's tile at its place in the 2D grid, or one piece of a split
/// tile ([`wide_pieces`]).
#[derive(Clone, Copy)]
enum WidePart {
    Whole(*mut f32),
    Piece { whole: u32, pieces: u32, partials: *mut f32 },
}

impl WidePart {
    /// The first row and column of this block's tile.
    #[inline(always)]
    fn tile(self, n: u32) -> (u32, u32) {
        match self {
            WidePart::Whole(_) => (block_idx_y() * BLOCKED_WIDE_M, block_idx_x() * BLOCKED_WIDE_N),
            WidePart::Piece { whole, pieces, .. } => tile_of_tail(whole + block_idx_x() / pieces, n),
        }
    }

    /// Where the block's product goes: a dense matrix, its shape, and the tile's first row and
    /// column in it (C's m x n, or a 256 x 128 partial tile).
    #[inline(always)]
    fn out(self, c_shape: (u32, u32), tile: (u32, u32)) -> (*mut f32, (u32, u32), (u32, u32)) {
        match self {
            WidePart::Whole(c) => (c, c_shape, tile),
            WidePart::Piece { partials, .. } => {
                let partial = partials.wrapping_add((block_idx_x() * PARTIAL_LEN) as usize);
                (partial, (BLOCKED_WIDE_M, BLOCKED_WIDE_N), (0, 0))
            }
        }
    }
}

/// This block's part of C = A B ([`WidePart`]), for [`wide`], [`wide_strided`] and
/// [`wide_pieces`].
///
/// # Safety
/// A and B are m x k and k x n blocks, C a dense m x n matrix; the launch is `wide`'s, or
/// `wide_pieces`'s with its partial tiles.
#[inline(always)]
unsafe fn wide_tile(m: u32, n: u32, k: u32, a: Strided<f32>, b: Strided<f32>, part: WidePart) {
    let (tid, warp, lane) = (thread_idx_x(), warp_id(), lane_id());
    // This lane's first row and column in the tile.
    let (row_in, col_in) = ((warp / 2) * 64 + 4 * (lane / 8), (warp % 2) * 64 + 4 * (lane % 8));
    let (row0, col0) = part.tile(n);
    let source = WideSource::new(a, b, (m, n, k), (row0, col0), tid);
    let mut acc = [[0.0f32; 8]; 16];
    // Vector loads need 16-byte aligned rows of A and B, and k a multiple of 4 (the partial
    // k-tile comes first).
    let aligned_rows = |s: Strided<f32>| (s.ptr as usize).is_multiple_of(16) && s.ld.is_multiple_of(4);
    // SAFETY: WideSource reads only the values that exist.
    unsafe {
        if aligned_rows(a) && aligned_rows(b) && k.is_multiple_of(4) {
            wide_products::<true>(&mut acc, source, k.div_ceil(BK), (row_in, col_in), tid);
        } else {
            wide_products::<false>(&mut acc, source, k.div_ceil(BK), (row_in, col_in), tid);
        }
    }

    // Row i of the sub-tile: 16 (i / 4) + i % 4 past the lane's first; its 8 columns in two
    // vectors 32 apart. (Unrolled, so that acc's indices are constants.)
    let (c, (c_m, c_n), (c_row0, c_col0)) = part.out((m, n), (row0, col0));
    let aligned = c_n.is_multiple_of(4);
    unrolled!(i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
        let row = c_row0 + row_in + 16 * (i as u32 / 4) + i as u32 % 4;
        if row < c_m {
            let (out, col) = (c.wrapping_add((row * c_n) as usize), c_col0 + col_in);
            let v = acc[i];
            // SAFETY: row < c_m; each store is checked against c_n.
            unsafe {
                store_checked(out, col, c_n, aligned, [v[0], v[1], v[2], v[3]]);
                store_checked(out, col + 32, c_n, aligned, [v[4], v[5], v[6], v[7]]);
            }
        }
    });
}

/// acc += this lane's part of A B over `tiles` k-tiles from `source`, staged through registers
/// into two shared buffers: a tile's global loads are in flight while the tile before it is
/// multiplied. `VECTOR`: A's and B's rows are 16-byte aligned and k is a multiple of 4.
///
/// # Safety
/// The launch's shared memory holds two `wide` buffers.
#[inline(always)]
#[allow(
    unused_assignments,
    reason = "the last tile's step 7 holds an assignment of fragments behind a false `kk < 7`; \
              loading each step's fragments at its use instead ran slower (PERF.md)"
)]
unsafe fn wide_products<const VECTOR: bool>(
    acc: &mut [[f32; 8]; 16],
    mut source: WideSource,
    tiles: u32,
    (row_in, col_in): (u32, u32),
    tid: u32,
) {
    if tiles == 0 {
        return;
    }
    let buffers = shared::dynamic::<f32>();
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

    // SAFETY: buffer 0, read by no one yet.
    unsafe { store_wide_tile(buffers, 0, &source.first(), tid) };
    sync_threads();
    let mut frag = fragments(0, 0);
    // SAFETY: WideSource's bounds.
    let mut staged = if tiles > 1 { unsafe { source.next::<VECTOR>() } } else { WideStaged::ZERO };
    for tile in 0..tiles - 1 {
        let (buffer, next) = (tile % 2, (tile + 1) % 2);
        // Each step's products run on fragments loaded the step before. The last step stores
        // the next tile and passes the barrier first, so that the next tile's first fragments
        // load while its products run, not after them; then it loads the tile after next, which
        // keeps a whole tile of products between a global load and its use (ptxas sinks loads
        // issued at the top of the loop towards their use).
        unrolled!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
            let (a_frag, b_frag) = frag;
            if kk < 7 {
                frag = fragments(buffer, kk as u32 + 1);
            } else {
                // SAFETY: the other buffer, whose last fragments every thread loaded before
                // the previous barrier.
                unsafe { store_wide_tile(buffers, next, &staged, tid) };
                sync_threads();
                frag = fragments(next, 0);
                if tile + 2 < tiles {
                    // SAFETY: WideSource's bounds.
                    staged = unsafe { source.next::<VECTOR>() };
                }
            }
            wide_step(acc, a_frag, b_frag);
        });
    }
    // The last tile, with no next one to stage.
    let last = (tiles - 1) % 2;
    unrolled!(kk in [0, 1, 2, 3, 4, 5, 6, 7] {
        let (a_frag, b_frag) = frag;
        if kk < 7 {
            frag = fragments(last, kk as u32 + 1);
        }
        wide_step(acc, a_frag, b_frag);
    });
}

/// acc += a b for one k-step of `wide`, row by row: of the orders measured, the one whose
/// register assignment by ptxas ran fastest in this loop (PERF.md).
#[inline(always)]
fn wide_step(acc: &mut [[f32; 8]; 16], a: [[f32; 4]; 4], b: [[f32; 4]; 2]) {
    unrolled!(i in [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15] {
        unrolled!(j in [0, 1, 2, 3, 4, 5, 6, 7] {
            acc[i][j] = a[i / 4][i % 4].mul_add(b[j / 4][j % 4], acc[i][j]);
        });
    });
}

/// Where this thread reads its [`WideStaged`] share of each k-tile. The first k-tile is the
/// partial one (its first `skip` values of k are zeros), so that every later tile is whole
/// and only rows past m and columns past n are checked, with flags fixed for the whole loop.
struct WideSource {
    /// A's two rows and B's k row at this thread's first k value of the current tile.
    a: [*const f32; 2],
    b: *const f32,
    /// How many of each four values exist: 0 or 4 for A's rows, 0 to 4 for B's columns.
    a_valid: [u32; 2],
    b_valid: u32,
    /// Elements from one k-tile's row of B to the next's.
    b_step: usize,
    skip: u32,
    tid: u32,
}

impl WideSource {
    fn new(
        a: Strided<f32>,
        b: Strided<f32>,
        (m, n, k): (u32, u32, u32),
        (row0, col0): (u32, u32),
        tid: u32,
    ) -> Self {
        let skip = (BK - k % BK) % BK;
        let (a_row, b_col) = (row0 + tid / 2, col0 + 4 * (tid % 32));
        let a_at = |row: u32| {
            let at = row.wrapping_mul(a.ld) + 4 * (tid % 2);
            a.ptr.wrapping_add(at as usize).wrapping_sub(skip as usize)
        };
        let valid = |row: u32| if row < m { 4 } else { 0 };
        let b_at = (tid / 32) * b.ld + b_col;
        WideSource {
            a: [a_at(a_row), a_at(a_row + 128)],
            b: b.ptr.wrapping_add(b_at as usize).wrapping_sub((skip * b.ld) as usize),
            a_valid: [valid(a_row), valid(a_row + 128)],
            b_valid: n.saturating_sub(b_col).min(4),
            b_step: (BK * b.ld) as usize,
            skip,
            tid,
        }
    }

    /// The first k-tile's share, each value checked.
    ///
    /// # Safety
    /// A is m x k and B k x n, as given to [`WideSource::new`].
    unsafe fn first(&mut self) -> WideStaged {
        let a_k = 4 * (self.tid % 2);
        let b_row = self.tid / 32 >= self.skip;
        // SAFETY: only values inside A and B are read (k values of the tile at or past `skip`).
        let staged = unsafe {
            let a = |h: usize| {
                core::array::from_fn(|e| {
                    let ok = self.a_valid[h] > 0 && a_k + e as u32 >= self.skip;
                    if ok { load_nc(self.a[h].wrapping_add(e)) } else { 0.0 }
                })
            };
            let b = core::array::from_fn(|e| {
                if b_row && (e as u32) < self.b_valid { load_nc(self.b.wrapping_add(e)) } else { 0.0 }
            });
            WideStaged { a: [a(0), a(1)], b }
        };
        self.advance();
        staged
    }

    /// The next k-tile's share (a whole tile: only rows and columns are checked).
    ///
    /// # Safety
    /// As for [`WideSource::first`], which has been called, and a next tile exists.
    #[inline(always)]
    unsafe fn next<const VECTOR: bool>(&mut self) -> WideStaged {
        // SAFETY: the first `valid` values at `p` exist. With VECTOR, rows are 16-byte aligned
        // and a multiple of 4 long, so a vector starting before the end of a row's values lies
        // in the row; its values past n reach only columns of C that are not stored.
        let four = |p: *const f32, valid: u32| unsafe {
            match VECTOR {
                true if valid > 0 => load_quad_nc(p),
                true => [0.0; 4],
                false => load_checked(p, valid),
            }
        };
        let staged = WideStaged {
            a: [four(self.a[0], self.a_valid[0]), four(self.a[1], self.a_valid[1])],
            b: four(self.b, self.b_valid),
        };
        self.advance();
        staged
    }

    fn advance(&mut self) {
        self.a = self.a.map(|p| p.wrapping_add(BK as usize));
        self.b = self.b.wrapping_add(self.b_step);
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
