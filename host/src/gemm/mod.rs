//! Dense C = A B (row-major, any shape): the GPU drivers of `kernels/src/gemm/` (the Naples
//! report's tiles, register-blocked SIMT, f64 tensor cores, TF32 tensor cores for f32), their
//! CPU references ([`cpu`]) and the trailing update the blocked LU drives ([`update`]).

pub mod cpu;
pub mod update;

use std::sync::Arc;

use crate::Scalar;
use crate::error::{Error, Result, unless_out_of_memory};
use crate::gpu::{
    CudaSlice, Gpu, Launch, MatrixView, MatrixViewMut, Queue, as_f32, as_f32_mut, as_f64, as_f64_mut,
    tensor_map,
};
use crate::kernels::gemm as kernels;

/// Checks buffer lengths against A m x k, B k x n, C m x n, and that the kernels' u32
/// indices cover them.
pub fn check_shapes(m: usize, n: usize, k: usize, a: usize, b: usize, c: usize) -> Result<()> {
    let size = |r: usize, s: usize| r.checked_mul(s).filter(|&v| v <= u32::MAX as usize);
    match (size(m, k), size(k, n), size(m, n)) {
        (Some(sa), Some(sb), Some(sc)) if sa == a && sb == b && sc == c => Ok(()),
        (Some(sa), Some(sb), Some(sc)) => Err(Error::InvalidInput(format!(
            "GEMM {m} x {k} times {k} x {n} needs buffers of {sa}, {sb} and {sc} elements, got {a}, {b} and {c}"
        ))),
        _ => Err(Error::InvalidInput(format!("GEMM {m} x {k} x {n}: a matrix exceeds 2^32 elements"))),
    }
}

/// The GPU GEMM kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GemmKernel {
    /// The Naples report's T x T shared-memory tiles (T in 2, 4, 8, 16, 32).
    Tiled(u32),
    /// Register-blocked SIMT: 128 x 128 block tiles, 8 x 8 per thread.
    Blocked,
    /// Register-blocked SIMT, f32 only: 256 x 128 block tiles, 16 x 8 per thread (cuBLAS's
    /// SGEMM shape), one block per SM. The rows of tiles past its last full wave are split
    /// along k where the pieces fill the SMs that wave leaves idle, or the SMs fewer tiles than
    /// a wave leave idle (`abi::gemm::SplitTail::beside`); a second kernel adds the pieces in
    /// order. A or B whose rows are not 16-byte aligned is read from a copy in aligned rows.
    BlockedWide,
    /// f64 tensor cores (mma.sync m8n8k4, sm_80+).
    Dmma,
    /// f64 tensor cores with Hopper's m16n8k4 shape (sm_90 module only).
    Dmma16,
    /// Hopper's m16n8k8 on 128 x 64 tiles fed by a 3-stage cp.async pipeline (sm_90 module
    /// only).
    DmmaPipelined,
    /// `DmmaPipelined`'s tiles and DMMAs fed by the tensor memory accelerator, each k-step's
    /// fragments loaded during the previous k-step's DMMAs (the sm_90a module only: H100 and
    /// H200). The copy engine reads rows that start 16-byte aligned, and B in groups of 8
    /// columns: where k is odd, A is copied into aligned rows first, and where n is not a
    /// multiple of 8, B into rows padded to 128-byte lines. The tiles past the last full wave
    /// (two blocks an SM) are split along k, so that they fill a wave of their own, after at
    /// most 16 full waves, and so are all tiles where they are fewer than a wave
    /// (`abi::gemm::SplitTail`); a second kernel adds their pieces in order.
    DmmaTma,
    /// f32 on tensor cores: the same kernel as `DmmaPipelined` with the inputs rounded to TF32
    /// (10 mantissa bits) and f32 accumulators (sm_90 module only). Not f32-accurate: its error
    /// is [`tf32_error_bound`]'s order.
    Tf32,
    /// f32 on TF32 tensor cores through Hopper's warpgroup MMA (`wgmma`, the sm_90a module
    /// only: H100 and H200), the inputs truncated to TF32 by the tensor cores: its error is
    /// [`tf32_truncated_error_bound`]'s order. The copy engine reads rows that
    /// start 16-byte aligned: where k or n is not a multiple of 4, A or B is copied into aligned
    /// rows first.
    Tf32Wgmma,
}

