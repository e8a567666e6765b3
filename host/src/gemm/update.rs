//! The trailing update of a blocked factorisation, C -= A B on blocks of row-major matrices
//! (`kernels/src/gemm/update.rs`), which the blocked LU drives.

use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{Gpu, Launch, MatrixView, MatrixViewMut, Queue, tensor_map};
use crate::kernels::gemm::update as kernels;

/// Columns of a group of B in `UpdateKernel::DmmaTma`'s copies.
const GROUP: usize = abi::gemm::DMMA_TMA_B_GROUP as usize;

/// The kernel of the trailing update C -= A B.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UpdateKernel {
    /// f64 tensor cores (mma.sync m8n8k4); f64 only.
    Dmma,
    /// `gemm::pipelined`'s k-loop (m16n8k8, sm_90): f64 on DMMA, f32 through TF32 (not
    /// f32-accurate: the mixed-precision solve's factorisation).
    Pipelined,
    /// `gemm::dmma_tma`'s k-loop (f64 DMMA fed by the tensor memory accelerator); f64 only,
    /// sm_90a (H100, H200), on the GPU's own stream (where its tensor maps are kept). Blocks the
    /// copy engine cannot read, and the last n % 8 columns, run `Pipelined`.
    DmmaTma,
    /// Hopper's warpgroup MMA with TF32 inputs (truncated by the tensor cores), fed by the
    /// tensor memory accelerator; f32 only, sm_90a (H100, H200), on the GPU's own stream
    /// (where its tensor maps are kept: `gpu::tensor_map::on_device`). Blocks the copy engine
    /// cannot read (a start or row stride not 16-byte aligned) run `Pipelined`.
    Wgmma,
    /// Register-blocked FMAs, f32 and f64.
    Simt,
}

impl UpdateKernel {
    /// Tensor cores for f64: `DmmaTma` in the sm_90a module (the fastest DGEMM kernel's
    /// k-loop), else `Pipelined` on sm_90. SIMT for f32 (f32-accurate).
    pub fn default_for<T: Scalar>(gpu: &Gpu) -> UpdateKernel {
        match (T::NAME, gpu.ptx_arch() >= 90) {
            ("f64", true) if gpu.ptx_name() == "sm_90a" => UpdateKernel::DmmaTma,
            ("f64", true) => UpdateKernel::Pipelined,
            ("f64", false) => UpdateKernel::Dmma,
            _ => UpdateKernel::Simt,
        }
    }
}

/// Queues C -= A B (A m x k, B k x n, C m x n); the views were checked against their buffers
/// when they were made, and C, borrowed exclusively, overlaps neither A nor B.
pub fn update<'q, T: Scalar>(
    queue: impl Into<Queue<'q>>,
    kernel: UpdateKernel,
    a: MatrixView<'_, T>,
    b: MatrixView<'_, T>,
    c: MatrixViewMut<'_, T>,
) -> Result<()> {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    if a.rows() != m || b.rows() != k || b.cols() != n {
        return Err(Error::InvalidInput(format!(
            "update C -= A B: A is {} x {}, B {} x {}, C {m} x {n}",
            a.rows(),
            a.cols(),
            b.rows(),
            b.cols()
        )));
    }
    if m == 0 || n == 0 {
        return Ok(());
    }
    let queue = queue.into();
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    let tile = abi::gemm::UPDATE_TILE as usize;
    let grid = (n.div_ceil(tile) as u32, m.div_ceil(tile) as u32);
    // SAFETY: the grids cover C's tiles; the kernels read A and B and write C inside the views.
    unsafe {
        match kernel {
            UpdateKernel::Dmma => {
                let Some((a, b, c)) = as_f64(a, b, c) else {
                    return Err(Error::InvalidInput("the DMMA update kernel is f64 only".into()));
                };
                let launch =
                    Launch::grid_2d(grid, (abi::gemm::DMMA_THREADS, 1)).shared(abi::gemm::DMMA_SHARED_BYTES);
                kernels::dmma(queue, launch, m32, n32, k32, a, b, c)
            }
            UpdateKernel::Pipelined => {
                if queue.gpu().ptx_arch() < 90 {
                    return Err(Error::InvalidInput("the pipelined update kernel needs an sm_90 GPU".into()));
                }
                kernels::pipelined(queue, super::pipelined_launch::<T>(m, n), m32, n32, k32, a, b, c)
            }
            UpdateKernel::DmmaTma => {
                let (Some((a, b, c)), "sm_90a") = (as_f64(a, b, c), queue.gpu().ptx_name()) else {
                    return Err(Error::InvalidInput(
                        "the dmma-tma update kernel is f64 only, on H100 and H200 GPUs (the sm_90a module)"
                            .into(),
                    ));
                };
                dmma_tma(queue, a, b, c)
            }
            UpdateKernel::Wgmma => {
                let (Some(a), Some(b), Some(c), "sm_90a") =
                    (a.of_type(), b.of_type(), c.of_type(), queue.gpu().ptx_name())
                else {
                    return Err(Error::InvalidInput(
                        "the wgmma update kernel is f32 only, on H100 and H200 GPUs (the sm_90a module)"
                            .into(),
                    ));
                };
                if k == 0 || !(tensor_map::swizzle_fits(&a) && tensor_map::swizzle_fits(&b)) {
                    return update(queue, UpdateKernel::Pipelined, a, b, c);
                }
                wgmma(queue, a, b, c)
            }
            UpdateKernel::Simt => {
                let launch = Launch::grid_2d(grid, (abi::gemm::UPDATE_SIMT_THREADS, 1))
                    .shared(abi::gemm::update_simt_shared_bytes(size_of::<T>()));
                kernels::simt(queue, launch, m32, n32, k32, a, b, c)
            }
        }
    }
}

