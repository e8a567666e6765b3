//! Shapes of the GEMM kernels.

/// The Naples report's tile sides (`tiled`: T x T threads, T x T tiles of A and B).
pub const TILED_TILES: [u32; 5] = [2, 4, 8, 16, 32];

/// Shared bytes of the tiled kernel at tile side `tile`: a tile of A and one of B.
pub const fn tiled_shared_bytes(tile: u32, elem_size: usize) -> usize {
    2 * (tile * tile) as usize * elem_size
}

/// `blocked`: a BLOCKED_TILE x BLOCKED_TILE tile of C per block of BLOCKED_THREADS threads,
/// each an 8 x 8 sub-tile, k staged BLOCKED_K at a time.
pub const BLOCKED_TILE: u32 = 128;
pub const BLOCKED_THREADS: u32 = 256;
pub const BLOCKED_K: u32 = 8;

/// Shared bytes of `blocked`: two stages of the A and B k-tiles (BLOCKED_K x BLOCKED_TILE each).
pub const fn blocked_shared_bytes(elem_size: usize) -> usize {
    2 * (2 * BLOCKED_K * BLOCKED_TILE) as usize * elem_size
}

/// `blocked_wide` (f32): a BLOCKED_WIDE_M x BLOCKED_WIDE_N tile of C per block of
/// BLOCKED_THREADS threads (4 x 2 warps of 64 x 64), each a 16 x 8 sub-tile, k staged BLOCKED_K
/// at a time; A's transposed rows padded by 4 floats (BLOCKED_WIDE_A_STRIDE), so that the
/// threads' transposing stores fall in distinct banks.
pub const BLOCKED_WIDE_M: u32 = 256;
pub const BLOCKED_WIDE_N: u32 = 128;
pub const BLOCKED_WIDE_A_STRIDE: u32 = BLOCKED_WIDE_M + 4;

/// Shared bytes of `blocked_wide`: two stages of A's k-tile (transposed, padded) and B's.
pub const fn blocked_wide_shared_bytes() -> usize {
    2 * (BLOCKED_K * (BLOCKED_WIDE_A_STRIDE + BLOCKED_WIDE_N)) as usize * 4
}

/// The f64 tensor-core kernels `dmma`, `dmma16` and the update's `dmma`: a DMMA_TILE x
/// DMMA_TILE tile of C per block of DMMA_THREADS threads (2 x 2 warps), k staged DMMA_K at a
/// time; shared rows padded by 4 doubles (A: DMMA_K + 4, B: DMMA_TILE + 4) so that the lanes'
/// fragment reads fall in distinct banks.
pub const DMMA_TILE: u32 = 64;
pub const DMMA_THREADS: u32 = 128;
pub const DMMA_K: u32 = 16;
pub const DMMA_A_STRIDE: u32 = DMMA_K + 4;
pub const DMMA_B_STRIDE: u32 = DMMA_TILE + 4;
/// Shared bytes of the DMMA kernels: the A tile (64 x 20) and the B tile (16 x 68), f64.
pub const DMMA_SHARED_BYTES: usize = ((DMMA_TILE * DMMA_A_STRIDE + DMMA_K * DMMA_B_STRIDE) * 8) as usize;

/// Mma tiles (16 x 8 each) per warp of the pipelined tensor-core kernel, down and across.
pub const PIPELINED_MT: usize = 4;
pub const PIPELINED_NT: usize = 4;

/// The shape of the pipelined tensor-core kernel (m16n8k8, sm_90: f64 DMMA, f32 through TF32)
/// for one element size: warps_m x warps_n warps of 64 x 32 (PIPELINED_MT x PIPELINED_NT mma
/// tiles), k-tiles of 128 bytes of each row of A, `stages` stages of cp.async copies, and the
/// padded row lengths of the shared tiles (A: k + 4, B: tile_n + 32 bytes, C in the epilogue:
/// tile_n + 8), so that the lanes' fragment reads fall in distinct banks and rows stay 16-byte
/// aligned. f32 takes twice the block tile of f64 across: TF32 mma's run at twice DMMA's rate,
/// and need twice the flops per byte brought in from L2.
#[derive(Clone, Copy)]
pub struct PipelinedShape {
    pub warps_m: u32,
    pub warps_n: u32,
    pub tile_m: u32,
    pub tile_n: u32,
    pub k: u32,
    pub stages: u32,
    pub threads: u32,
    pub a_stride: u32,
    pub b_stride: u32,
    pub c_stride: u32,
}

