//! Vector operations: `axpy` (y = a x + y), the end-to-end example of a kernel with its CPU
//! reference and host driver.

use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu, Launch, PushKernelArg};

/// A float type with f32 and f64 kernels in the PTX module.
pub trait Scalar:
    cudarc::driver::DeviceRepr
    + cudarc::driver::ValidAsZeroBits
    + Copy
    + Default
    + Send
    + Sync
    + Into<f64>
    + std::fmt::Debug
    + std::ops::Add<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Div<Output = Self>
    + std::iter::Sum
    + PartialOrd
    + crate::verify::Tolerance
    + crate::vendor::cublas::CublasGemm
    + 'static
{
    /// "f32" or "f64": the suffix of the kernels' entry points.
    const NAME: &'static str;
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(v: f64) -> Self;
    /// Picks the entry point for this type from an (f32, f64) pair of names.
    fn pick(names: (&'static str, &'static str)) -> &'static str;
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn abs(self) -> Self;
    fn is_finite(self) -> bool;
}

impl Scalar for f32 {
    const NAME: &'static str = "f32";
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn from_f64(v: f64) -> Self {
        v as f32
    }
    fn pick(names: (&'static str, &'static str)) -> &'static str {
        names.0
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        f32::mul_add(self, a, b)
    }
    fn abs(self) -> Self {
        f32::abs(self)
    }
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
}

impl Scalar for f64 {
    const NAME: &'static str = "f64";
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn from_f64(v: f64) -> Self {
        v
    }
    fn pick(names: (&'static str, &'static str)) -> &'static str {
        names.1
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        f64::mul_add(self, a, b)
    }
    fn abs(self) -> Self {
        f64::abs(self)
    }
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
}

/// CPU reference: `y[i] = a * x[i] + y[i]` (fused, as on the GPU).
pub fn axpy_cpu<T: Scalar>(a: T, x: &[T], y: &mut [T]) {
    assert_eq!(x.len(), y.len(), "axpy: x and y differ in length");
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi = a.mul_add(xi, *yi);
    }
}

/// `y = a x + y` on the GPU.
pub fn axpy<T: Scalar>(gpu: &Gpu, a: T, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
    if x.len() != y.len() {
        return Err(Error::InvalidInput(format!("axpy: x has {} elements, y {}", x.len(), y.len())));
    }
    let n = u32::try_from(x.len())
        .map_err(|_| Error::InvalidInput(format!("axpy: {} elements exceed the u32 index range", x.len())))?;
    let kernel = gpu.kernel(T::pick(("axpy_f32", "axpy_f64")))?;
    // A grid-stride kernel: enough blocks to fill the GPU, no more.
    let blocks = (n as usize).div_ceil(256).clamp(1, gpu.props().sm_count as usize * 8);
    // SAFETY: axpy_T(n: u32, a: T, x: *const T, y: *mut T) with x and y of n elements.
    unsafe {
        gpu.launch(&kernel, Launch::linear(blocks * 256, 256), |args| {
            args.arg(&n).arg(&a).arg(x).arg(y);
        })
    }
}
