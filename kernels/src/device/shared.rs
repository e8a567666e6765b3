//! Dynamic shared memory: one block-wide buffer whose size the host sets at launch.

use core::arch::asm;
use core::intrinsics::gpu::gpu_launch_sized_workgroup_mem;
use core::marker::PhantomData;

/// A typed window on the block's dynamic shared memory. Indices are not checked: the kernel
/// sizes its accesses by the byte count the host documents for it.
#[derive(Clone, Copy)]
pub struct SharedArray<T> {
    base: *mut T,
    _type: PhantomData<T>,
}

/// The start of the dynamic shared memory, viewed as `T`s (aligned to 16 bytes).
#[inline(always)]
pub fn dynamic<T: Copy>() -> SharedArray<T> {
    // Ask for 16-byte alignment so any scalar or vector type can start here.
    let base = gpu_launch_sized_workgroup_mem::<u128>();
    SharedArray { base: base.cast(), _type: PhantomData }
}

impl<T: Copy> SharedArray<T> {
    /// The `T` at `index`.
    ///
    /// # Safety
    /// `index` lies inside the dynamic shared memory the host allocated.
    #[inline(always)]
    pub unsafe fn get(self, index: u32) -> T {
        unsafe { *self.base.add(index as usize) }
    }

    /// Writes `value` at `index`.
    ///
    /// # Safety
    /// As for [`SharedArray::get`].
    #[inline(always)]
    pub unsafe fn set(self, index: u32, value: T) {
        unsafe { *self.base.add(index as usize) = value }
    }

    /// The raw pointer to element `index` (for atomics on shared memory).
    #[inline(always)]
    pub fn ptr(self, index: u32) -> *mut T {
        self.base.wrapping_add(index as usize)
    }

    /// A second array of `U` that starts after `count` elements of this one, rounded up to 16
    /// bytes: carves several arrays out of one dynamic allocation.
    #[inline(always)]
    pub fn after<U: Copy>(self, count: u32) -> SharedArray<U> {
        let bytes = (count as usize * core::mem::size_of::<T>()).next_multiple_of(16);
        SharedArray { base: self.base.cast::<u8>().wrapping_add(bytes).cast(), _type: PhantomData }
    }
}

/// The shared-window address of element `index` of `array` (`__cvta_generic_to_shared`).
#[inline(always)]
pub fn address<T: Copy>(array: SharedArray<T>, index: u32) -> u32 {
    let address: u32;
    // SAFETY: converts a pointer value; nothing is read or written.
    unsafe {
        asm!(
            "{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; cvt.u32.u64 {a}, s; }}",
            p = in(reg64) array.ptr(index).addr(),
            a = out(reg32) address,
            options(pure, nomem, nostack),
        )
    };
    address
}