impl PipelinedShape {
    pub const fn of(elem_size: usize) -> PipelinedShape {
        let (warps_m, warps_n) = if elem_size == 4 { (2, 4) } else { (2, 2) };
        let tile_n = 8 * PIPELINED_NT as u32 * warps_n;
        let k = 128 / elem_size as u32;
        PipelinedShape {
            warps_m,
            warps_n,
            tile_m: 16 * PIPELINED_MT as u32 * warps_m,
            tile_n,
            k,
            stages: 3,
            threads: 32 * warps_m * warps_n,
            a_stride: k + 4,
            b_stride: tile_n + 32 / elem_size as u32,
            c_stride: tile_n + 8,
        }
    }

    /// Elements of one stage: the A tile (tile_m x k) then the B tile (k x tile_n), padded.
    pub const fn stage_len(&self) -> u32 {
        self.tile_m * self.a_stride + self.k * self.b_stride
    }

    /// Dynamic shared bytes: the stages (the C tile reuses them).
    pub const fn shared_bytes(&self, elem_size: usize) -> usize {
        (self.stages * self.stage_len()) as usize * elem_size
    }

    /// Blocks of an m x n product (one per block tile).
    pub const fn blocks(&self, m: usize, n: usize) -> usize {
        m.div_ceil(self.tile_m as usize) * n.div_ceil(self.tile_n as usize)
    }
}

/// The update's SIMT kernel: a UPDATE_TILE x UPDATE_TILE tile of C per block of
/// UPDATE_SIMT_THREADS threads (4 x 4 each), k staged UPDATE_SIMT_K at a time. The update's
/// DMMA kernel has the same tile.
pub const UPDATE_TILE: u32 = 64;
pub const UPDATE_SIMT_THREADS: u32 = 256;
pub const UPDATE_SIMT_K: u32 = 16;

/// Shared bytes of the update's SIMT kernel: A (transposed) and B, UPDATE_SIMT_K x UPDATE_TILE each.
pub const fn update_simt_shared_bytes(elem_size: usize) -> usize {
    2 * (UPDATE_SIMT_K * UPDATE_TILE) as usize * elem_size
}

const _: () = assert!(UPDATE_TILE == DMMA_TILE, "the update's two kernels share one grid");

/// The warpgroup-MMA TF32 kernels (sm_90a): a WGMMA_BM x WGMMA_BN tile of C per block of two
/// computing warpgroups (each WGMMA_BN / 2 columns), k WGMMA_BK at a time, WGMMA_STAGES stages
/// of A's WGMMA_BM x WGMMA_BK tile and B's WGMMA_BK x WGMMA_BN one, copied by the tensor memory
/// accelerator.
pub const WGMMA_BM: u32 = 256;
pub const WGMMA_BN: u32 = 128;
pub const WGMMA_BK: u32 = 32;
pub const WGMMA_STAGES: u32 = 4;
/// Threads of the two computing warpgroups: a block of `gemm::update::wgmma`.
pub const WGMMA_MMA_THREADS: u32 = 256;
/// A block of the GEMM `gemm::wgmma::tf32`: a copy warpgroup as well.
pub const WGMMA_THREADS: u32 = WGMMA_MMA_THREADS + 128;
/// Blocks per cluster of `gemm::wgmma::tf32`: the blocks of a cluster take neighbouring tiles
/// of one tile row and each copies WGMMA_BM / WGMMA_CLUSTER rows of A's tile into all.
pub const WGMMA_CLUSTER: u32 = 2;

/// Bytes of one stage of the warpgroup-MMA kernel (a multiple of 1024, as the swizzle needs).
pub const fn wgmma_stage_bytes() -> u32 {
    (WGMMA_BM + WGMMA_BN) * WGMMA_BK * 4
}

/// Dynamic shared bytes of the warpgroup-MMA kernel: the stages, two mbarriers per stage
/// (copies landed, stage freed), and 1024 bytes to align the stages.
pub const fn wgmma_shared_bytes() -> usize {
    (WGMMA_STAGES * wgmma_stage_bytes() + 16 * WGMMA_STAGES + 1024) as usize
}

