//! The cuSPARSE baseline for SymGS: the exact-order sweep from triangular solves (generic API,
//! SpSV), as NVIDIA's HPCG builds it, with D the diagonal and L, U the strictly lower and
//! upper parts of A:
//!
//! ```text
//! forward   x_f = (D + L)^-1 (r - U x)
//! backward  x   = (D + U)^-1 (r - L x_f)
//! ```
//!
//! The solves run on A itself, once with the fill mode "lower" and once "upper" (cuSPARSE
//! reads only that triangle, the stored diagonal included: diagonal type "non-unit"); the
//! products with the strict triangles are cuSPARSE SpMVs on copies of them. The analysis runs
//! once, at construction. A sweep: 2 SpMVs, 2 solves and 3 vector copies.

use std::ffi::c_void;
use std::ptr;

use cudarc::cusparse::sys::{
    self, cudaDataType, cusparseDiagType_t, cusparseDnVecDescr_t, cusparseFillMode_t, cusparseIndexBase_t,
    cusparseIndexType_t, cusparseOperation_t, cusparseSpMVAlg_t, cusparseSpMatAttribute_t,
    cusparseSpMatDescr_t, cusparseSpSVAlg_t, cusparseSpSVDescr_t, cusparseStatus_t,
};

use super::cusparse::Cusparse;
use super::{device_ptr, is_f64};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu};
use crate::sparse::Csr;
use crate::symgs::{Smoother, SymgsMatrix};

const NON_TRANSPOSE: cusparseOperation_t = cusparseOperation_t::CUSPARSE_OPERATION_NON_TRANSPOSE;

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

/// A CSR descriptor over device arrays (which must outlive it).
fn csr_descriptor<T: Scalar>(
    gpu: &Gpu,
    rows: usize,
    nnz: usize,
    row_ptr: &CudaSlice<u32>,
    col_idx: &CudaSlice<u32>,
    values: &CudaSlice<T>,
) -> Result<cusparseSpMatDescr_t> {
    let mut descr = ptr::null_mut();
    // SAFETY: creates a descriptor into a local over live device arrays of the sizes given.
    unsafe {
        check(
            sys::cusparseCreateCsr(
                &mut descr,
                rows as i64,
                rows as i64,
                nnz as i64,
                device_ptr(gpu, row_ptr),
                device_ptr(gpu, col_idx),
                device_ptr(gpu, values),
                cusparseIndexType_t::CUSPARSE_INDEX_32I,
                cusparseIndexType_t::CUSPARSE_INDEX_32I,
                cusparseIndexBase_t::CUSPARSE_INDEX_BASE_ZERO,
                data_type::<T>(),
            ),
            "cusparseCreateCsr",
        )?;
    }
    Ok(descr)
}

/// A dense-vector descriptor over `v` (which must outlive it).
fn vector<T: Scalar>(gpu: &Gpu, v: &CudaSlice<T>) -> Result<cusparseDnVecDescr_t> {
    let mut descr = ptr::null_mut();
    // SAFETY: creates a descriptor into a local over a live device buffer of its length.
    unsafe {
        check(
            sys::cusparseCreateDnVec(&mut descr, v.len() as i64, device_ptr(gpu, v), data_type::<T>()),
            "cusparseCreateDnVec",
        )?;
    }
    Ok(descr)
}

/// The two vectors every call uses (the solves are analysed with them): the right-hand side
/// being built and the solution.
struct Vectors<T> {
    rhs: CudaSlice<T>,
    solution: CudaSlice<T>,
    rhs_descr: cusparseDnVecDescr_t,
    solution_descr: cusparseDnVecDescr_t,
}

impl<T: Scalar> Vectors<T> {
    fn new(gpu: &Gpu, rows: usize) -> Result<Self> {
        let mut v = Vectors {
            rhs: gpu.zeros(rows)?,
            solution: gpu.zeros(rows)?,
            rhs_descr: ptr::null_mut(),
            solution_descr: ptr::null_mut(),
        };
        v.rhs_descr = vector(gpu, &v.rhs)?;
        v.solution_descr = vector(gpu, &v.solution)?;
        Ok(v)
    }
}