/// C -= A B on `gemm::update::dmma_tma`. The copy engine reads B in groups of
/// `abi::gemm::DMMA_TMA_B_GROUP` columns, so a group must not reach past B's columns (they may
/// end its buffer): the columns past the last whole group go through `Pipelined`.
fn dmma_tma(
    queue: Queue,
    a: MatrixView<'_, f64>,
    b: MatrixView<'_, f64>,
    c: MatrixViewMut<'_, f64>,
) -> Result<()> {
    let (m, k) = (c.rows(), a.cols());
    let grouped = c.cols() / GROUP * GROUP;
    if k == 0 || grouped == 0 || !(tensor_map::swizzle_fits(&a) && tensor_map::swizzle_fits(&b)) {
        return update(queue, UpdateKernel::Pipelined, a, b, c);
    }
    let ((b, b_rest), (c, c_rest)) = (b.split_cols(grouped), c.split_cols(grouped));
    if c_rest.cols() > 0 {
        update(queue, UpdateKernel::Pipelined, a, b_rest, c_rest)?;
    }
    let maps = super::dmma_tma_maps(queue, &a, &b)?;
    let (m32, n32, k32) = (m as u32, grouped as u32, k as u32);
    let launch = super::dmma_tma_launch(abi::gemm::PipelinedShape::of(8).blocks(m, grouped));
    // SAFETY: the maps describe A and B (whole groups of columns) and live until the kernel is
    // done (the GPU's stream, this one, orders their release after it); C is m x grouped and
    // overlaps neither.
    unsafe { kernels::dmma_tma(queue, launch, m32, n32, k32, &*maps, c) }
}

/// C -= A B on `gemm::update::wgmma`.
fn wgmma(
    queue: Queue,
    a: MatrixView<'_, f32>,
    b: MatrixView<'_, f32>,
    c: MatrixViewMut<'_, f32>,
) -> Result<()> {
    let (m, n, k) = (c.rows(), c.cols(), a.cols());
    let maps = super::wgmma_maps(queue, &a, &b, false)?;
    // SAFETY: the maps describe A and B and live until the kernel is done (the GPU's stream,
    // this one, orders their release after it); C is m x n and overlaps neither.
    unsafe {
        kernels::wgmma(queue, super::wgmma_launch(m, n, false), m as u32, n as u32, k as u32, &*maps, c)
    }
}

/// The views as f64 views, when `T` is f64.
#[allow(clippy::type_complexity)]
fn as_f64<'a, T: Scalar>(
    a: MatrixView<'a, T>,
    b: MatrixView<'a, T>,
    c: MatrixViewMut<'a, T>,
) -> Option<(MatrixView<'a, f64>, MatrixView<'a, f64>, MatrixViewMut<'a, f64>)> {
    Some((a.of_type()?, b.of_type()?, c.of_type()?))
}
