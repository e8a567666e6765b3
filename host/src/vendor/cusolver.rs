//! cuSOLVER's dense LU (getrf) and solve (getrs), the baseline of the dense solve.
//!
//! cuSOLVER is column-major. The factor's buffer is filled with A transposed on the device
//! (in place of the copy an in-place factorisation needs anyway), so cuSOLVER factors A
//! itself: its pivots and its first singular column are the same as ours. One right-hand side
//! needs no transpose; several are transposed in and out.

use std::ptr;

use cudarc::cusolver::sys::{self, cublasOperation_t, cusolverDnHandle_t, cusolverStatus_t};

use super::{device_ptr, is_f64};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::MatrixView;
use crate::gpu::{CudaSlice, Gpu};
use crate::solve::{queue_pivot_check, queue_transpose, read_pivot_check};

fn check(status: cusolverStatus_t, what: &'static str) -> Result<()> {
    if status == cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::Library { library: "cuSOLVER", what, message: format!("{status:?}") })
    }
}

/// A cuSOLVER handle on the GPU's stream, and n as cuSOLVER's int.
fn create_handle(gpu: &Gpu, n: usize) -> Result<(cusolverDnHandle_t, i32)> {
    // SAFETY: only tries to dlopen the library; cudarc would panic on a missing one.
    if !unsafe { sys::is_culib_present() } {
        return Err(Error::Library {
            library: "cuSOLVER",
            what: "loading libcusolver",
            message: "not found (install the CUDA toolkit's cuSOLVER or add its folder to LD_LIBRARY_PATH)"
                .into(),
        });
    }
    let dim = i32::try_from(n.max(1))
        .map_err(|_| Error::InvalidInput(format!("cuSOLVER takes n below 2^31, got {n}")))?;
    let mut handle = ptr::null_mut();
    // SAFETY: creates a handle into a local; binds it to our stream, which outlives it.
    unsafe {
        check(sys::cusolverDnCreate(&mut handle), "cusolverDnCreate")?;
        check(sys::cusolverDnSetStream(handle, gpu.stream().cu_stream() as _), "cusolverDnSetStream")?;
    }
    Ok((handle, dim))
}

/// The LU factors of one n x n matrix by cuSOLVER, with a handle on the GPU's stream and the
/// workspace getrf asked for.
pub struct CusolverLu<T> {
    handle: cusolverDnHandle_t,
    n: usize,
    tolerance: f64,
    /// Column-major factors of A (the transpose of A's row-major storage before getrf).
    lu: CudaSlice<T>,
    work: CudaSlice<T>,
    ipiv: CudaSlice<i32>,
    dev_info: CudaSlice<i32>,
    /// Our pivot check (n eps max|A|; cuSOLVER flags exact zeros only).
    info: CudaSlice<u32>,
    /// Several right-hand sides, column-major.
    columns: CudaSlice<T>,
}

impl<T: Scalar> CusolverLu<T> {
    /// A handle and buffers for n x n; `tolerance` is the smallest usable pivot
    /// (`solve::check_system` computes it).
    pub fn new(gpu: &Gpu, n: usize, tolerance: f64) -> Result<CusolverLu<T>> {
        let (handle, dim) = create_handle(gpu, n)?;
        let mut solver = CusolverLu {
            handle,
            n,
            tolerance,
            lu: gpu.zeros(n * n)?,
            work: gpu.zeros(1)?,
            ipiv: gpu.zeros(n.max(1))?,
            dev_info: gpu.zeros(1)?,
            info: gpu.zeros(1)?,
            columns: gpu.zeros(n.max(1))?,
        };
        let mut lwork = 0;
        let a = device_ptr(gpu, &solver.lu);
        // SAFETY: the size query reads n and lda only (a points to n x n values).
        unsafe {
            if is_f64::<T>() {
                check(
                    sys::cusolverDnDgetrf_bufferSize(handle, dim, dim, a.cast(), dim, &mut lwork),
                    "getrf_bufferSize",
                )?;
            } else {
                check(
                    sys::cusolverDnSgetrf_bufferSize(handle, dim, dim, a.cast(), dim, &mut lwork),
                    "getrf_bufferSize",
                )?;
            }
        }
        solver.work = gpu.zeros(lwork.max(1) as usize)?;
        Ok(solver)
    }

