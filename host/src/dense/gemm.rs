//! Dense C = A B (row-major, any shape): the CPU references and the GPU drivers of
//! `kernels/src/gemm/` (the Naples report's tiles, register-blocked SIMT, f64 tensor cores).

use rayon::prelude::*;

use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch, PushKernelArg};

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

/// f64 reference (the oracle for both precisions): `matrixmultiply`'s blocked, multithreaded
/// DGEMM on inputs widened to f64.
pub fn reference<T: Scalar>(m: usize, n: usize, k: usize, a: &[T], b: &[T]) -> Vec<f64> {
    let a: Vec<f64> = a.iter().map(|&v| v.into()).collect();
    let b: Vec<f64> = b.iter().map(|&v| v.into()).collect();
    let mut c = vec![0.0; m * n];
    if m > 0 && n > 0 {
        // SAFETY: row-major strides of the m x k, k x n and m x n buffers just built.
        unsafe {
            matrixmultiply::dgemm(
                m,
                k,
                n,
                1.0,
                a.as_ptr(),
                k as isize,
                1,
                b.as_ptr(),
                n as isize,
                1,
                0.0,
                c.as_mut_ptr(),
                n as isize,
                1,
            );
        }
    }
    c
}

/// The Naples report's CPU loop: C[i][j] = sum_k A[i][k] B[k][j], one element at a time.
pub fn serial<T: Scalar>(m: usize, n: usize, k: usize, a: &[T], b: &[T], c: &mut [T]) -> Result<()> {
    check_shapes(m, n, k, a.len(), b.len(), c.len())?;
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).fold(T::ZERO, |sum, p| a[i * k + p].mul_add(b[p * n + j], sum));
        }
    }
    Ok(())
}

/// Rayon CPU GEMM: rows of C in parallel, the i-k-j order so the inner loop streams a row of
/// B into a row of C, and k blocked to keep B's rows in cache.
pub fn rayon<T: Scalar>(m: usize, n: usize, k: usize, a: &[T], b: &[T], c: &mut [T]) -> Result<()> {
    check_shapes(m, n, k, a.len(), b.len(), c.len())?;
    const KB: usize = 256;
    if n == 0 {
        return Ok(());
    }
    c.par_chunks_mut(n).enumerate().for_each(|(i, row)| {
        row.fill(T::ZERO);
        for k0 in (0..k).step_by(KB) {
            for p in k0..(k0 + KB).min(k) {
                let aip = a[i * k + p];
                for (cj, &bj) in row.iter_mut().zip(&b[p * n..(p + 1) * n]) {
                    *cj = aip.mul_add(bj, *cj);
                }
            }
        }
    });
    Ok(())
}

/// The GPU GEMM kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GemmKernel {
    /// The Naples report's T x T shared-memory tiles (T in 2, 4, 8, 16, 32).
    Tiled(u32),
    /// Register-blocked SIMT: 128 x 128 block tiles, 8 x 8 per thread.
    Blocked,
    /// f64 tensor cores (mma.sync m8n8k4, sm_80+).
    Dmma,
    /// f64 tensor cores with Hopper's m16n8k4 shape (sm_90 module only).
    Dmma16,
    /// Hopper's m16n8k8 on 128 x 64 tiles fed by a 3-stage cp.async pipeline (sm_90 module
    /// only).
    DmmaPipelined,
}

/// Dynamic shared bytes of `gemm_dmma_pipelined_f64`: 3 stages of the A (128 x 16) and B
/// (16 x 64) tiles with rows padded by 4 doubles.
const PIPELINED_SHARED_BYTES: usize = 3 * (128 * 20 + 16 * 68) * 8;

impl GemmKernel {
    pub fn name(self) -> String {
        match self {
            GemmKernel::Tiled(t) => format!("tiled{t}"),
            GemmKernel::Blocked => "blocked".into(),
            GemmKernel::Dmma => "dmma".into(),
            GemmKernel::Dmma16 => "dmma16".into(),
            GemmKernel::DmmaPipelined => "dmma-pipelined".into(),
        }
    }

    pub fn from_name(name: &str, tile: Option<u32>) -> Option<GemmKernel> {
        match name {
            "tiled" => tile.filter(|t| TILES.contains(t)).or(Some(16)).map(GemmKernel::Tiled),
            "blocked" => Some(GemmKernel::Blocked),
            "dmma" => Some(GemmKernel::Dmma),
            "dmma16" => Some(GemmKernel::Dmma16),
            "dmma-pipelined" => Some(GemmKernel::DmmaPipelined),
            other => {
                other.strip_prefix("tiled")?.parse().ok().filter(|t| TILES.contains(t)).map(GemmKernel::Tiled)
            }
        }
    }

