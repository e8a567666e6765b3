//! The device layer: every GPU intrinsic the kernels use, behind names that follow `cuda_std`
//! where it has one (`thread::index_1d`, `warp::shuffle_xor`, ...). Kernels use nothing else.

pub mod atomic;
pub mod block;
pub mod grid;
pub mod memory;
pub mod mma;
pub mod pipeline;
pub mod shared;
pub mod thread;
pub mod warp;

mod float;
pub use float::Float;

/// Stamps out `extern "ptx-kernel"` entry points for f32 and f64 over one generic body.
///
/// ```ignore
/// f32_f64_kernels! {
///     axpy_f32, axpy_f64 => axpy(n: u32, a: T, x: *const T, y: *mut T);
/// }
/// ```
/// `T` in the argument list is `f32` in the first entry point and `f64` in the second.
#[macro_export]
macro_rules! f32_f64_kernels {
    ($( $f32:ident, $f64:ident => $body:ident ( $($arg:ident : $ty:ty),* $(,)? ); )*) => {
        mod entry_f32 {
            #[allow(unused_imports)]
            use super::*;
            type T = f32;
            $(
                #[unsafe(no_mangle)]
                pub unsafe extern "ptx-kernel" fn $f32($($arg: $ty),*) {
                    // SAFETY: the host launches this entry point with the arguments it declares.
                    unsafe { super::$body::<T>($($arg),*) }
                }
            )*
        }
        mod entry_f64 {
            #[allow(unused_imports)]
            use super::*;
            type T = f64;
            $(
                #[unsafe(no_mangle)]
                pub unsafe extern "ptx-kernel" fn $f64($($arg: $ty),*) {
                    // SAFETY: the host launches this entry point with the arguments it declares.
                    unsafe { super::$body::<T>($($arg),*) }
                }
            )*
        }
    };
}
