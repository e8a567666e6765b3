//! The vendor libraries our kernels are measured against, called through cudarc's bindings
//! (loaded at run time, like the driver). Their results are verified like ours.

pub mod cublas;
pub mod cusolver;
pub mod cusparse;
pub mod cusparse_spsv;

use crate::Scalar;
use crate::gpu::{CudaSlice, Gpu};

/// The raw device address of a buffer, for library calls that take `void*`.
pub(crate) fn device_ptr<T>(gpu: &Gpu, buf: &CudaSlice<T>) -> *mut std::ffi::c_void {
    use cudarc::driver::DevicePtr;
    let (ptr, _sync) = buf.device_ptr(gpu.stream());
    ptr as *mut std::ffi::c_void
}

/// Whether `T` is f64 (else f32): picks the library's data type.
pub(crate) fn is_f64<T: Scalar>() -> bool {
    T::NAME == "f64"
}