impl GemmKernel {
    pub fn name(self) -> String {
        match self {
            GemmKernel::Tiled(t) => format!("tiled{t}"),
            GemmKernel::Blocked => "blocked".into(),
            GemmKernel::BlockedWide => "blocked-wide".into(),
            GemmKernel::Dmma => "dmma".into(),
            GemmKernel::Dmma16 => "dmma16".into(),
            GemmKernel::DmmaPipelined => "dmma-pipelined".into(),
            GemmKernel::DmmaTma => "dmma-tma".into(),
            GemmKernel::Tf32 => "tf32".into(),
            GemmKernel::Tf32Wgmma => "tf32-wgmma".into(),
        }
    }

    pub fn from_name(name: &str, tile: Option<u32>) -> Option<GemmKernel> {
        match name {
            "tiled" => tile.filter(|t| TILES.contains(t)).or(Some(16)).map(GemmKernel::Tiled),
            "blocked" => Some(GemmKernel::Blocked),
            "blocked-wide" => Some(GemmKernel::BlockedWide),
            "dmma" => Some(GemmKernel::Dmma),
            "dmma16" => Some(GemmKernel::Dmma16),
            "dmma-pipelined" => Some(GemmKernel::DmmaPipelined),
            "dmma-tma" => Some(GemmKernel::DmmaTma),
            "tf32" => Some(GemmKernel::Tf32),
            "tf32-wgmma" => Some(GemmKernel::Tf32Wgmma),
            other => {
                other.strip_prefix("tiled")?.parse().ok().filter(|t| TILES.contains(t)).map(GemmKernel::Tiled)
            }
        }
    }

    /// Whether the kernel exists for `T` on this GPU (f64 tensor cores: f64 only, TF32 and
    /// `blocked-wide`: f32 only; m16n8k4 and m16n8k8 need the sm_90 module, `wgmma` the sm_90a
    /// one).
    pub fn supports<T: Scalar>(self, gpu: &Gpu) -> bool {
        match self {
            GemmKernel::BlockedWide => T::NAME == "f32",
            GemmKernel::Dmma => T::NAME == "f64",
            GemmKernel::DmmaTma => T::NAME == "f64" && gpu.ptx_name() == "sm_90a",
            GemmKernel::Dmma16 | GemmKernel::DmmaPipelined => T::NAME == "f64" && gpu.ptx_arch() >= 90,
            GemmKernel::Tf32 => T::NAME == "f32" && gpu.ptx_arch() >= 90,
            GemmKernel::Tf32Wgmma => T::NAME == "f32" && gpu.ptx_name() == "sm_90a",
            _ => true,
        }
    }

    /// Whether the kernel rounds its inputs below `T`'s precision (TF32).
    pub fn is_reduced_precision(self) -> bool {
        self.reduced_precision_bound(0).is_some()
    }

    /// Every kernel, tile sizes included.
    pub fn all() -> Vec<GemmKernel> {
        let mut all: Vec<GemmKernel> = TILES.into_iter().map(GemmKernel::Tiled).collect();
        all.extend([
            GemmKernel::Blocked,
            GemmKernel::BlockedWide,
            GemmKernel::Dmma,
            GemmKernel::Dmma16,
            GemmKernel::DmmaPipelined,
            GemmKernel::DmmaTma,
            GemmKernel::Tf32,
            GemmKernel::Tf32Wgmma,
        ]);
        all
    }
}

/// The report's tile sizes.
pub const TILES: [u32; 5] = abi::gemm::TILED_TILES;