    /// Queues the factorisation of `a` (n x n, row-major; left as it is). Call
    /// [`CusolverLu::check`] before using the factors.
    pub fn factor(&mut self, gpu: &Gpu, a: &CudaSlice<T>) -> Result<()> {
        let n = self.n;
        if a.len() != n * n {
            return Err(Error::InvalidInput(format!(
                "cuSOLVER LU of size {n} needs {} values, got {}",
                n * n,
                a.len()
            )));
        }
        if n == 0 {
            return Ok(());
        }
        queue_transpose(gpu, n, n, a, &mut self.lu)?;
        let dim = n as i32;
        let (lu, work) = (device_ptr(gpu, &self.lu), device_ptr(gpu, &self.work));
        let (ipiv, dev_info) = (device_ptr(gpu, &self.ipiv), device_ptr(gpu, &self.dev_info));
        // SAFETY: lu holds n x n values (lda = n), work the size getrf asked for, ipiv n ints.
        unsafe {
            if is_f64::<T>() {
                check(
                    sys::cusolverDnDgetrf(
                        self.handle,
                        dim,
                        dim,
                        lu.cast(),
                        dim,
                        work.cast(),
                        ipiv.cast(),
                        dev_info.cast(),
                    ),
                    "getrf",
                )?;
            } else {
                check(
                    sys::cusolverDnSgetrf(
                        self.handle,
                        dim,
                        dim,
                        lu.cast(),
                        dim,
                        work.cast(),
                        ipiv.cast(),
                        dev_info.cast(),
                    ),
                    "getrf",
                )?;
            }
        }
        queue_pivot_check::<T>(gpu, MatrixView::full(&self.lu, n, n)?, self.tolerance, &mut self.info)
    }

    /// Waits for the factorisation: a bad argument is a library error, a column without a
    /// usable pivot [`Error::Singular`].
    pub fn check(&self, gpu: &Gpu) -> Result<()> {
        let info = gpu.download(&self.dev_info)?[0];
        if info < 0 {
            return Err(Error::Library {
                library: "cuSOLVER",
                what: "getrf",
                message: format!("argument {} is invalid", -info),
            });
        }
        read_pivot_check(gpu, self.n, self.tolerance, &self.info)
    }

    /// Queues X = A^-1 B (B and X n x nrhs, row-major) with the last factors (getrs).
    pub fn solve(&mut self, gpu: &Gpu, nrhs: usize, b: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        let n = self.n;
        if b.len() != n * nrhs || x.len() != n * nrhs {
            return Err(Error::InvalidInput(format!(
                "cuSOLVER solve with {nrhs} right-hand side(s) of size {n} needs B and X of {} values, got {} and {}",
                n * nrhs,
                b.len(),
                x.len()
            )));
        }
        if n == 0 || nrhs == 0 {
            return Ok(());
        }
        let columns_out = nrhs > 1;
        if columns_out {
            if self.columns.len() != n * nrhs {
                self.columns = gpu.zeros(n * nrhs)?;
            }
            queue_transpose(gpu, n, nrhs, b, &mut self.columns)?;
        } else {
            gpu.copy(b, x)?;
        }
        let target = if columns_out { device_ptr(gpu, &self.columns) } else { device_ptr(gpu, x) };
        let (lu, ipiv, dev_info) =
            (device_ptr(gpu, &self.lu), device_ptr(gpu, &self.ipiv), device_ptr(gpu, &self.dev_info));
        let (dim, nrhs32) = (n as i32, nrhs as i32);
        let op = cublasOperation_t::CUBLAS_OP_N;
        // SAFETY: the factors of the last getrf, B column-major n x nrhs (ldb = n).
        unsafe {
            if is_f64::<T>() {
                check(
                    sys::cusolverDnDgetrs(
                        self.handle,
                        op,
                        dim,
                        nrhs32,
                        lu.cast(),
                        dim,
                        ipiv.cast(),
                        target.cast(),
                        dim,
                        dev_info.cast(),
                    ),
                    "getrs",
                )?;
            } else {
                check(
                    sys::cusolverDnSgetrs(
                        self.handle,
                        op,
                        dim,
                        nrhs32,
                        lu.cast(),
                        dim,
                        ipiv.cast(),
                        target.cast(),
                        dim,
                        dev_info.cast(),
                    ),
                    "getrs",
                )?;
            }
        }
        if columns_out {
            queue_transpose(gpu, nrhs, n, &self.columns, x)?;
        }
        Ok(())
    }
}

impl<T> Drop for CusolverLu<T> {
    fn drop(&mut self) {
        // SAFETY: the handle was created in `new` and is destroyed once.
        unsafe { sys::cusolverDnDestroy(self.handle) };
    }
}

