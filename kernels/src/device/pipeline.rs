//! Asynchronous global-to-shared copies (`cp.async`, sm_80+), CUDA's `__pipeline_memcpy_async`.
//! A thread queues copies, closes the ones queued so far into a group with [`commit`], and with
//! [`wait_pending`] waits until at most N of its groups are still in flight. The copies bypass
//! registers, so a kernel can keep several tiles in flight while it computes on another; a
//! block barrier after the wait makes every thread's landed copies visible to the block.

use core::arch::asm;

use crate::device::shared::{SharedArray, address as shared_address};

/// Queues a copy of the first `valid_bytes` (0 to 16) of the 16 bytes at `src` to element
/// `index` of `dst`, zero-filling the rest (`cp.async.cg`: cached in L2 only, for data the
/// block reads once). With `valid_bytes` 0 nothing is read and the 16 bytes become zeros.
///
/// # Safety
/// `dst`'s element `index` is 16-byte aligned with 16 bytes of shared memory behind it; `src`
/// is 16-byte aligned and its first `valid_bytes` lie in global memory. The destination is not
/// read or written by the block until the copy's group has been waited for and a barrier
/// passed.
#[inline(always)]
pub unsafe fn copy_16<T: Copy>(dst: SharedArray<T>, index: u32, src: *const T, valid_bytes: u32) {
    let dst = shared_address(dst, index);
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "cp.async.cg.shared.global [{d}], [{s}], 16, {n};",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) valid_bytes,
            options(nostack),
        )
    };
}

/// As [`copy_16`] for 8 bytes (`cp.async.ca`: the 8-byte size has no L2-only form), for rows
/// that are not 16-byte aligned.
///
/// # Safety
/// As for [`copy_16`], with 8-byte alignment and `valid_bytes` 0 to 8.
#[inline(always)]
pub unsafe fn copy_8<T: Copy>(dst: SharedArray<T>, index: u32, src: *const T, valid_bytes: u32) {
    let dst = shared_address(dst, index);
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "cp.async.ca.shared.global [{d}], [{s}], 8, {n};",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) valid_bytes,
            options(nostack),
        )
    };
}

/// As [`copy_8`] for 4 bytes.
///
/// # Safety
/// As for [`copy_16`], with 4-byte alignment and `valid_bytes` 0 to 4.
#[inline(always)]
pub unsafe fn copy_4<T: Copy>(dst: SharedArray<T>, index: u32, src: *const T, valid_bytes: u32) {
    let dst = shared_address(dst, index);
    // SAFETY: the caller's contract above.
    unsafe {
        asm!(
            "cp.async.ca.shared.global [{d}], [{s}], 4, {n};",
            d = in(reg32) dst,
            s = in(reg64) src,
            n = in(reg32) valid_bytes,
            options(nostack),
        )
    };
}

/// Closes this thread's copies queued since the last commit into one group (possibly empty,
/// which keeps the group count of a pipeline's every iteration the same).
#[inline(always)]
pub fn commit() {
    // SAFETY: only marks a group boundary in this thread's queue of copies.
    unsafe { asm!("cp.async.commit_group;", options(nostack)) };
}

/// Waits until at most `pending` of this thread's committed groups are still in flight (every
/// older group has landed in shared memory). The instruction takes the count as an immediate:
/// 0 to 7 are exact, a larger count waits for everything, which is always correct.
#[inline(always)]
pub fn wait_pending(pending: u32) {
    // SAFETY: waits for this thread's own copies; no operands.
    unsafe {
        match pending {
            1 => asm!("cp.async.wait_group 1;", options(nostack)),
            2 => asm!("cp.async.wait_group 2;", options(nostack)),
            3 => asm!("cp.async.wait_group 3;", options(nostack)),
            4 => asm!("cp.async.wait_group 4;", options(nostack)),
            5 => asm!("cp.async.wait_group 5;", options(nostack)),
            6 => asm!("cp.async.wait_group 6;", options(nostack)),
            7 => asm!("cp.async.wait_group 7;", options(nostack)),
            _ => asm!("cp.async.wait_all;", options(nostack)),
        }
    }
}