/// C = A B on the GPU (A m x k, B k x n, C m x n, row-major device buffers).
#[allow(clippy::too_many_arguments)] // the BLAS shape: a kernel, three sizes, three matrices
pub fn gemm<T: Scalar>(
    gpu: &Gpu,
    kernel: GemmKernel,
    m: usize,
    n: usize,
    k: usize,
    a: &CudaSlice<T>,
    b: &CudaSlice<T>,
    c: &mut CudaSlice<T>,
) -> Result<()> {
    check_shapes(m, n, k, a.len(), b.len(), c.len())?;
    if m == 0 || n == 0 {
        return Ok(());
    }
    let grid = |tile: u32| tile_grid(m, n, (tile, tile));
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    let elem = size_of::<T>();
    // SAFETY (every launch): A, B and C hold the checked shapes; the grids cover C.
    unsafe {
        match kernel {
            GemmKernel::Tiled(t) => {
                if !TILES.contains(&t) {
                    return Err(Error::InvalidInput(format!("tile {t} (2, 4, 8, 16 or 32)")));
                }
                let launch = Launch::grid_2d(grid(t)?, (t, t)).shared(abi::gemm::tiled_shared_bytes(t, elem));
                kernels::tiled::tiled(gpu, launch, m32, n32, k32, a, b, c)
            }
            GemmKernel::Blocked => {
                let launch = Launch::grid_2d(grid(abi::gemm::BLOCKED_TILE)?, (abi::gemm::BLOCKED_THREADS, 1))
                    .shared(abi::gemm::blocked_shared_bytes(elem));
                kernels::blocked::blocked(gpu, launch, m32, n32, k32, a, b, c)
            }
            GemmKernel::BlockedWide => {
                let (Some(a), Some(b), Some(c)) = (as_f32(a), as_f32(b), as_f32_mut(c)) else {
                    return Err(Error::InvalidInput("the blocked-wide kernel is f32 only".into()));
                };
                blocked_wide(gpu, m, n, k, a, b, c)
            }
            GemmKernel::DmmaPipelined | GemmKernel::Tf32 => {
                if !kernel.supports::<T>(gpu) {
                    let kind = if kernel == GemmKernel::Tf32 { "f32" } else { "f64" };
                    return Err(Error::InvalidInput(format!(
                        "the {} tensor-core kernel is {kind} only, on sm_90 GPUs",
                        kernel.name()
                    )));
                }
                let launch = pipelined_launch::<T>(m, n);
                let (a_copy, b_copy) = (aligned_rows(gpu, m, k, a)?, aligned_rows(gpu, k, n, b)?);
                if a_copy.is_none() && b_copy.is_none() {
                    return kernels::pipelined::pipelined(gpu, launch, m32, n32, k32, a, b, c);
                }
                let (a, b) = (aligned_view(a, &a_copy, m, k)?, aligned_view(b, &b_copy, k, n)?);
                kernels::pipelined::strided(gpu, launch, m32, n32, k32, a, b, c)
            }
            GemmKernel::DmmaTma => {
                let (Some(a64), Some(b64), Some(c64), true) =
                    (as_f64(a), as_f64(b), as_f64_mut(c), kernel.supports::<T>(gpu))
                else {
                    return Err(Error::InvalidInput(
                        "the dmma-tma tensor-core kernel is f64 only, on H100 and H200 GPUs (the sm_90a module)".into(),
                    ));
                };
                dmma_tma(gpu, m, n, k, a64, b64, c64)
            }
            GemmKernel::Tf32Wgmma => {
                let (Some(a32), Some(b32), Some(c32), true) =
                    (as_f32(a), as_f32(b), as_f32_mut(c), kernel.supports::<T>(gpu))
                else {
                    return Err(Error::InvalidInput(
                        "the tf32-wgmma kernel is f32 only, on H100 and H200 GPUs (the sm_90a module)".into(),
                    ));
                };
                tf32_wgmma(gpu, m, n, k, a32, b32, c32)
            }
            GemmKernel::Dmma | GemmKernel::Dmma16 => {
                let supported = kernel.supports::<T>(gpu);
                let (Some(a), Some(b), Some(c), true) = (as_f64(a), as_f64(b), as_f64_mut(c), supported)
                else {
                    let sm90 = if kernel == GemmKernel::Dmma { "" } else { ", on sm_90 GPUs" };
                    return Err(Error::InvalidInput(format!(
                        "the {} tensor-core kernel is f64 only{sm90}",
                        kernel.name()
                    )));
                };
                use abi::gemm::*;
                let dmma = Launch::grid_2d(grid(DMMA_TILE)?, (DMMA_THREADS, 1)).shared(DMMA_SHARED_BYTES);
                if kernel == GemmKernel::Dmma {
                    kernels::dmma::dmma(gpu, dmma, m32, n32, k32, a, b, c)
                } else {
                    kernels::dmma16::dmma16(gpu, dmma, m32, n32, k32, a, b, c)
                }
            }
        }
    }
}