const _: () = assert!(wgmma_stage_bytes().is_multiple_of(1024) && WGMMA_BK * 4 == 128);

/// `gemm::dmma_tma` (f64, the sm_90a module): the pipelined kernel's f64 tiles
/// (`PipelinedShape::of(8)`: 128 x 64 block tiles, k-tiles of 16, 2 x 2 warps), DMMA_TMA_STAGES
/// stages copied by the tensor memory accelerator: A's tile in rows of 128 bytes (the 128-byte
/// swizzle), B's in groups of DMMA_TMA_B_GROUP columns (rows of 64 bytes, unswizzled).
pub const DMMA_TMA_STAGES: u32 = 4;
pub const DMMA_TMA_B_GROUP: u32 = 8;

/// Bytes of one stage of `dmma_tma` (a multiple of 1024, as the swizzle needs).
pub const fn dmma_tma_stage_bytes() -> u32 {
    let shape = PipelinedShape::of(8);
    (shape.tile_m + shape.tile_n) * shape.k * 8
}

/// Dynamic shared bytes of `dmma_tma`: the stages (the C tile reuses them), two mbarriers per
/// stage (copies landed, stage freed), and 1024 bytes to align the stages.
pub const fn dmma_tma_shared_bytes() -> usize {
    (DMMA_TMA_STAGES * dmma_tma_stage_bytes() + 16 * DMMA_TMA_STAGES + 1024) as usize
}

/// Blocks of `dmma_tma` an SM holds at once (H100 and H200: 228 KB of shared memory an SM,
/// 1 KB of it reserved per block; 248 registers a thread).
pub const DMMA_TMA_BLOCKS_PER_SM: u32 = 2;

const _: () = {
    let shape = PipelinedShape::of(8);
    assert!(dmma_tma_stage_bytes().is_multiple_of(1024) && shape.k * 8 == 128);
    assert!(shape.tile_m * shape.c_stride * 8 <= DMMA_TMA_STAGES * dmma_tma_stage_bytes());
    assert!(DMMA_TMA_BLOCKS_PER_SM as usize * (dmma_tma_shared_bytes() + 1024) <= 228 * 1024);
};

/// How `dmma-tma` splits the tiles past its last full wave along k. Tiles `whole..` of the
/// grouped order each go to `pieces` blocks (`gemm::dmma_tma::split_tail`), which take a share
/// of the k-tiles each and store their partial tiles for `gemm::dmma_tma::sum_pieces` to add
/// up in order; `gemm::dmma_tma::dmma_tma` on `whole` blocks computes the rest. Without it the
/// last wave runs a few whole tiles while most of the SMs wait. `pieces = 1`: no split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SplitTail {
    pub whole: u32,
    pub pieces: u32,
}

impl SplitTail {
    /// Whole tiles only.
    pub const NONE: SplitTail = SplitTail { whole: u32::MAX, pieces: 1 };

    /// The split of `tiles` tiles of `k_tiles` k-tiles each, `slots` blocks running at once:
    /// the tiles past the last full wave (all of them where they are fewer than a wave) in as
    /// many pieces as fill a wave, each of at least `SPLIT_MIN_K_TILES` k-tiles, at most
    /// `SPLIT_MAX_PIECES`; none below `SPLIT_MIN_PIECES` or past `SPLIT_MAX_WAVES` full waves.
    pub fn of(tiles: u32, k_tiles: u32, slots: u32) -> SplitTail {
        let (waves, tail) = (tiles / slots.max(1), tiles % slots.max(1));
        if waves > SPLIT_MAX_WAVES || tail == 0 {
            return SplitTail::NONE;
        }
        let pieces = (slots / tail).min(k_tiles / SPLIT_MIN_K_TILES).min(SPLIT_MAX_PIECES);
        if pieces < SPLIT_MIN_PIECES { SplitTail::NONE } else { SplitTail { whole: tiles - tail, pieces } }
    }

