//! A typed launcher for every kernel of the `kernels` crate, generated at build time from the
//! kernel's own parameter list (its `#[gpu::kernel]` declaration), at the same module path:
//! `kernels/src/spmv/csr.rs`'s `vector` is [`spmv::csr::vector()`].
//!
//! A launcher takes where to queue (a `&Gpu` or [`Gpu::on`]), the [`Launch`] shape, the values
//! of the kernel's const parameters, then the kernel's own arguments: a device buffer
//! (`&CudaSlice<T>`, `&CudaView<T>`) where the kernel reads through `*const T`, a mutable one
//! (`&mut CudaSlice<T>`, `&mut CudaViewMut<T>`) where it writes through `*mut T`, a
//! [`MatrixView`] / [`MatrixViewMut`] where it takes a block of a matrix, and numbers by value.
//! The entry point is picked from the element type and the const values. So a launch with the
//! wrong number, type or mutability of arguments does not compile:
//!
//! ```no_run
//! # use rgla::{Gpu, Launch, kernels};
//! # fn run(gpu: &Gpu) -> rgla::Result<()> {
//! let x = gpu.upload(&[1.0f32; 1000])?;
//! let mut y = gpu.zeros::<f32>(1000)?;
//! // SAFETY: x and y hold the 1000 elements the kernel indexes.
//! unsafe { kernels::blas1::axpy(gpu, Launch::linear(1000, 256), 1000, 2.0, &x, &mut y)? };
//! # Ok(()) }
//! ```
//!
//! A missing argument:
//! ```compile_fail,E0061
//! # use rgla::{Gpu, Launch, kernels};
//! # fn run(gpu: &Gpu) -> rgla::Result<()> {
//! # let x = gpu.upload(&[1.0f32; 1000])?;
//! # let mut y = gpu.zeros::<f32>(1000)?;
//! unsafe { kernels::blas1::axpy(gpu, Launch::linear(1000, 256), 1000, &x, &mut y)? };
//! # Ok(()) }
//! ```
//! An output lent read-only:
//! ```compile_fail,E0308
//! # use rgla::{Gpu, Launch, kernels};
//! # fn run(gpu: &Gpu) -> rgla::Result<()> {
//! # let x = gpu.upload(&[1.0f32; 1000])?;
//! # let y = gpu.zeros::<f32>(1000)?;
//! unsafe { kernels::blas1::axpy(gpu, Launch::linear(1000, 256), 1000, 2.0, &x, &y)? };
//! # Ok(()) }
//! ```
//! A buffer of the wrong element type:
//! ```compile_fail,E0277
//! # use rgla::{Gpu, Launch, kernels};
//! # fn run(gpu: &Gpu) -> rgla::Result<()> {
//! # let x = gpu.upload(&[1.0f64; 1000])?;
//! # let mut y = gpu.zeros::<f32>(1000)?;
//! unsafe { kernels::blas1::axpy(gpu, Launch::linear(1000, 256), 1000, 2.0, &x, &mut y)? };
//! # Ok(()) }
//! ```
//! A size of the wrong type:
//! ```compile_fail,E0308
//! # use rgla::{Gpu, Launch, kernels};
//! # fn run(gpu: &Gpu) -> rgla::Result<()> {
//! # let x = gpu.upload(&[1.0f32; 1000])?;
//! # let mut y = gpu.zeros::<f32>(1000)?;
//! unsafe { kernels::blas1::axpy(gpu, Launch::linear(1000, 256), 1000usize, 2.0, &x, &mut y)? };
//! # Ok(()) }
//! ```
//! An element type the kernel is not built for (the f64-only tensor-core GEMM):
//! ```compile_fail,E0277
//! # use rgla::{Gpu, Launch, kernels};
//! # fn run(gpu: &Gpu) -> rgla::Result<()> {
//! # let a = gpu.upload(&[1.0f32; 4])?;
//! # let mut c = gpu.zeros::<f32>(4)?;
//! unsafe { kernels::gemm::dmma::dmma(gpu, Launch::linear(1, 128), 2, 2, 2, &a, &a, &mut c)? };
//! # Ok(()) }
//! ```
//!
//! # Safety
//!
//! The launch contract, the one thing the types cannot check: every buffer is at least as
//! long as the kernel indexes it for these argument values (sizes, offsets, plans), and a
//! buffer the kernel writes is not read through another argument at the same time unless the
//! kernel's documentation allows it. Each launcher's documentation (copied from the kernel's)
//! says what it indexes and the launch shape it expects. Launch shapes themselves are checked
//! against the device's limits and turned into errors.

pub(crate) mod support {
    pub(crate) use crate::Scalar;
    pub(crate) use crate::error::{Error, Result};
    pub(crate) use crate::gpu::{
        DevicePtr, DevicePtrMut, DeviceRepr, Launch, MatrixView, MatrixViewMut, Queue,
    };
    pub(crate) use cudarc::driver::PushKernelArg;

    /// A structure of `abi` passed to a kernel by value.
    #[repr(transparent)]
    pub(crate) struct ByValue<P>(pub(crate) P);

    // SAFETY: `DeviceParam` types have the same `#[repr(C)]` layout on both sides.
    unsafe impl<P: abi::DeviceParam> DeviceRepr for ByValue<P> {}
}

#[allow(unused_imports)]
use crate::gpu::{Gpu, Launch, MatrixView, MatrixViewMut};

include!(concat!(env!("OUT_DIR"), "/launchers.rs"));