/// The 2D grid of `tile` (rows x columns) tiles over an m x n C: (columns, rows) of tiles.
fn tile_grid(m: usize, n: usize, (tile_m, tile_n): (u32, u32)) -> Result<(u32, u32)> {
    let rows = m.div_ceil(tile_m as usize);
    if rows > 65_535 {
        return Err(Error::InvalidInput(format!(
            "GEMM with {m} rows needs {rows} block rows (65535 at most)"
        )));
    }
    Ok((n.div_ceil(tile_n as usize) as u32, rows as u32))
}

/// `blocked-wide` on dense matrices: A and B through
/// copies in aligned rows where theirs are not (k padded with zeros to a multiple of 4: zero
/// columns of A, zero rows of B; element by element where the copies do not fit), and the last
/// rows of tiles split along k where their pieces fill the SMs that the last wave of whole
/// tiles leaves idle (`abi::gemm::SplitTail::beside`; without the split where there is no room
/// for the pieces). The whole tiles then run on a stream of higher priority, so that the GPU
/// starts all of them first, and the pieces and their sum beside them on the GPU's own stream.
fn blocked_wide(
    gpu: &Gpu,
    m: usize,
    n: usize,
    k: usize,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
) -> Result<()> {
    use abi::gemm::{BLOCKED_THREADS, BLOCKED_WIDE_M, BLOCKED_WIDE_N, SplitTail, blocked_wide_shared_bytes};
    let (cols, rows) = tile_grid(m, n, (BLOCKED_WIDE_M, BLOCKED_WIDE_N))?;
    let k4 = k.next_multiple_of(4);
    let (a_copy, b_copy) = if k == k4 && n.is_multiple_of(4) {
        (None, None)
    } else {
        let a_copy = if k == k4 { None } else { padded_rows(gpu, a, (m, k), m)? };
        let b_copy = if k == k4 || a_copy.is_some() { padded_rows(gpu, b, (k, n), k4)? } else { None };
        (a_copy, b_copy)
    };
    // Here A is copied unless k is a multiple of 4 already (k4 == k); without B's copy the
    // kernels read A and B as they are.
    let k_read = if b_copy.is_some() { k4 } else { k };
    let (a_view, b_view) = (aligned_view(a, &a_copy, m, k_read)?, aligned_view(b, &b_copy, k_read, n)?);
    let (m32, n32, k32) = (m as u32, n as u32, k_read as u32);
    let whole_tiles = |queue: Queue, rows: u32, c: &mut CudaSlice<f32>| {
        let launch = Launch::grid_2d((cols, rows), (BLOCKED_THREADS, 1)).shared(blocked_wide_shared_bytes());
        // SAFETY: A and B hold the m x k and k x n blocks the views describe; C holds m x n;
        // the grid covers C's first `rows` rows of tiles.
        unsafe {
            match b_copy {
                None => kernels::blocked::wide(queue, launch, m32, n32, k32, a, b, c),
                Some(_) => kernels::blocked::wide_strided(queue, launch, m32, n32, k32, a_view, b_view, c),
            }
        }
    };

    let split = SplitTail::beside(rows, cols, k32, gpu.props().sm_count);
    let tile_len = (BLOCKED_WIDE_M * BLOCKED_WIDE_N) as usize;
    let pieces_len = split.partials(rows * cols) as usize;
    // (No split where there is no room for the pieces.)
    let Some(mut partials) = workspace::<f32>(gpu, pieces_len * tile_len)? else {
        return whole_tiles(gpu.into(), rows, c);
    };
    let SplitTail { whole, pieces } = split;
    let whole_stream = gpu.side_stream()?;
    whole_stream.join(gpu.stream()).map_err(Error::driver("stream wait"))?;
    if whole > 0 {
        whole_tiles(gpu.on(whole_stream), whole / cols, c)?;
    }
    let launch = Launch::linear(pieces_len * BLOCKED_THREADS as usize, BLOCKED_THREADS)
        .shared(blocked_wide_shared_bytes());
    let sum = Launch::linear((rows * cols - whole) as usize * tile_len, 256);
    // SAFETY: as above; `partials` holds the split tiles' pieces; the pieces' and the sum's
    // tiles are C's rows of tiles past the whole ones, which the whole tiles do not write.
    unsafe {
        let p = &mut partials;
        kernels::blocked::wide_pieces(gpu, launch, m32, n32, k32, a_view, b_view, whole, pieces, p)?;
        kernels::blocked::wide_sum_pieces(gpu, sum, m32, n32, whole, pieces, &partials, &mut *c)?;
    }
    gpu.stream().join(whole_stream).map_err(Error::driver("stream wait"))
}