impl<T> Drop for Vectors<T> {
    fn drop(&mut self) {
        // SAFETY: created by `new` (or null) and destroyed once.
        unsafe {
            for descr in [self.rhs_descr, self.solution_descr] {
                if !descr.is_null() {
                    sys::cusparseDestroyDnVec(descr);
                }
            }
        }
    }
}

/// One triangular solve, analysed: A with a fill mode, its SpSV descriptor and work buffer.
struct Solve {
    matrix: cusparseSpMatDescr_t,
    spsv: cusparseSpSVDescr_t,
    buffer: CudaSlice<u8>,
}

impl Solve {
    /// A descriptor of `m` with `fill` and a non-unit diagonal, analysed for SpSV from
    /// `v.rhs` to `v.solution`.
    fn new<T: Scalar>(
        gpu: &Gpu,
        lib: &Cusparse,
        m: &SymgsMatrix<T>,
        fill: cusparseFillMode_t,
        v: &Vectors<T>,
    ) -> Result<Solve> {
        let matrix = csr_descriptor(gpu, m.rows, m.csr.nnz, &m.csr.row_ptr, &m.csr.col_idx, &m.csr.values)?;
        // Dropped on an error below, which destroys what was created.
        let mut solve = Solve { matrix, spsv: ptr::null_mut(), buffer: gpu.zeros(1)? };
        let diag = cusparseDiagType_t::CUSPARSE_DIAG_TYPE_NON_UNIT;
        let alpha = T::ONE;
        let mut size = 0usize;
        // SAFETY (all calls): valid handle and descriptors over live buffers; the attribute
        // values and alpha live across the calls; the work buffer has the size asked for.
        unsafe {
            check(
                sys::cusparseSpMatSetAttribute(
                    matrix,
                    cusparseSpMatAttribute_t::CUSPARSE_SPMAT_FILL_MODE,
                    &fill as *const _ as *mut c_void,
                    size_of::<cusparseFillMode_t>(),
                ),
                "cusparseSpMatSetAttribute (fill mode)",
            )?;
            check(
                sys::cusparseSpMatSetAttribute(
                    matrix,
                    cusparseSpMatAttribute_t::CUSPARSE_SPMAT_DIAG_TYPE,
                    &diag as *const _ as *mut c_void,
                    size_of::<cusparseDiagType_t>(),
                ),
                "cusparseSpMatSetAttribute (diagonal type)",
            )?;
            check(sys::cusparseSpSV_createDescr(&mut solve.spsv), "cusparseSpSV_createDescr")?;
            check(
                sys::cusparseSpSV_bufferSize(
                    lib.raw(),
                    NON_TRANSPOSE,
                    &alpha as *const T as *const c_void,
                    matrix,
                    v.rhs_descr,
                    v.solution_descr,
                    data_type::<T>(),
                    cusparseSpSVAlg_t::CUSPARSE_SPSV_ALG_DEFAULT,
                    solve.spsv,
                    &mut size,
                ),
                "cusparseSpSV_bufferSize",
            )?;
        }
        solve.buffer = gpu.zeros::<u8>(size.max(1))?;
        unsafe {
            check(
                sys::cusparseSpSV_analysis(
                    lib.raw(),
                    NON_TRANSPOSE,
                    &alpha as *const T as *const c_void,
                    matrix,
                    v.rhs_descr,
                    v.solution_descr,
                    data_type::<T>(),
                    cusparseSpSVAlg_t::CUSPARSE_SPSV_ALG_DEFAULT,
                    solve.spsv,
                    device_ptr(gpu, &solve.buffer),
                ),
                "cusparseSpSV_analysis",
            )?;
        }
        Ok(solve)
    }

    /// v.solution = (triangle with the diagonal)^-1 v.rhs.
    fn run<T: Scalar>(&self, lib: &Cusparse, v: &Vectors<T>) -> Result<()> {
        let alpha = T::ONE;
        // SAFETY: valid handle and descriptors, analysed in `new` with these vectors.
        unsafe {
            check(
                sys::cusparseSpSV_solve(
                    lib.raw(),
                    NON_TRANSPOSE,
                    &alpha as *const T as *const c_void,
                    self.matrix,
                    v.rhs_descr,
                    v.solution_descr,
                    data_type::<T>(),
                    cusparseSpSVAlg_t::CUSPARSE_SPSV_ALG_DEFAULT,
                    self.spsv,
                ),
                "cusparseSpSV_solve",
            )
        }
    }
}