    /// The split of `blocked_wide`'s `rows x cols` tiles of `k` values of k on `sms` SMs (one
    /// block an SM), whose pieces run beside the whole tiles and take the SMs the whole tiles'
    /// last wave leaves (`gemm::blocked::wide_pieces`). Split are the last rows of tiles, as
    /// few as hold the tiles past the last full wave, in the number of pieces (3 to
    /// `SPLIT_MAX_PIECES`, each at least `WIDE_SPLIT_MIN_K` long) that ends the soonest by
    /// [`wide_split_end`] and `WIDE_PIECE_COST_K`, or within 1% of it with fewer pieces; none
    /// where that saves less than `WIDE_SPLIT_MIN_GAIN` of the time of whole tiles alone.
    pub fn beside(rows: u32, cols: u32, k: u32, sms: u32) -> SplitTail {
        let (tiles, sms) = (rows * cols, sms.max(1));
        let tail = tiles % sms;
        if tail == 0 {
            return SplitTail::NONE;
        }
        let whole = (rows - tail.div_ceil(cols)) * cols;
        let most = (k / WIDE_SPLIT_MIN_K).min(SPLIT_MAX_PIECES);
        let split = tiles - whole;
        let traffic = |pieces: u32| (split * pieces) as f64 * WIDE_PIECE_COST_K / k as f64;
        let ends = (SPLIT_MIN_PIECES..=most)
            .map(|pieces| (pieces, wide_split_end(whole, split, pieces, sms) + traffic(pieces)));
        let Some(soonest) = ends.clone().map(|(_, end)| end).reduce(f64::min) else {
            return SplitTail::NONE;
        };
        let (pieces, end) = ends.clone().find(|&(_, end)| end <= 1.01 * soonest).unwrap_or((1, 0.0));
        let unsplit = tiles.div_ceil(sms) as f64;
        if end > (1.0 - WIDE_SPLIT_MIN_GAIN) * unsplit {
            return SplitTail::NONE;
        }
        SplitTail { whole, pieces }
    }

    /// Partial tiles of the split for `tiles` tiles (0 without one).
    pub fn partials(self, tiles: u32) -> u32 {
        tiles.saturating_sub(self.whole) * self.pieces
    }
}

/// The fewest k-tiles of a piece of [`SplitTail`] (its prologue and partial store amortised);
/// the fewest and the most pieces of a tile; the most full waves before the split tiles. Two
/// pieces and 28 full waves measured slower than no split, 31 no faster: the last wave's share
/// of the time shrinks with the waves before it (PERF.md).
pub const SPLIT_MIN_K_TILES: u32 = 8;
pub const SPLIT_MIN_PIECES: u32 = 3;
pub const SPLIT_MAX_PIECES: u32 = 16;
pub const SPLIT_MAX_WAVES: u32 = 16;

/// When `whole` whole tiles and `split` tiles in `pieces` pieces each end, in tiles' times, on
/// `sms` SMs of one block each, the whole tiles dispatched first and each piece taking the
/// first SM free (a piece takes 1 / pieces of a tile's time).
pub fn wide_split_end(whole: u32, split: u32, pieces: u32, sms: u32) -> f64 {
    // `early` SMs are free after `rounds` tiles' times, the others a tile later; pieces are
    // counted in steps of 1 / pieces.
    let (rounds, late) = (whole / sms, whole % sms);
    let early = sms - late;
    let (start, needed) = ((rounds * pieces) as u64, (split * pieces) as u64);
    let done = |step: u64| {
        early as u64 * step.saturating_sub(start) + late as u64 * step.saturating_sub(start + pieces as u64)
    };
    let mut step = start;
    while done(step) < needed {
        step += 1;
    }
    let whole_end = rounds + u32::from(late > 0);
    (step as f64 / pieces as f64).max(whole_end as f64)
}

/// The shortest piece of `SplitTail::beside` in values of k (its prologue amortised), and the
/// least gain for which it splits (below, the sum's launch and the pieces' prologues would take
/// what the model says it saves).
pub const WIDE_SPLIT_MIN_K: u32 = 128;
pub const WIDE_SPLIT_MIN_GAIN: f64 = 0.03;

/// What one piece's partial tile costs the whole GPU (stored, then read by the sum: 256 KB
/// through DRAM, with the piece's prologue about 0.1 us), in steps of k of one `wide` tile on
/// one SM (about 0.17 us each): the split's end in tiles' times grows by this much / k a piece.
/// Without it, 1536^3 took 11 pieces, not 5, and ran 13% slower (PERF.md).
pub const WIDE_PIECE_COST_K: f64 = 0.6;

