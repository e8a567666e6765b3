//! Atomics at GPU scope (`atom.*.gpu`), on global or shared memory (generic addresses).
//! `core::sync::atomic` would lower to system scope, slower and not what kernels need.

use core::arch::asm;

/// Types with a hardware atomic add.
pub trait AtomicAdd: Copy {
    /// Adds `value` to `*address`; returns the old value.
    ///
    /// # Safety
    /// `address` is a valid, aligned device pointer.
    unsafe fn atomic_add(address: *mut Self, value: Self) -> Self;
}

macro_rules! atomic_add_impl {
    ($t:ty, $ptx:literal, $class:ident) => {
        impl AtomicAdd for $t {
            #[inline(always)]
            unsafe fn atomic_add(address: *mut Self, value: Self) -> Self {
                let old: $t;
                // SAFETY: the caller guarantees a valid aligned address.
                unsafe {
                    asm!(concat!("atom.relaxed.gpu.add.", $ptx, " {old}, [{addr}], {v};"),
                        old = out($class) old, addr = in(reg64) address, v = in($class) value)
                };
                old
            }
        }
    };
}
atomic_add_impl!(u32, "u32", reg32);
atomic_add_impl!(f32, "f32", reg32);
atomic_add_impl!(f64, "f64", reg64);

/// `*address += value` at GPU scope; returns the old value (`atomicAdd`).
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn add<T: AtomicAdd>(address: *mut T, value: T) -> T {
    unsafe { T::atomic_add(address, value) }
}

/// If `*address == compare`, stores `value`; returns the old value (`atomicCAS`).
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn compare_and_swap(address: *mut u32, compare: u32, value: u32) -> u32 {
    let old: u32;
    unsafe {
        asm!("atom.relaxed.gpu.cas.b32 {old}, [{addr}], {cmp}, {v};",
            old = out(reg32) old, addr = in(reg64) address, cmp = in(reg32) compare, v = in(reg32) value)
    };
    old
}

/// 64-bit compare-and-swap.
///
/// # Safety
/// `address` is a valid, 8-byte aligned device pointer.
#[inline(always)]
pub unsafe fn compare_and_swap_u64(address: *mut u64, compare: u64, value: u64) -> u64 {
    let old: u64;
    unsafe {
        asm!("atom.relaxed.gpu.cas.b64 {old}, [{addr}], {cmp}, {v};",
            old = out(reg64) old, addr = in(reg64) address, cmp = in(reg64) compare, v = in(reg64) value)
    };
    old
}

/// `*address = max(*address, value)`; returns the old value (`atomicMax`).
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn max_u32(address: *mut u32, value: u32) -> u32 {
    let old: u32;
    unsafe {
        asm!("atom.relaxed.gpu.max.u32 {old}, [{addr}], {v};",
            old = out(reg32) old, addr = in(reg64) address, v = in(reg32) value)
    };
    old
}

/// `*address = min(*address, value)`; returns the old value (`atomicMin`).
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn min_u32(address: *mut u32, value: u32) -> u32 {
    let old: u32;
    unsafe {
        asm!("atom.relaxed.gpu.min.u32 {old}, [{addr}], {v};",
            old = out(reg32) old, addr = in(reg64) address, v = in(reg32) value)
    };
    old
}

/// Signed `atomicMax`.
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn max_i32(address: *mut i32, value: i32) -> i32 {
    let old: i32;
    unsafe {
        asm!("atom.relaxed.gpu.max.s32 {old}, [{addr}], {v};",
            old = out(reg32) old, addr = in(reg64) address, v = in(reg32) value)
    };
    old
}

/// `*address = max(*address, value)` for f32 by compare-and-swap (no hardware float max);
/// returns the old value. NaN inputs are ignored.
///
/// # Safety
/// `address` is a valid, aligned device pointer.
#[inline(always)]
pub unsafe fn max_f32(address: *mut f32, value: f32) -> f32 {
    let bits = address.cast::<u32>();
    let mut old = unsafe { crate::device::memory::load_volatile(bits) };
    while f32::from_bits(old) < value {
        let seen = unsafe { compare_and_swap(bits, old, value.to_bits()) };
        if seen == old {
            break;
        }
        old = seen;
    }
    f32::from_bits(old)
}
