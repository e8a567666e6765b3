//! The device layer: every GPU intrinsic the kernels use, behind names that follow `cuda_std`
//! where it has one (`thread::index_1d`, `warp::shuffle_xor`, ...). Kernels use nothing else.

pub mod atomic;
pub mod block;
pub mod grid;
pub mod memory;
pub mod mma;
pub mod pipeline;
pub mod shared;
pub mod tagged;
pub mod thread;
#[cfg(target_feature = "sm_90")]
pub mod tma;
pub mod warp;
#[cfg(target_feature = "sm_90a")]
pub mod wgmma;

mod float;
pub use float::Float;
