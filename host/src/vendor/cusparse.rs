//! cuSPARSE SpMV (the generic API) on our device matrices, as the baseline.

use std::ptr;

use cudarc::cusparse::sys::{
    self, cudaDataType, cusparseDnVecDescr_t, cusparseHandle_t, cusparseIndexBase_t, cusparseIndexType_t,
    cusparseOperation_t, cusparseOrder_t, cusparseSpMVAlg_t, cusparseSpMatDescr_t, cusparseStatus_t,
};

use super::{device_ptr, is_f64};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu};
use crate::spmv::bsr::DeviceBsr;
use crate::spmv::csr::DeviceCsr;

fn check(status: cusparseStatus_t, what: &'static str) -> Result<()> {
    if status == cusparseStatus_t::CUSPARSE_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(Error::Library { library: "cuSPARSE", what, message: format!("{status:?}") })
    }
}

fn data_type<T: Scalar>() -> cudaDataType {
    if is_f64::<T>() { cudaDataType::CUDA_R_64F } else { cudaDataType::CUDA_R_32F }
}

/// A cuSPARSE handle bound to the GPU's stream.
pub struct Cusparse {
    handle: cusparseHandle_t,
}

impl Cusparse {
    pub fn new(gpu: &Gpu) -> Result<Cusparse> {
        // SAFETY: only tries to dlopen the library; cudarc would panic on a missing one.
        if !unsafe { sys::is_culib_present() } {
            return Err(Error::Library {
                library: "cuSPARSE",
                what: "loading libcusparse",
                message:
                    "not found (install the CUDA toolkit's cuSPARSE or add its folder to LD_LIBRARY_PATH)"
                        .into(),
            });
        }
        let mut handle = ptr::null_mut();
        // SAFETY: creates a handle into a local; binds it to our stream, which outlives it.
        unsafe {
            check(sys::cusparseCreate(&mut handle), "cusparseCreate")?;
            check(sys::cusparseSetStream(handle, gpu.stream().cu_stream() as _), "cusparseSetStream")?;
        }
        Ok(Cusparse { handle })
    }

    /// The raw handle, for the other cuSPARSE wrappers of this crate.
    pub(crate) fn raw(&self) -> cusparseHandle_t {
        self.handle
    }
}

impl Drop for Cusparse {
    fn drop(&mut self) {
        // SAFETY: the handle was created in `new` and is destroyed once.
        unsafe { sys::cusparseDestroy(self.handle) };
    }
}

/// Which generic SpMV algorithm (cuSPARSE's own names).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpmvAlg {
    Default,
    /// CSR_ALG1: the default CSR algorithm.
    CsrAlg1,
    /// CSR_ALG2: merge-based, deterministic.
    CsrAlg2,
}

impl SpmvAlg {
    fn raw(self) -> cusparseSpMVAlg_t {
        match self {
            SpmvAlg::Default => cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT,
            SpmvAlg::CsrAlg1 => cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG1,
            SpmvAlg::CsrAlg2 => cusparseSpMVAlg_t::CUSPARSE_SPMV_CSR_ALG2,
        }
    }
}

/// A prepared y = A x: the matrix descriptor, the work buffer, and the one-time
/// preprocessing, as an application would set it up once and call it many times.
pub struct CusparseSpmv<'a, T> {
    lib: &'a Cusparse,
    matrix: cusparseSpMatDescr_t,
    alg: SpmvAlg,
    buffer: CudaSlice<u8>,
    rows: usize,
    cols: usize,
    _values: std::marker::PhantomData<&'a T>,
}

impl<'a, T: Scalar> CusparseSpmv<'a, T> {
    /// Prepares SpMV on a CSR matrix with algorithm `alg`.
    pub fn csr(gpu: &Gpu, lib: &'a Cusparse, a: &'a DeviceCsr<T>, alg: SpmvAlg) -> Result<Self> {
        let mut matrix = ptr::null_mut();
        // SAFETY: the descriptor points into `a`'s buffers, which outlive it ('a).
        unsafe {
            check(
                sys::cusparseCreateCsr(
                    &mut matrix,
                    a.rows as i64,
                    a.cols as i64,
                    a.nnz as i64,
                    device_ptr(gpu, &a.row_ptr),
                    device_ptr(gpu, &a.col_idx),
                    device_ptr(gpu, &a.values),
                    cusparseIndexType_t::CUSPARSE_INDEX_32I,
                    cusparseIndexType_t::CUSPARSE_INDEX_32I,
                    cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                    data_type::<T>(),
                ),
                "cusparseCreateCsr",
            )?;
        }
        Self::prepare(gpu, lib, matrix, alg, a.rows, a.cols)
    }

