//! GPU sparse and dense linear algebra whose kernels are written in Rust: sparse matrix-vector
//! products (CSR, BSR, HLL), the symmetric Gauss-Seidel smoother and the conjugate gradients it
//! preconditions, dense matrix multiply, and dense solves by LU with partial pivoting. Every
//! GPU kernel has a CPU reference it is checked against and a vendor library (cuSPARSE,
//! cuBLAS, cuSOLVER) it is measured against.
//!
//! # A tour
//!
//! The data path reads straight through: a file or a generator, a host format, device
//! buffers, a kernel, a result checked against the CPU reference.
//!
//! ```no_run
//! use rgla::spmv::csr::{CsrKernel, DeviceCsr, spmv};
//! use rgla::spmv::{BlockWarps, cpu};
//! use rgla::{Gpu, verify};
//!
//! # fn main() -> rgla::Result<()> {
//! let a = rgla::mm::read_coo::<f64>("tests/data/nos4.mtx")?.coo.to_csr()?; // or "poisson3d:64".parse::<rgla::sparse::GenSpec>()?.generate()?
//! let x = vec![1.0; a.cols()];
//! let gpu = Gpu::new()?; // an error, not a panic, without a GPU or driver
//! let a_gpu = DeviceCsr::upload(&gpu, &a)?; // analysed once, as cuSPARSE's preprocessing does
//! let x_gpu = gpu.upload(&x)?;
//! let mut y_gpu = gpu.zeros(a.rows())?;
//! spmv(&gpu, &a_gpu, CsrKernel::Adaptive, BlockWarps::DEFAULT, &x_gpu, &mut y_gpu)?;
//! let mut expect = vec![0.0; a.rows()];
//! cpu::csr_serial(&a, &x, &mut expect)?;
//! verify::compare(&gpu.download(&y_gpu)?, &expect, 0.0).check("y = A x", 1e-12)?;
//! # Ok(()) }
//! ```
//!
//! Where each operation lives (the same path in `kernels/src/` for its device code):
//!
//! | operation | host driver and CPU reference | vendor baseline |
//! | --- | --- | --- |
//! | SpMV | [`spmv`] (`csr`, `bsr`, `hll`, `cpu`) | [`vendor::cusparse`] |
//! | SymGS and PCG | [`symgs`] (`sync_free`, `levels`, `multicolor`, `ready_done`, `pcg`, `cpu`) | [`vendor::cusparse_spsv`] |
//! | GEMM | [`gemm`] (`cpu`, `update`) | [`vendor::cublas`] |
//! | dense solve | [`solve`] (`blocked`, `mixed`, `classic`, `cpu`) | [`vendor::cusolver`] (getrf + getrs, and the TF32 refinement solver) |
//! | vector operations | [`blas1`] | |
//! | several GPUs: SpMV and PCG on row blocks | [`dist`] (`partition`, `comm`, `pcg`) | NCCL (halos, sums) |
//!
//! Matrices come from Matrix Market files ([`mm`]) or generators ([`sparse::GenSpec`]: stencils,
//! Poisson, FEM-like, banded, power-law, road-like, random), in the formats of [`sparse`] and
//! [`dense`]. Results are compared with [`verify::compare`]; benchmarks record with [`mod@bench`].
//!
//! # Kernels and their launchers
//!
//! The GPU kernels are `#[gpu::kernel]` functions of the `kernels` crate, compiled to PTX by
//! the build and embedded in this crate. [`kernels`] holds a typed launcher for each, generated
//! from the kernel's own parameter list: device buffers where the kernel takes pointers, the
//! entry point picked from the element type, and a compile error for a wrong argument. The
//! drivers above call them; `examples/custom_kernel.rs` shows how to add one of your own.
//!
//! # Errors and resources
//!
//! Every fallible call returns [`Result`]: bad input names the problem (file, line, value), a
//! missing driver or GPU is [`Error::NoDriver`] / [`Error::NoDevice`], and work that cannot fit
//! fails before it starts ([`memory::Footprint`], [`Error::NotEnoughMemory`]).

pub mod bench;
pub mod blas1;
pub mod dense;
pub mod dist;
pub mod error;
pub mod gemm;
pub mod gpu;
pub mod kernels;
pub mod memory;
pub mod mm;
pub mod scalar;
pub mod solve;
pub mod sparse;
pub mod spmv;
pub mod symgs;
pub mod vendor;
pub mod verify;

pub use error::{Error, Result};
pub use gpu::{Gpu, Launch};
pub use scalar::Scalar;