/// cuSOLVER's mixed-precision solver with TF32 factors (`cusolverDnDXgesv`: an LU in reduced
/// precision on the tensor cores, refined in f64, falling back to the f64 LU by itself where
/// refinement fails). A goes in transposed (column-major), as for [`CusolverLu`].
pub struct CusolverIrs {
    handle: cusolverDnHandle_t,
    n: usize,
    a: CudaSlice<f64>,
    ipiv: CudaSlice<i32>,
    work: CudaSlice<u8>,
    dev_info: CudaSlice<i32>,
    iterations: i32,
}

impl CusolverIrs {
    pub fn new(gpu: &Gpu, n: usize) -> Result<CusolverIrs> {
        let (handle, dim) = create_handle(gpu, n)?;
        let mut solver = CusolverIrs {
            handle,
            n,
            a: gpu.zeros(n * n)?,
            ipiv: gpu.zeros(n.max(1))?,
            work: gpu.zeros(1)?,
            dev_info: gpu.zeros(1)?,
            iterations: 0,
        };
        let (b, x) = (gpu.zeros::<f64>(n.max(1))?, gpu.zeros::<f64>(n.max(1))?);
        let (a, ipiv) = (device_ptr(gpu, &solver.a), device_ptr(gpu, &solver.ipiv));
        let (bp, xp) = (device_ptr(gpu, &b), device_ptr(gpu, &x));
        let mut bytes = 0usize;
        // SAFETY: the size query reads the sizes and leading dimensions only.
        unsafe {
            check(
                sys::cusolverDnDXgesv_bufferSize(
                    handle,
                    dim,
                    1,
                    a.cast(),
                    dim,
                    ipiv.cast(),
                    bp.cast(),
                    dim,
                    xp.cast(),
                    dim,
                    ptr::null_mut(),
                    &mut bytes,
                ),
                "DXgesv_bufferSize",
            )?;
        }
        solver.work = gpu.zeros(bytes.max(1))?;
        Ok(solver)
    }

    /// Solves A x = b (A row-major n x n, b and x n values); reports how many refinement
    /// steps it took (negative: it fell back to the f64 LU, cuSOLVER's convention). A
    /// singular matrix is [`Error::Singular`] with cuSOLVER's first zero pivot.
    pub fn solve(
        &mut self,
        gpu: &Gpu,
        a: &CudaSlice<f64>,
        b: &CudaSlice<f64>,
        x: &mut CudaSlice<f64>,
    ) -> Result<i32> {
        let n = self.n;
        if a.len() != n * n || b.len() != n || x.len() != n {
            return Err(Error::InvalidInput(format!(
                "cuSOLVER IRS solve of size {n} needs A of {} values and b, x of {n}, got {}, {} and {}",
                n * n,
                a.len(),
                b.len(),
                x.len()
            )));
        }
        if n == 0 {
            return Ok(0);
        }
        queue_transpose(gpu, n, n, a, &mut self.a)?;
        let dim = n as i32;
        let (ap, ipiv, work) =
            (device_ptr(gpu, &self.a), device_ptr(gpu, &self.ipiv), device_ptr(gpu, &self.work));
        let (bp, xp, info) = (device_ptr(gpu, b), device_ptr(gpu, x), device_ptr(gpu, &self.dev_info));
        // SAFETY: A column-major n x n, b and x n values, the workspace the size query asked for;
        // `iterations` is a host int.
        unsafe {
            check(
                sys::cusolverDnDXgesv(
                    self.handle,
                    dim,
                    1,
                    ap.cast(),
                    dim,
                    ipiv.cast(),
                    bp.cast(),
                    dim,
                    xp.cast(),
                    dim,
                    work.cast(),
                    self.work.len(),
                    &mut self.iterations,
                    info.cast(),
                ),
                "DXgesv",
            )?;
        }
        match gpu.download(&self.dev_info)?[0] {
            0 => Ok(self.iterations),
            info if info > 0 => Err(Error::Singular { column: info as usize - 1, tolerance: 0.0 }),
            info => Err(Error::Library {
                library: "cuSOLVER",
                what: "DXgesv",
                message: format!("argument {} is invalid", -info),
            }),
        }
    }
}

impl Drop for CusolverIrs {
    fn drop(&mut self) {
        // SAFETY: the handle was created in `new` and is destroyed once.
        unsafe { sys::cusolverDnDestroy(self.handle) };
    }
}