    /// Prepares SpMV on a BSR matrix (row-major blocks), where the installed cuSPARSE's
    /// generic API supports it.
    pub fn bsr(gpu: &Gpu, lib: &'a Cusparse, a: &'a DeviceBsr<T>) -> Result<Self> {
        let b = a.block_size;
        if !a.rows.is_multiple_of(b) || !a.cols.is_multiple_of(b) {
            return Err(Error::InvalidInput(format!(
                "cuSPARSE BSR needs sizes that are multiples of the block size ({} x {}, block {b})",
                a.rows, a.cols
            )));
        }
        let mut matrix = ptr::null_mut();
        // SAFETY: the descriptor points into `a`'s buffers, which outlive it ('a).
        unsafe {
            check(
                sys::cusparseCreateBsr(
                    &mut matrix,
                    a.block_rows as i64,
                    (a.cols / b) as i64,
                    a.blocks as i64,
                    b as i64,
                    b as i64,
                    device_ptr(gpu, &a.block_row_ptr),
                    device_ptr(gpu, &a.block_col),
                    device_ptr(gpu, &a.values),
                    cusparseIndexType_t::CUSPARSE_INDEX_32I,
                    cusparseIndexType_t::CUSPARSE_INDEX_32I,
                    cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                    data_type::<T>(),
                    cusparseOrder_t::CUSPARSE_ORDER_ROW,
                ),
                "cusparseCreateBsr",
            )?;
        }
        Self::prepare(gpu, lib, matrix, SpmvAlg::Default, a.rows, a.cols)
    }

    fn prepare(
        gpu: &Gpu,
        lib: &'a Cusparse,
        matrix: cusparseSpMatDescr_t,
        alg: SpmvAlg,
        rows: usize,
        cols: usize,
    ) -> Result<Self> {
        // Vectors only for sizing the buffer and preprocessing; `run` binds the real ones.
        let x = gpu.zeros::<T>(cols.max(1))?;
        let y = gpu.zeros::<T>(rows.max(1))?;
        let mut plan = CusparseSpmv {
            lib,
            matrix,
            alg,
            buffer: gpu.zeros::<u8>(1)?,
            rows,
            cols,
            _values: std::marker::PhantomData,
        };
        let (vx, vy) = (plan.vector(gpu, &x)?, plan.vector(gpu, &y)?);
        let (alpha, beta) = (T::ONE, T::ZERO);
        let mut size = 0usize;
        // SAFETY: valid handle and descriptors; the scalars live across the calls.
        let sized = unsafe {
            check(
                sys::cusparseSpMV_bufferSize(
                    lib.handle,
                    cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    &alpha as *const T as *const _,
                    matrix,
                    vx,
                    &beta as *const T as *const _,
                    vy,
                    data_type::<T>(),
                    alg.raw(),
                    &mut size,
                ),
                "cusparseSpMV_bufferSize",
            )
        };
        let prepared = sized.and_then(|()| {
            plan.buffer = gpu.zeros::<u8>(size.max(1))?;
            // SAFETY: as above, with a buffer of the size cuSPARSE asked for.
            unsafe {
                check(
                    sys::cusparseSpMV_preprocess(
                        lib.handle,
                        cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                        &alpha as *const T as *const _,
                        matrix,
                        vx,
                        &beta as *const T as *const _,
                        vy,
                        data_type::<T>(),
                        alg.raw(),
                        device_ptr(gpu, &plan.buffer),
                    ),
                    "cusparseSpMV_preprocess",
                )
            }
        });
        // SAFETY: the vector descriptors were created above and are not used again.
        unsafe {
            sys::cusparseDestroyDnVec(vx);
            sys::cusparseDestroyDnVec(vy);
        }
        prepared?;
        gpu.synchronize()?;
        Ok(plan)
    }

    fn vector(&self, gpu: &Gpu, v: &CudaSlice<T>) -> Result<cusparseDnVecDescr_t> {
        let mut descr = ptr::null_mut();
        // SAFETY: the descriptor points into `v`, which the caller keeps alive while using it.
        unsafe {
            check(
                sys::cusparseCreateDnVec(&mut descr, v.len() as i64, device_ptr(gpu, v), data_type::<T>()),
                "cusparseCreateDnVec",
            )?;
        }
        Ok(descr)
    }

    /// y = A x, queued on the GPU's stream.
    pub fn run(&self, gpu: &Gpu, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        if x.len() != self.cols || y.len() != self.rows {
            return Err(Error::InvalidInput(format!(
                "cuSPARSE SpMV of a {} x {} matrix got x of {} and y of {}",
                self.rows,
                self.cols,
                x.len(),
                y.len()
            )));
        }
        let (vx, vy) = (self.vector(gpu, x)?, self.vector(gpu, y)?);
        let (alpha, beta) = (T::ONE, T::ZERO);
        // SAFETY: valid handle and descriptors over live buffers; the work buffer is the size
        // cuSPARSE asked for.
        let result = unsafe {
            check(
                sys::cusparseSpMV(
                    self.lib.handle,
                    cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE,
                    &alpha as *const T as *const _,
                    self.matrix,
                    vx,
                    &beta as *const T as *const _,
                    vy,
                    data_type::<T>(),
                    self.alg.raw(),
                    device_ptr(gpu, &self.buffer),
                ),
                "cusparseSpMV",
            )
        };
        // SAFETY: created above, used only by the call above.
        unsafe {
            sys::cusparseDestroyDnVec(vx);
            sys::cusparseDestroyDnVec(vy);
        }
        result
    }
}

impl<T> Drop for CusparseSpmv<'_, T> {
    fn drop(&mut self) {
        // SAFETY: created in `csr`/`bsr` and destroyed once.
        unsafe { sys::cusparseDestroySpMat(self.matrix) };
    }
}
