//! Dense C = A B for row-major matrices of any shape (A m x k, B k x n, C m x n), as a
//! progression: the Naples report's shared-memory tiles, a register-blocked SIMT kernel, and
//! tensor cores for f64 (m8n8k4 on sm_80; Hopper's m16n8k4 in the sm_90 module, and m16n8k8
//! fed by a cp.async pipeline, whose k-loop also runs f32 on TF32 and the LU's update; then the
//! same tiles fed by the tensor memory accelerator, `dmma_tma`, in the sm_90a module), and TF32
//! on Hopper's warpgroup MMA fed by the tensor memory accelerator (`wgmma`, the sm_90a module).

/// `$body` once for each listed index, bound to `$i` as a constant: straight-line k-steps let
/// the compiler read one step's fragments while earlier steps' FMAs run (LLVM leaves a loop of
/// this size rolled, and the loads then stall every step).
macro_rules! unrolled {
    ($i:ident in [$($n:literal),*] $body:block) => { $( { let $i: usize = $n; $body } )* };
}

pub mod aligned_rows;
pub mod blocked;
pub mod dmma;
#[cfg(target_feature = "sm_90")]
pub mod dmma16;
#[cfg(target_feature = "sm_90a")]
pub mod dmma_tma;
#[cfg(target_feature = "sm_90")]
pub mod pipelined;
pub mod tiled;
pub mod update;
#[cfg(target_feature = "sm_90a")]
pub mod wgmma;
