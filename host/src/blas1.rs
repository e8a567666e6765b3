//! Vector operations: `axpy` (y = a x + y), the end-to-end example of a kernel with its CPU
//! reference and host driver, and what PCG needs besides: `xpay` (y = x + b y) and dot
//! products.

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

/// CPU reference: `y[i] = x[i] + b * y[i]` (fused, as on the GPU).
pub fn xpay_cpu<T: Scalar>(x: &[T], b: T, y: &mut [T]) {
    assert_eq!(x.len(), y.len(), "xpay: x and y differ in length");
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi = b.mul_add(*yi, xi);
    }
}

/// CPU reference: `sum x[i] y[i]`, accumulated in f64 (the GPU's order differs, so results
/// agree to rounding, not to the bit).
pub fn dot_cpu<T: Scalar>(x: &[T], y: &[T]) -> f64 {
    assert_eq!(x.len(), y.len(), "dot: x and y differ in length");
    x.iter().zip(y).map(|(&a, &b)| a.into() * b.into()).sum()
}

/// The element count as the kernels' u32, or an error naming the operation.
fn checked_len<T>(what: &str, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<u32> {
    if x.len() != y.len() {
        return Err(Error::InvalidInput(format!("{what}: x has {} elements, y {}", x.len(), y.len())));
    }
    u32::try_from(x.len())
        .map_err(|_| Error::InvalidInput(format!("{what}: {} elements exceed the u32 index range", x.len())))
}

/// Blocks of 256 threads for a grid-stride kernel over `n` elements: enough to fill the GPU.
fn grid_stride_blocks(gpu: &Gpu, n: u32) -> usize {
    (n as usize).div_ceil(256).clamp(1, gpu.props().sm_count as usize * 8)
}

/// `y = x + b y` on the GPU.
pub fn xpay<T: Scalar>(gpu: &Gpu, x: &CudaSlice<T>, b: T, y: &mut CudaSlice<T>) -> Result<()> {
    let n = checked_len("xpay", x, y)?;
    if n == 0 {
        return Ok(());
    }
    let kernel = gpu.kernel(T::pick(("xpay_f32", "xpay_f64")))?;
    let blocks = grid_stride_blocks(gpu, n);
    // SAFETY: xpay_T(n: u32, x: *const T, b: T, y: *mut T) with x and y of n elements.
    unsafe {
        gpu.launch(&kernel, Launch::linear(blocks * 256, 256), |args| {
            args.arg(&n).arg(x).arg(&b).arg(y);
        })
    }
}

/// Dot products on the GPU, with their scratch buffers allocated once: a grid-stride pass
/// leaves one partial sum per block, one block adds them up in a fixed order (so a result is
/// reproducible run to run).
pub struct Dot<T> {
    partials: CudaSlice<T>,
    result: CudaSlice<T>,
}

impl<T: Scalar> Dot<T> {
    pub fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Dot { partials: gpu.zeros(gpu.props().sm_count as usize * 8)?, result: gpu.zeros(1)? })
    }

    /// `x . y`, waiting for it.
    pub fn run(&mut self, gpu: &Gpu, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<T> {
        let n = checked_len("dot", x, y)?;
        if n == 0 {
            return Ok(T::ZERO);
        }
        let blocks = grid_stride_blocks(gpu, n).min(self.partials.len());
        let count = blocks as u32;
        let partials = gpu.kernel(T::pick(("dot_partials_f32", "dot_partials_f64")))?;
        let sum = gpu.kernel(T::pick(("sum_partials_f32", "sum_partials_f64")))?;
        let scratch = 32 * size_of::<T>();
        // SAFETY: dot_partials_T(n, x, y, partials) with x, y of n elements and one partial
        // per block; sum_partials_T(count, partials, out) in one block; both with the 32
        // values of shared scratch the block reduction needs.
        unsafe {
            gpu.launch(&partials, Launch::linear(blocks * 256, 256).shared(scratch), |args| {
                args.arg(&n).arg(x).arg(y).arg(&mut self.partials);
            })?;
            gpu.launch(&sum, Launch::linear(256, 256).shared(scratch), |args| {
                args.arg(&count).arg(&self.partials).arg(&mut self.result);
            })?;
        }
        Ok(gpu.download(&self.result)?[0])
    }
}

/// `x . y` on the GPU (allocates its scratch; use [`Dot`] in loops).
pub fn dot<T: Scalar>(gpu: &Gpu, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<T> {
    Dot::new(gpu)?.run(gpu, x, y)
}