impl Drop for Solve {
    fn drop(&mut self) {
        // SAFETY: created by `new` (or null) and destroyed once.
        unsafe {
            if !self.spsv.is_null() {
                sys::cusparseSpSV_destroyDescr(self.spsv);
            }
            sys::cusparseDestroySpMat(self.matrix);
        }
    }
}

/// One product with a strict triangle: its own CSR copy, descriptor and SpMV work buffer.
struct Product<T> {
    matrix: cusparseSpMatDescr_t,
    buffer: CudaSlice<u8>,
    _csr: (CudaSlice<u32>, CudaSlice<u32>, CudaSlice<T>),
}

impl<T: Scalar> Product<T> {
    /// `triangle` on the device (None when it has no entries: its product is zero).
    fn new(gpu: &Gpu, lib: &Cusparse, triangle: &Csr<T>, v: &Vectors<T>) -> Result<Option<Self>> {
        if triangle.nnz() == 0 {
            return Ok(None);
        }
        let csr = (
            gpu.upload(triangle.row_ptr())?,
            gpu.upload(triangle.col_indices())?,
            gpu.upload(triangle.values())?,
        );
        let matrix = csr_descriptor(gpu, triangle.rows(), triangle.nnz(), &csr.0, &csr.1, &csr.2)?;
        let mut product = Product { matrix, buffer: gpu.zeros(1)?, _csr: csr };
        let (alpha, beta) = (T::from_f64(-1.0), T::ONE);
        let mut size = 0usize;
        // SAFETY: valid handle and descriptors over live buffers; scalars live across the call.
        unsafe {
            check(
                sys::cusparseSpMV_bufferSize(
                    lib.raw(),
                    NON_TRANSPOSE,
                    &alpha as *const T as *const c_void,
                    matrix,
                    v.solution_descr,
                    &beta as *const T as *const c_void,
                    v.rhs_descr,
                    data_type::<T>(),
                    cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT,
                    &mut size,
                ),
                "cusparseSpMV_bufferSize",
            )?;
        }
        product.buffer = gpu.zeros::<u8>(size.max(1))?;
        Ok(Some(product))
    }

    /// v.rhs -= triangle * input.
    fn subtract_from_rhs(
        &self,
        gpu: &Gpu,
        lib: &Cusparse,
        input: cusparseDnVecDescr_t,
        v: &Vectors<T>,
    ) -> Result<()> {
        let (alpha, beta) = (T::from_f64(-1.0), T::ONE);
        // SAFETY: valid handle and descriptors over live buffers; the work buffer is the size
        // cuSPARSE asked for.
        unsafe {
            check(
                sys::cusparseSpMV(
                    lib.raw(),
                    NON_TRANSPOSE,
                    &alpha as *const T as *const c_void,
                    self.matrix,
                    input,
                    &beta as *const T as *const c_void,
                    v.rhs_descr,
                    data_type::<T>(),
                    cusparseSpMVAlg_t::CUSPARSE_SPMV_ALG_DEFAULT,
                    device_ptr(gpu, &self.buffer),
                ),
                "cusparseSpMV",
            )
        }
    }
}

impl<T> Drop for Product<T> {
    fn drop(&mut self) {
        // SAFETY: created by `new` and destroyed once.
        unsafe { sys::cusparseDestroySpMat(self.matrix) };
    }
}

/// The SpSV-based sweep on one matrix, prepared once.
pub struct CusparseSymgs<'a, T> {
    lib: &'a Cusparse,
    rows: usize,
    vectors: Vectors<T>,
    lower_solve: Solve,
    upper_solve: Solve,
    /// None for a triangle with no entries.
    strict_lower: Option<Product<T>>,
    strict_upper: Option<Product<T>>,
    _matrix: std::marker::PhantomData<&'a SymgsMatrix<T>>,
}