#[cfg(test)]
mod tests {
    use super::{SplitTail, wide_split_end};

    #[test]
    fn blocked_wide_splits_its_last_rows_where_their_pieces_fill_the_last_wave() {
        // 5000 x 3000 (20 x 24 tiles) on 132 SMs: 84 tiles past 3 waves; 4 rows of 24 in 3
        // pieces end at 3.67 waves of tiles instead of 4 (11 pieces: 3.64).
        assert_eq!(SplitTail::beside(20, 24, 7004, 132), SplitTail { whole: 384, pieces: 3 });
        assert!((wide_split_end(384, 96, 3, 132) - 11.0 / 3.0).abs() < 1e-12);
        assert!((wide_split_end(384, 96, 11, 132) - 40.0 / 11.0).abs() < 1e-12);
        // n = 1000: 32 tiles, all split, in 4 pieces of 248-256 (a wave of 128 pieces).
        assert_eq!(SplitTail::beside(4, 8, 1000, 132), SplitTail { whole: 0, pieces: 4 });
        // The GPU tests' shapes: 1000 x 1004 x 1000, 2100 x 516 x 1100 and 2 x 3000 x 7.
        assert_eq!(SplitTail::beside(4, 8, 1004, 132), SplitTail { whole: 0, pieces: 4 });
        assert_eq!(SplitTail::beside(9, 9, 516, 132), SplitTail { whole: 0, pieces: 3 });
        assert_eq!(SplitTail::beside(1, 1, 3000, 132), SplitTail { whole: 0, pieces: 16 });
        // 4097 x 4099 (17 x 33 tiles): the 33 past 4 waves in 4 pieces, a wave of their own.
        assert_eq!(SplitTail::beside(17, 33, 4096, 132), SplitTail { whole: 528, pieces: 4 });
        // No split: whole waves, a gain under 4% (n = 4096 and 8192: 3.94 and 15.67 against 4
        // and 16), too short a k, a wave's tiles or fewer.
        for (rows, cols, k) in [(11, 12, 4096), (16, 32, 4096), (32, 64, 8192), (20, 24, 700), (8, 16, 2000)]
        {
            assert_eq!(
                SplitTail::beside(rows, cols, k, 132),
                SplitTail::NONE,
                "{rows} x {cols} tiles, k = {k}"
            );
        }
    }

    #[test]
    fn the_last_wave_is_split_where_that_fills_it() {
        // 5000 x 3000 (40 x 47 tiles), k = 7001: 32 tiles past 7 waves, 8 pieces of 54-55 k-tiles.
        let split = SplitTail::of(1880, 438, 264);
        assert_eq!((split, split.partials(1880)), (SplitTail { whole: 1848, pieces: 8 }, 256));
        // 4097 x 4099 (33 x 65 tiles): 33 past 8 waves; at most 16 pieces (2 x 3000 x 7 on
        // many more SMs).
        assert_eq!(SplitTail::of(2145, 256, 264), SplitTail { whole: 2112, pieces: 8 });
        // Fewer tiles than a wave: all split (2 x 3000 x 7, a tile of 188 k-tiles, in 16).
        assert_eq!(SplitTail::of(1, 188, 264), SplitTail { whole: 0, pieces: 16 });
        assert_eq!(SplitTail::of(3, 188, 2640), SplitTail { whole: 0, pieces: 16 });
        assert_eq!(SplitTail::of(2641, 188, 2640).pieces, 16);
        // No split: a tail that would take 1 or 2 pieces (1024^3: 128 tiles), whole waves,
        // too few k-tiles, too many waves (n = 8192: 8 tiles past 31 waves).
        for (tiles, k_tiles) in [(128, 64), (2048, 256), (4345, 188), (528, 256), (1880, 23), (8192, 512)] {
            let split = SplitTail::of(tiles, k_tiles, 264);
            assert_eq!(
                (split, split.partials(tiles)),
                (SplitTail::NONE, 0),
                "{tiles} tiles of {k_tiles} k-tiles"
            );
        }
    }
}