/// `tf32-wgmma` on dense matrices. The copy engine reads rows that start 16-byte aligned: A or
/// B whose rows do not (k or n not a multiple of 4) goes through a copy in aligned rows.
/// `tf32` where k is 0 (a tensor map cannot describe an empty matrix) or there is no room for
/// the copies.
fn tf32_wgmma(
    gpu: &Gpu,
    m: usize,
    n: usize,
    k: usize,
    a: &CudaSlice<f32>,
    b: &CudaSlice<f32>,
    c: &mut CudaSlice<f32>,
) -> Result<()> {
    if k == 0 {
        return gemm(gpu, GemmKernel::Tf32, m, n, k, a, b, c);
    }
    let (a_copy, b_copy) = (aligned_rows(gpu, m, k, a)?, aligned_rows(gpu, k, n, b)?);
    let (a_view, b_view) = (aligned_view(a, &a_copy, m, k)?, aligned_view(b, &b_copy, k, n)?);
    if !(tensor_map::swizzle_fits(&a_view) && tensor_map::swizzle_fits(&b_view)) {
        // (No room for the copies.)
        return gemm(gpu, GemmKernel::Tf32, m, n, k, a, b, c);
    }
    let maps = wgmma_maps(gpu.into(), &a_view, &b_view, true)?;
    // SAFETY: the maps describe A (m x k) and B (k x n), and live until the kernel is done (the
    // stream orders their release after it); C holds m x n (checked).
    unsafe { kernels::wgmma::tf32(gpu, wgmma_launch(m, n, true), m as u32, n as u32, k as u32, &*maps, c) }
}

/// `dmma-tma` on dense matrices, A or B through a copy where the copy engine cannot read them
/// ([`GemmKernel::DmmaTma`]), its last wave split along k where that fills the wave (without
/// the split where there is no room for the pieces); `dmma-pipelined` where k is 0 (a tensor
/// map cannot describe an empty matrix) or there is no room for the copy.
fn dmma_tma(
    gpu: &Gpu,
    m: usize,
    n: usize,
    k: usize,
    a: &CudaSlice<f64>,
    b: &CudaSlice<f64>,
    c: &mut CudaSlice<f64>,
) -> Result<()> {
    use abi::gemm::{DMMA_TMA_B_GROUP, DMMA_TMA_BLOCKS_PER_SM, PipelinedShape, SplitTail};
    if k == 0 {
        return gemm(gpu, GemmKernel::DmmaPipelined, m, n, k, a, b, c);
    }
    // B is read in groups of DMMA_TMA_B_GROUP columns, which must not reach past its rows:
    // where n is not a multiple of the group, from rows padded to 128-byte lines (where it is,
    // B's rows are 16-byte aligned already).
    let b_copy =
        if n.is_multiple_of(DMMA_TMA_B_GROUP as usize) { None } else { padded_rows(gpu, b, (k, n), k)? };
    let a_copy = aligned_rows(gpu, m, k, a)?;
    let (a_view, b_view) = (aligned_view(a, &a_copy, m, k)?, aligned_view(b, &b_copy, k, n)?);
    let b_grouped = b_view.strided().ld.is_multiple_of(DMMA_TMA_B_GROUP);
    if !(tensor_map::swizzle_fits(&a_view) && tensor_map::swizzle_fits(&b_view) && b_grouped) {
        // (No room for the copies.)
        return gemm(gpu, GemmKernel::DmmaPipelined, m, n, k, a, b, c);
    }
    let maps = dmma_tma_maps(gpu.into(), &a_view, &b_view)?;
    let shape = PipelinedShape::of(8);
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    let tiles = shape.blocks(m, n);
    let slots = gpu.props().sm_count * DMMA_TMA_BLOCKS_PER_SM;
    let split = SplitTail::of(tiles as u32, k.div_ceil(shape.k as usize) as u32, slots);
    let pieces_len = split.partials(tiles as u32) as usize;
    // (No split where there is no room for the pieces.)
    let tile_len = (shape.tile_m * shape.tile_n) as usize;
    let partials = workspace::<f64>(gpu, pieces_len * tile_len)?;
    let mut whole = tiles;
    if let Some(mut partials) = partials {
        // The pieces first (about a wave), then the whole tiles (whole waves): each launch
        // fills the GPU, though it waits for the one before.
        let SplitTail { whole: first, pieces } = split;
        let sum = Launch::linear((tiles - first as usize) * tile_len, 256);
        // SAFETY: the maps describe A (m x k) and B (k x n), and live until the kernels are
        // done (the stream orders their release after them); `partials` holds the split
        // tiles' pieces; C holds m x n (checked).
        unsafe {
            let (launch, p) = (dmma_tma_launch(pieces_len), &mut partials);
            kernels::dmma_tma::split_tail(gpu, launch, m32, n32, k32, &*maps, first, pieces, p)?;
            kernels::dmma_tma::sum_pieces(gpu, sum, m32, n32, first, pieces, &partials, c)?;
        }
        whole = first as usize;
    }
    if whole == 0 {
        return Ok(());
    }
    // SAFETY: as above; the first `whole` tiles.
    unsafe { kernels::dmma_tma::dmma_tma(gpu, dmma_tma_launch(whole), m32, n32, k32, &*maps, c) }
}

