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

const _: () = {
    let shape = PipelinedShape::of(8);
    assert!(dmma_tma_stage_bytes().is_multiple_of(1024) && shape.k * 8 == 128);
    assert!(shape.tile_m * shape.c_stride * 8 <= DMMA_TMA_STAGES * dmma_tma_stage_bytes());
};
