//! The element types of the kernels: `f32` and `f64`.

/// `f32` or `f64`: what the kernels, the CPU references and the vendor baselines compute in.
/// Kernels built for both take `T: Scalar` (see [`crate::kernels`]), so generic host code
/// launches them for either.
pub trait Scalar:
    cudarc::driver::DeviceRepr
    + cudarc::nccl::NcclType
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
    + 'static
{
    /// "f32" or "f64": the suffix of the kernels' entry points.
    const NAME: &'static str;
    const ZERO: Self;
    const ONE: Self;
    fn from_f64(v: f64) -> Self;
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