/// The tensor maps of the `dmma-tma` kernels' A and B (`gemm::dmma_tma`, and the update's), on
/// the device, as [`wgmma_maps`]. B is read in groups of `abi::gemm::DMMA_TMA_B_GROUP` columns:
/// the caller makes sure that the last group does not reach past B's memory.
pub(crate) fn dmma_tma_maps(
    queue: Queue,
    a: &MatrixView<'_, f64>,
    b: &MatrixView<'_, f64>,
) -> Result<Arc<CudaSlice<u64>>> {
    use abi::gemm::{DMMA_TMA_B_GROUP as GROUP, PipelinedShape};
    let shape = PipelinedShape::of(8);
    let maps = [
        tensor_map::encode(a, (shape.k, shape.tile_m), tensor_map::Swizzle::Rows128)?,
        tensor_map::encode_column_groups(b, GROUP, (shape.tile_n / GROUP, shape.k))?,
    ];
    tensor_map::on_device(queue, &maps.concat())
}

/// The launch of `blocks` blocks of the `dmma-tma` kernels, in a 1D grid.
pub(crate) fn dmma_tma_launch(blocks: usize) -> Launch {
    let threads = abi::gemm::PipelinedShape::of(8).threads;
    Launch::linear(blocks * threads as usize, threads).shared(abi::gemm::dmma_tma_shared_bytes())
}

/// A copy of the dense rows x cols matrix `a` with rows starting on 128-byte lines, where its
/// own rows are not 16-byte aligned: the `cp.async` and copy-engine kernels then copy its tiles
/// 16 bytes at a time (`kernels/src/gemm/aligned_rows.rs`). `None` where the rows are aligned
/// already, or where the copy does not fit in device memory (the pipelined kernel then copies
/// element by element).
fn aligned_rows<T: Scalar>(
    gpu: &Gpu,
    rows: usize,
    cols: usize,
    a: &CudaSlice<T>,
) -> Result<Option<CudaSlice<T>>> {
    if (cols * size_of::<T>()).is_multiple_of(16) || rows == 0 {
        return Ok(None);
    }
    padded_rows(gpu, a, (rows, cols), rows)
}

/// A copy of the dense rows x cols matrix `a` in `rows_to` >= rows rows starting on 128-byte
/// lines, zero past its own rows and columns; its rows are `len / rows_to` apart. `None` where
/// the copy does not fit in device memory or its indices in 32 bits.
fn padded_rows<T: Scalar>(
    gpu: &Gpu,
    a: &CudaSlice<T>,
    (rows, cols): (usize, usize),
    rows_to: usize,
) -> Result<Option<CudaSlice<T>>> {
    let ld = cols.next_multiple_of(128 / size_of::<T>());
    if rows_to == 0 || rows_to.checked_mul(ld).is_none_or(|len| len > u32::MAX as usize) {
        return Ok(None);
    }
    let Some(mut copy) = workspace::<T>(gpu, rows_to * ld)? else {
        return Ok(None);
    };
    copy_rows(gpu, a, (rows, cols), &mut copy, ld)?;
    Ok(Some(copy))
}

