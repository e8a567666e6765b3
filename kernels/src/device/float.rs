//! The scalar types kernels are generic over.

use core::ops::{Add, Div, Mul, Neg, Sub};

use crate::device::atomic::AtomicAdd;
use crate::device::memory::{LoadNc, Relaxed};
use crate::device::tagged::Tagged;
use crate::device::warp::Shuffle;

/// `f32` or `f64`: arithmetic, warp shuffles, atomic add, read-only cached and relaxed loads,
/// and tagged words.
pub trait Float:
    Copy
    + PartialOrd
    + Add<Output = Self>
    + Sub<Output = Self>
    + Mul<Output = Self>
    + Div<Output = Self>
    + Neg<Output = Self>
    + Shuffle
    + AtomicAdd
    + LoadNc
    + Relaxed
    + Tagged
{
    const ZERO: Self;
    const ONE: Self;
    fn abs(self) -> Self;
    /// `self * a + b` in one rounding.
    fn mul_add(self, a: Self, b: Self) -> Self;
    fn max(self, other: Self) -> Self {
        if other > self { other } else { self }
    }
}

impl Float for f32 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn abs(self) -> Self {
        f32::abs(self)
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        core::intrinsics::fmaf32(self, a, b)
    }
}

impl Float for f64 {
    const ZERO: Self = 0.0;
    const ONE: Self = 1.0;
    fn abs(self) -> Self {
        f64::abs(self)
    }
    fn mul_add(self, a: Self, b: Self) -> Self {
        core::intrinsics::fmaf64(self, a, b)
    }
}
