//! What the host and the kernels share, built for both sides: the launch shapes (tile sizes,
//! threads per block, pipeline stages), the shared-memory sizes those shapes need, and the
//! structures a kernel takes by value. One definition each, so the two sides cannot drift.
//!
//! A kernel's parameter list itself is declared once, on the kernel (`#[gpu::kernel]` in the
//! `kernels` crate); this crate holds only what that list refers to.
#![no_std]

pub mod gemm;
pub mod solve;
pub mod spmv;
pub mod symgs;

/// Shared-memory bytes of a block reduction (`device::block::reduce_*`): a value per warp, for
/// blocks of up to 32 warps.
pub const fn block_reduction_bytes(elem_size: usize) -> usize {
    32 * elem_size
}

/// A structure the host may pass to a kernel by value: `#[repr(C)]`, `Copy`, no references.
///
/// # Safety
/// The type's layout is the same on the host and on the device (`#[repr(C)]` of integers,
/// floats and raw pointers).
pub unsafe trait DeviceParam: Copy {}

/// A block of a row-major matrix in device memory that a kernel reads: element (i, j) is at
/// `ptr + i * ld + j`. The host builds it from a checked view (`rgla::gpu::MatrixView`).
#[repr(C)]
pub struct Strided<T> {
    pub ptr: *const T,
    pub ld: u32,
}

/// As [`Strided`], for a block the kernel writes.
#[repr(C)]
pub struct StridedMut<T> {
    pub ptr: *mut T,
    pub ld: u32,
}

// Manual impls: a derive would ask `T: Copy`, which the pointers do not need.
impl<T> Clone for Strided<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for Strided<T> {}
impl<T> Clone for StridedMut<T> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<T> Copy for StridedMut<T> {}

// SAFETY: #[repr(C)] of a raw pointer and a u32.
unsafe impl<T> DeviceParam for Strided<T> {}
// SAFETY: as above.
unsafe impl<T> DeviceParam for StridedMut<T> {}

impl<T> Strided<T> {
    /// Element (row, col).
    ///
    /// # Safety
    /// (row, col) lies inside the block the host described (whose elements the host numbers
    /// below 2^32).
    #[inline(always)]
    pub unsafe fn at(self, row: u32, col: u32) -> *const T {
        // SAFETY: the caller's bounds.
        unsafe { self.ptr.add((row * self.ld + col) as usize) }
    }
}

impl<T> StridedMut<T> {
    /// Element (row, col).
    ///
    /// # Safety
    /// (row, col) lies inside the block the host described (whose elements the host numbers
    /// below 2^32).
    #[inline(always)]
    pub unsafe fn at(self, row: u32, col: u32) -> *mut T {
        // SAFETY: the caller's bounds.
        unsafe { self.ptr.add((row * self.ld + col) as usize) }
    }

    /// The same block, read-only.
    #[inline(always)]
    pub fn as_const(self) -> Strided<T> {
        Strided { ptr: self.ptr, ld: self.ld }
    }
}