/// A buffer of `len` values for a copy or a split's pieces, unzeroed (the kernels write all of
/// it): `None` where `len` is 0 or device memory is short, and the GEMM goes without.
fn workspace<T: Scalar>(gpu: &Gpu, len: usize) -> Result<Option<CudaSlice<T>>> {
    if len == 0 {
        return Ok(None);
    }
    unless_out_of_memory(gpu.scratch::<T>(len))
}

/// Queues `dst` = the dense rows x cols matrix `a` in the top left of `dst`, a matrix with rows
/// `ld` apart, and zeros in the rest of `dst` (its columns past `cols`, its rows past `rows`).
pub(crate) fn copy_rows<T: Scalar>(
    gpu: &Gpu,
    a: &CudaSlice<T>,
    (rows, cols): (usize, usize),
    dst: &mut CudaSlice<T>,
    ld: usize,
) -> Result<()> {
    if a.len() != rows * cols {
        return Err(Error::InvalidInput(format!("a copy of {} values as {rows} x {cols}", a.len())));
    }
    let rows_to = dst.len() / ld.max(1);
    // The destination's own checks: inside `dst`, its elements numbered below 2^32.
    MatrixViewMut::new(dst, 0, rows_to, ld, ld)?;
    if rows > rows_to || cols > ld {
        return Err(Error::InvalidInput(format!("a copy of {rows} x {cols} into {rows_to} x {ld}")));
    }
    if rows_to == 0 || ld == 0 {
        return Ok(());
    }
    const THREADS: u32 = 256;
    let launch =
        Launch::grid_2d((ld.div_ceil(THREADS as usize) as u32, rows_to.min(65_535) as u32), (THREADS, 1));
    let (rows, cols, rows_to, ld) = (rows as u32, cols as u32, rows_to as u32, ld as u32);
    // SAFETY: `a` holds rows x cols values and `dst` rows_to x ld (checked).
    unsafe { kernels::aligned_rows::copy_rows(gpu, launch, rows, cols, a, dst, rows_to, ld) }
}

/// The rows x cols matrix `a`, or its copy in aligned rows ([`aligned_rows`]).
fn aligned_view<'a, T>(
    a: &'a CudaSlice<T>,
    copy: &'a Option<CudaSlice<T>>,
    rows: usize,
    cols: usize,
) -> Result<MatrixView<'a, T>> {
    match copy {
        Some(copy) => MatrixView::new(copy, 0, rows, cols, copy.len() / rows),
        None => MatrixView::full(a, rows, cols),
    }
}

/// The tensor maps of the `wgmma` kernels' A and B (`gemm::wgmma`, and the update's), on the
/// device: uploaded once per pair of blocks, for a kernel queued on the GPU's own stream. The
/// clustered GEMM copies A's tile in halves, one per block of a cluster.
pub(crate) fn wgmma_maps(
    queue: Queue,
    a: &MatrixView<'_, f32>,
    b: &MatrixView<'_, f32>,
    clustered: bool,
) -> Result<Arc<CudaSlice<u64>>> {
    use abi::gemm::{WGMMA_BK, WGMMA_BM, WGMMA_CLUSTER};
    let a_rows = if clustered { WGMMA_BM / WGMMA_CLUSTER } else { WGMMA_BM };
    let maps = [tensor_map::swizzled_f32(a, a_rows)?, tensor_map::swizzled_f32(b, WGMMA_BK)?];
    tensor_map::on_device(queue, &maps.concat())
}

