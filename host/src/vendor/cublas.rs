//! cuBLAS SGEMM/DGEMM on row-major matrices, as the GEMM baseline.

use cudarc::cublas::sys::cublasOperation_t;
use cudarc::cublas::{CudaBlas, Gemm, GemmConfig};

use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu};

/// A cuBLAS handle on the GPU's stream.
pub struct Cublas {
    blas: CudaBlas,
}

impl Cublas {
    pub fn new(gpu: &Gpu) -> Result<Cublas> {
        // SAFETY: only tries to dlopen the library; cudarc would panic on a missing one.
        if !unsafe { cudarc::cublas::sys::is_culib_present() } {
            return Err(Error::Library {
                library: "cuBLAS",
                what: "loading libcublas",
                message: "not found (install the CUDA toolkit's cuBLAS or add its folder to LD_LIBRARY_PATH)"
                    .into(),
            });
        }
        let blas = CudaBlas::new(gpu.stream().clone()).map_err(|e| Error::Library {
            library: "cuBLAS",
            what: "cublasCreate",
            message: format!("{e:?}"),
        })?;
        Ok(Cublas { blas })
    }

    /// A handle whose f32 products round their inputs to TF32 on the tensor cores
    /// (`CUBLAS_TF32_TENSOR_OP_MATH`), the vendor row of the TF32 kernel.
    pub fn new_tf32(gpu: &Gpu) -> Result<Cublas> {
        use cudarc::cublas::sys::{cublasMath_t, cublasSetMathMode, cublasStatus_t};
        let cublas = Cublas::new(gpu)?;
        // SAFETY: sets a mode on the handle just created, which no other thread holds.
        let status =
            unsafe { cublasSetMathMode(*cublas.blas.handle(), cublasMath_t::CUBLAS_TF32_TENSOR_OP_MATH) };
        if status != cublasStatus_t::CUBLAS_STATUS_SUCCESS {
            return Err(Error::Library {
                library: "cuBLAS",
                what: "cublasSetMathMode",
                message: format!("{status:?}"),
            });
        }
        Ok(cublas)
    }

    /// C = A B for row-major A (m x k), B (k x n), C (m x n). cuBLAS is column-major, so it
    /// computes C^T = B^T A^T, which is the same memory.
    pub fn gemm<T: crate::Scalar + CublasGemm>(
        &self,
        m: usize,
        n: usize,
        k: usize,
        a: &CudaSlice<T>,
        b: &CudaSlice<T>,
        c: &mut CudaSlice<T>,
    ) -> Result<()> {
        crate::gemm::check_shapes(m, n, k, a.len(), b.len(), c.len())?;
        let int = |v: usize| {
            i32::try_from(v)
                .map_err(|_| Error::InvalidInput(format!("cuBLAS takes sizes below 2^31, got {v}")))
        };
        let config = GemmConfig {
            transa: cublasOperation_t::CUBLAS_OP_N,
            transb: cublasOperation_t::CUBLAS_OP_N,
            m: int(n)?,
            n: int(m)?,
            k: int(k)?,
            alpha: T::ONE,
            lda: int(n.max(1))?,
            ldb: int(k.max(1))?,
            beta: T::ZERO,
            ldc: int(n.max(1))?,
        };
        // SAFETY: the buffers hold the checked shapes; cuBLAS reads b as the first operand.
        unsafe { T::cublas_gemm(&self.blas, config, b, a, c) }.map_err(|e| Error::Library {
            library: "cuBLAS",
            what: "gemm",
            message: format!("{e:?}"),
        })
    }
}

/// The element types cuBLAS multiplies (f32 and f64).
pub trait CublasGemm: Sized {
    /// # Safety
    /// As cudarc's `Gemm::gemm`: the buffers hold the shapes `config` describes.
    unsafe fn cublas_gemm(
        blas: &CudaBlas,
        config: GemmConfig<Self>,
        a: &CudaSlice<Self>,
        b: &CudaSlice<Self>,
        c: &mut CudaSlice<Self>,
    ) -> std::result::Result<(), cudarc::cublas::result::CublasError>;
}

macro_rules! cublas_gemm_impl {
    ($t:ty) => {
        impl CublasGemm for $t {
            unsafe fn cublas_gemm(
                blas: &CudaBlas,
                config: GemmConfig<Self>,
                a: &CudaSlice<Self>,
                b: &CudaSlice<Self>,
                c: &mut CudaSlice<Self>,
            ) -> std::result::Result<(), cudarc::cublas::result::CublasError> {
                // SAFETY: the caller's contract.
                unsafe { Gemm::gemm(blas, config, a, b, c) }
            }
        }
    };
}
cublas_gemm_impl!(f32);
cublas_gemm_impl!(f64);
