//! GPU kernels written in Rust, compiled to PTX for `nvptx64-nvidia-cuda` by `host/build.rs`.
//!
//! Each operation has one module here (`blas1`, later `spmv/csr`, ...) whose kernels read as the
//! algorithm; every intrinsic (indices, shuffles, shared memory, atomics, fences, inline PTX)
//! lives in [`device`]. Kernels are generic over [`device::Float`]; `f32`/`f64` entry points are
//! stamped out by [`f32_f64_kernels!`] because `extern "ptx-kernel"` functions cannot be generic.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics)]
#![feature(core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)]
#![allow(internal_features)]
// Kernels take raw device pointers from the host; their safety contract is the launch itself.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]

#[macro_use]
pub mod device;
pub mod blas1;
pub mod device_tests;
pub mod gemm;
pub mod lu;
pub mod spmv;
pub mod symgs;

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { core::arch::nvptx::trap() }
}