/// The launch of the `wgmma` kernels for an m x n C: one block per tile, in a 1D grid; for the
/// clustered GEMM (`gemm::wgmma::tf32`), blocks of [`abi::gemm::WGMMA_THREADS`] in whole
/// clusters (one block past the last tile column where the tile columns are odd), else of the
/// computing warpgroups only (`gemm::update::wgmma`).
pub(crate) fn wgmma_launch(m: usize, n: usize, clustered: bool) -> Launch {
    use abi::gemm::{
        WGMMA_BM, WGMMA_BN, WGMMA_CLUSTER, WGMMA_MMA_THREADS, WGMMA_THREADS, wgmma_shared_bytes,
    };
    let (cluster, threads) = if clustered { (WGMMA_CLUSTER, WGMMA_THREADS) } else { (1, WGMMA_MMA_THREADS) };
    let cluster = cluster as usize;
    let blocks = m.div_ceil(WGMMA_BM as usize) * n.div_ceil(WGMMA_BN as usize).div_ceil(cluster) * cluster;
    Launch::linear(blocks * threads as usize, threads).shared(wgmma_shared_bytes())
}

/// The launch of the pipelined kernel (`gemm::pipelined`, and the update's) for an m x n C: one
/// block per tile, in a 1D grid (the kernel orders the tiles itself).
pub(crate) fn pipelined_launch<T>(m: usize, n: usize) -> Launch {
    let shape = abi::gemm::PipelinedShape::of(size_of::<T>());
    Launch::linear(shape.blocks(m, n) * shape.threads as usize, shape.threads)
        .shared(shape.shared_bytes(size_of::<T>()))
}

/// The componentwise error bound of a TF32 product: |C - A B| <= bound |A| |B|, from the
/// rounding of both inputs to TF32 (unit roundoff 2^-11 each) and k f32 accumulations (the
/// tensor cores' adds may truncate: 2^-23 each).
pub fn tf32_error_bound(k: usize) -> f64 {
    bound_with_input_error(2f64.powi(-11), k)
}

/// As [`tf32_error_bound`] with the inputs truncated to TF32 (relative error below 2^-10
/// each), as the tensor cores do when handed f32: `tf32-wgmma`; and the bound cuBLAS's TF32
/// mode is held to, whose rounding is not documented.
pub fn tf32_truncated_error_bound(k: usize) -> f64 {
    bound_with_input_error(2f64.powi(-10), k)
}

/// |C - A B| <= bound |A| |B| for inputs within relative `u` of A and B and k f32 additions.
fn bound_with_input_error(u: f64, k: usize) -> f64 {
    2.0 * u + u * u + k as f64 * 2f64.powi(-23)
}

impl GemmKernel {
    /// The componentwise error bound of the kernel's product in f32 where it is below f32's
    /// accuracy (the TF32 kernels), relative to |A| |B|.
    pub fn reduced_precision_bound(self, k: usize) -> Option<f64> {
        match self {
            GemmKernel::Tf32 => Some(tf32_error_bound(k)),
            GemmKernel::Tf32Wgmma => Some(tf32_truncated_error_bound(k)),
            _ => None,
        }
    }
}

/// As [`GemmKernel::reduced_precision_bound`] for a kernel named as the CLI and the benchmarks
/// name it, the vendor's `cublas-tf32` included.
pub fn reduced_precision_bound_of(name: &str, k: usize) -> Option<f64> {
    match name {
        "cublas-tf32" => Some(tf32_truncated_error_bound(k)),
        name => GemmKernel::from_name(name, None)?.reduced_precision_bound(k),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes_are_checked() {
        assert!(check_shapes(2, 3, 4, 8, 12, 6).is_ok());
        let err = check_shapes(2, 3, 4, 8, 11, 6).unwrap_err().to_string();
        assert!(err.contains("12") && err.contains("11"), "{err}");
        assert!(check_shapes(1 << 20, 1 << 20, 1, 1 << 20, 1 << 20, 1 << 40).is_err());
    }

    #[test]
    fn kernel_names() {
        assert_eq!(GemmKernel::from_name("tiled", Some(8)), Some(GemmKernel::Tiled(8)));
        assert_eq!(GemmKernel::from_name("tiled32", None), Some(GemmKernel::Tiled(32)));
        assert_eq!(GemmKernel::from_name("tiled3", None), None);
        assert_eq!(GemmKernel::from_name("dmma", None), Some(GemmKernel::Dmma));
        assert_eq!(GemmKernel::from_name("tf32", None), Some(GemmKernel::Tf32));
        for kernel in GemmKernel::all() {
            assert_eq!(GemmKernel::from_name(&kernel.name(), None), Some(kernel));
        }
    }
}