impl<'a, T: Scalar> CusparseSymgs<'a, T> {
    /// Prepares the sweep on `matrix`, whose host copy `a` gives the strict triangles.
    pub fn new(gpu: &Gpu, lib: &'a Cusparse, matrix: &'a SymgsMatrix<T>, a: &Csr<T>) -> Result<Self> {
        if a.rows() != matrix.rows || a.nnz() != matrix.csr.nnz {
            return Err(Error::InvalidInput(format!(
                "cuSPARSE SymGS: the host matrix ({} rows, {} nnz) is not the device one ({} rows, {} nnz)",
                a.rows(),
                a.nnz(),
                matrix.rows,
                matrix.csr.nnz
            )));
        }
        if matrix.rows == 0 {
            return Err(Error::InvalidInput("cuSPARSE SymGS needs at least one row".into()));
        }
        let vectors = Vectors::new(gpu, matrix.rows)?;
        let lower_solve =
            Solve::new(gpu, lib, matrix, cusparseFillMode_t::CUSPARSE_FILL_MODE_LOWER, &vectors)?;
        let upper_solve =
            Solve::new(gpu, lib, matrix, cusparseFillMode_t::CUSPARSE_FILL_MODE_UPPER, &vectors)?;
        let (lower, upper) = strict_triangles(a);
        let strict_lower = Product::new(gpu, lib, &lower, &vectors)?;
        let strict_upper = Product::new(gpu, lib, &upper, &vectors)?;
        gpu.synchronize()?;
        Ok(CusparseSymgs {
            lib,
            rows: matrix.rows,
            vectors,
            lower_solve,
            upper_solve,
            strict_lower,
            strict_upper,
            _matrix: std::marker::PhantomData,
        })
    }
}

impl<T: Scalar> Smoother<T> for CusparseSymgs<'_, T> {
    fn name(&self) -> String {
        "cusparse-spsv".into()
    }

    fn exact_order(&self) -> bool {
        true
    }

    fn sweep(&mut self, gpu: &Gpu, r: &CudaSlice<T>, x: &mut CudaSlice<T>) -> Result<()> {
        if r.len() != self.rows || x.len() != self.rows {
            return Err(Error::InvalidInput(format!(
                "SymGS on {} rows needs r and x of {} values, got r {} and x {}",
                self.rows,
                self.rows,
                r.len(),
                x.len()
            )));
        }
        let (lib, v) = (self.lib, &mut self.vectors);
        let x_descr = vector(gpu, x)?;
        let mut run = || -> Result<()> {
            // forward: solution = (D + L)^-1 (r - U x)
            gpu.copy(r, &mut v.rhs)?;
            if let Some(upper) = &self.strict_upper {
                upper.subtract_from_rhs(gpu, lib, x_descr, v)?;
            }
            self.lower_solve.run(lib, v)?;
            // backward: solution = (D + U)^-1 (r - L solution)
            gpu.copy(r, &mut v.rhs)?;
            if let Some(lower) = &self.strict_lower {
                lower.subtract_from_rhs(gpu, lib, v.solution_descr, v)?;
            }
            self.upper_solve.run(lib, v)?;
            gpu.copy(&v.solution, x)
        };
        let result = run();
        // SAFETY: created above, used only by the calls above (queued; cuSPARSE copies what
        // it needs from a descriptor at the call).
        unsafe { sys::cusparseDestroyDnVec(x_descr) };
        result
    }
}

/// The strictly lower and strictly upper parts of `a`.
fn strict_triangles<T: Scalar>(a: &Csr<T>) -> (Csr<T>, Csr<T>) {
    let part = |keep: &dyn Fn(usize, usize) -> bool| {
        let (mut row_ptr, mut cols, mut values) = (vec![0u32], Vec::new(), Vec::new());
        for i in 0..a.rows() {
            let (row_cols, row_values) = a.row(i);
            for (&j, &v) in row_cols.iter().zip(row_values) {
                if keep(i, j as usize) {
                    cols.push(j);
                    values.push(v);
                }
            }
            row_ptr.push(cols.len() as u32);
        }
        Csr::from_parts_unchecked(a.rows(), a.cols(), row_ptr, cols, values)
    };
    (part(&|i, j| j < i), part(&|i, j| j > i))
}
