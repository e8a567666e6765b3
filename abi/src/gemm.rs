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

/// The pipelined f64 tensor-core kernel (m16n8k8, sm_90): PIPELINED_WARPS_M x
/// PIPELINED_WARPS_N warps of PIPELINED_MT x PIPELINED_NT mma tiles (16 x 8 each), k-tiles of
/// PIPELINED_K, PIPELINED_STAGES stages of cp.async copies.
pub const PIPELINED_WARPS_M: u32 = 2;
pub const PIPELINED_WARPS_N: u32 = 2;
pub const PIPELINED_MT: usize = 4;
pub const PIPELINED_NT: usize = 4;
pub const PIPELINED_K: u32 = 16;
pub const PIPELINED_STAGES: u32 = 3;
/// Block tile: 128 x 64, 128 threads.
pub const PIPELINED_TILE_M: u32 = 16 * PIPELINED_MT as u32 * PIPELINED_WARPS_M;
pub const PIPELINED_TILE_N: u32 = 8 * PIPELINED_NT as u32 * PIPELINED_WARPS_N;
pub const PIPELINED_THREADS: u32 = 32 * PIPELINED_WARPS_M * PIPELINED_WARPS_N;
/// Shared bytes: the stages, each the A tile (rows of K + 4) and the B tile (rows of N + 4).
pub const PIPELINED_SHARED_BYTES: usize = (PIPELINED_STAGES
    * (PIPELINED_TILE_M * (PIPELINED_K + 4) + PIPELINED_K * (PIPELINED_TILE_N + 4))
    * 8) as usize;

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