    /// Whether the kernel exists for `T` on this GPU (tensor cores: f64 only; m16n8k4 and
    /// m16n8k8 need the sm_90 module).
    pub fn supports<T: Scalar>(self, gpu: &Gpu) -> bool {
        match self {
            GemmKernel::Dmma => T::NAME == "f64",
            GemmKernel::Dmma16 | GemmKernel::DmmaPipelined => T::NAME == "f64" && gpu.ptx_arch() >= 90,
            _ => true,
        }
    }

    /// Every kernel, tile sizes included.
    pub fn all() -> Vec<GemmKernel> {
        let mut all: Vec<GemmKernel> = TILES.into_iter().map(GemmKernel::Tiled).collect();
        all.extend([GemmKernel::Blocked, GemmKernel::Dmma, GemmKernel::Dmma16, GemmKernel::DmmaPipelined]);
        all
    }
}

/// The report's tile sizes.
pub const TILES: [u32; 5] = [2, 4, 8, 16, 32];

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
    let elem = size_of::<T>();
    let grid = |tile: usize| -> Result<(u32, u32)> {
        let rows = m.div_ceil(tile);
        if rows > 65_535 {
            return Err(Error::InvalidInput(format!(
                "GEMM with {m} rows needs {rows} block rows (65535 at most)"
            )));
        }
        Ok((n.div_ceil(tile) as u32, rows as u32))
    };
    let (name, launch) = match kernel {
        GemmKernel::Tiled(t) => {
            if !TILES.contains(&t) {
                return Err(Error::InvalidInput(format!("tile {t} (2, 4, 8, 16 or 32)")));
            }
            let tile = t as usize;
            (
                T::pick(("gemm_tiled_f32", "gemm_tiled_f64")),
                Launch::grid_2d(grid(tile)?, (t, t)).shared(2 * tile * tile * elem),
            )
        }
        GemmKernel::Blocked => (
            T::pick(("gemm_blocked_f32", "gemm_blocked_f64")),
            Launch {
                grid: (grid(128)?.0, grid(128)?.1, 1),
                block: (256, 1, 1),
                shared_bytes: (2 * 2048 * elem) as u32,
            },
        ),
        GemmKernel::Dmma | GemmKernel::Dmma16 | GemmKernel::DmmaPipelined => {
            if !kernel.supports::<T>(gpu) {
                let sm90 = if kernel == GemmKernel::Dmma { "" } else { ", on sm_90 GPUs" };
                return Err(Error::InvalidInput(format!(
                    "the {} tensor-core kernel is f64 only{sm90}",
                    kernel.name()
                )));
            }
            if kernel == GemmKernel::DmmaPipelined {
                // One block per 128 x 64 tile, in a 1D grid (the kernel orders the tiles itself).
                let blocks = m.div_ceil(128) * n.div_ceil(64);
                ("gemm_dmma_pipelined_f64", Launch::linear(blocks * 128, 128).shared(PIPELINED_SHARED_BYTES))
            } else {
                let name = if kernel == GemmKernel::Dmma { "gemm_dmma_f64" } else { "gemm_dmma16_f64" };
                let (gx, gy) = grid(64)?;
                let shared = (64 * 20 + 16 * 68) * 8;
                (name, Launch { grid: (gx, gy, 1), block: (128, 1, 1), shared_bytes: shared })
            }
        }
    };
    let k_ = gpu.kernel(name)?;
    let (m32, n32, k32) = (m as u32, n as u32, k as u32);
    // SAFETY: gemm_*(m, n, k, a, b, c) with buffers of the checked shapes.
    unsafe {
        gpu.launch(&k_, launch, |args| {
            args.arg(&m32).arg(&n32).arg(&k32).arg(a).arg(b).arg(c);
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_kernels_agree_with_the_reference() {
        let (m, n, k) = (7, 5, 9);
        let a: Vec<f64> = (0..m * k).map(|i| (i as f64 * 0.37).sin()).collect();
        let b: Vec<f64> = (0..k * n).map(|i| (i as f64 * 0.11).cos()).collect();
        let expect = reference(m, n, k, &a, &b);
        let mut c = vec![f64::NAN; m * n];
        serial(m, n, k, &a, &b, &mut c).unwrap();
        assert!(crate::verify::compare(&c, &expect, 0.0).passes(1e-14));
        let mut c = vec![f64::NAN; m * n];
        rayon(m, n, k, &a, &b, &mut c).unwrap();
        assert!(crate::verify::compare(&c, &expect, 0.0).passes(1e-14));
    }

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
        for kernel in GemmKernel::all() {
            assert_eq!(GemmKernel::from_name(&kernel.name(), None), Some(kernel));
        }
    }
}
