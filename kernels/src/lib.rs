//! GPU kernels written in Rust, compiled to PTX for `nvptx64-nvidia-cuda` by `host/build.rs`.
//!
//! Each operation has one module here (`spmv/csr`, `gemm/blocked`, ...) whose kernels read as
//! the algorithm; every intrinsic (indices, shuffles, shared memory, atomics, fences, inline
//! PTX) lives in [`device`]. A kernel is a generic `unsafe fn` marked `#[gpu::kernel(..)]` with
//! the values of its generic parameters (`T = f32 | f64`, `W = 2 | 4`): its parameter list is
//! the one declaration of the kernel. `build.rs` writes an `extern "ptx-kernel"` entry point for
//! each combination of values (entry points cannot be generic), and the host's build writes a
//! typed launcher from the same list (`rgla::kernels`). Shapes both sides use come from `abi`.
#![no_std]
#![feature(abi_ptx, stdarch_nvptx, asm_experimental_arch, link_llvm_intrinsics, register_tool)]
#![feature(core_intrinsics, gpu_intrinsics, gpu_launch_sized_workgroup_mem)]
#![allow(internal_features)]
// Kernels take raw device pointers from the host; their safety contract is the launch itself.
#![allow(clippy::missing_safety_doc, clippy::too_many_arguments)]
// `#[gpu::kernel(..)]` is an inert attribute: build.rs reads it, the compiler ignores it.
#![register_tool(gpu)]

pub mod blas1;
pub mod cache;
pub mod device;
pub mod device_tests;
pub mod dist;
pub mod examples;
pub mod gemm;
pub mod search;
pub mod solve;
pub mod spmv;
pub mod symgs;
pub mod timing;

// The `extern "ptx-kernel"` entry points of every `#[gpu::kernel]` (written by build.rs).
include!(concat!(env!("OUT_DIR"), "/entry_points.rs"));

#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    // SAFETY: `trap` aborts the kernel; the host sees a launch failure.
    unsafe { core::arch::nvptx::trap() }
}
