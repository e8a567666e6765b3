//! Hopper's warpgroup matrix multiply (`wgmma.mma_async`, sm_90a): four warps issue one
//! asynchronous product whose A operand comes from their registers and whose B operand the
//! tensor cores read from shared memory through a matrix descriptor; the accumulators stay in
//! the warps' registers until waited for.
//! Only in the sm_90a module (arch-specific instructions: not for later GPUs).

use core::arch::asm;

/// Orders this thread's earlier register writes (accumulators, A fragments) before the
/// warpgroup's next `wgmma` reads them. Every thread of the warpgroup calls it.
#[inline(always)]
pub fn fence() {
    // SAFETY: an ordering instruction, no operands.
    unsafe { asm!("wgmma.fence.sync.aligned;", options(nostack)) };
}

/// Closes the group of `wgmma`s issued since the last commit. Every thread calls it.
#[inline(always)]
pub fn commit_group() {
    // SAFETY: as above.
    unsafe { asm!("wgmma.commit_group.sync.aligned;", options(nostack)) };
}

/// Waits until at most `PENDING` committed groups are still running; their accumulators may
/// be read, and the shared memory they read written, once their group is done.
#[inline(always)]
pub fn wait_group<const PENDING: u32>() {
    // SAFETY: as above.
    unsafe { asm!("wgmma.wait_group.sync.aligned {n};", n = const PENDING, options(nostack)) };
}

/// The descriptor of a K-major operand tile in shared memory with the 128-byte swizzle, at
/// shared-window address `start`: rows of 128 bytes (32 f32 of k), 16-byte chunk c of row r
/// stored at chunk `c ^ (r % 8)`, groups of 8 rows 1024 bytes apart, the tile 1024-byte aligned.
/// `start` plus a multiple of 32 bytes picks a k-step inside the rows.
#[inline(always)]
pub fn descriptor_k_major_128b(start: u32) -> u64 {
    let start = start as u64;
    // Start address and strides in 16-byte units; the leading byte offset is unused with this
    // swizzle (1 by convention); bits 62-63: 1 = 128-byte swizzle.
    (start & 0x3FFFF) >> 4 | 1 << 16 | (1024 >> 4) << 32 | 1 << 62
}

/// `wgmma.mma_async` on TF32 with A from registers: `$shape`'s accumulators `$acc[0..]`
/// (positional operands 0..), A's fragment `$a`, B's descriptor `$b`, scale 1 for all.
macro_rules! mma_tf32_registers {
    ($shape:literal, $acc:ident, $a:ident, $b:ident, [$first:literal $(, $i:literal)*]) => {
        asm!(
            concat!(
                "wgmma.mma_async.sync.aligned.", $shape, ".f32.tf32.tf32 {{{", $first, "}"
                $(, ", {", $i, "}")*, "}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, 1, 1, 1;"
            ),
            inout(reg32) $acc[$first], $(inout(reg32) $acc[$i],)*
            a0 = in(reg32) $a[0],
            a1 = in(reg32) $a[1],
            a2 = in(reg32) $a[2],
            a3 = in(reg32) $a[3],
            b = in(reg64) $b,
            options(nostack),
        )
    };
}

/// acc += A B on a 64 x 256 x 8 TF32 tile (`wgmma.mma_async.m64n256k8.f32.tf32.tf32`),
/// asynchronous: the warpgroup's 128 threads call it together after [`fence`], and read acc
/// only after [`commit_group`] and [`wait_group`]. A (64 x 8) comes from registers: warp w of
/// the warpgroup holds rows 16w.., lane (g, t) = (l / 4, l % 4) holds A[16w + g][t],
/// A[16w + g + 8][t], A[16w + g][t + 4], A[16w + g + 8][t + 4] (f32 bits: the tensor cores
/// read their TF32 part). B (8 x 256) is read through `b` ([`descriptor_k_major_128b`]: row n
/// of that tile is column n of B). acc[4j..4j + 4] of lane (g, t) in warp w: D[16w + g][8j +
/// 2t + {0, 1}], then D[16w + g + 8][8j + 2t + {0, 1}], j < 32.
///
/// # Safety
/// `b` describes 256 rows of a shared tile whose writes are visible to the async proxy (landed
/// copies of the tensor memory accelerator); the shared memory stays unwritten, and acc and
/// `a`'s registers unread and unwritten, until the wait (the caller reads the next fragments
/// into other variables).
#[inline(always)]
pub unsafe fn mma_m64n256k8_tf32(acc: &mut [f32; 128], a: [u32; 4], b: u64) {
    // SAFETY: the caller's contract.
    unsafe {
        mma_tf32_registers!(
            "m64n256k8",
            acc,
            a,
            b,
            [
                0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25,
                26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48,
                49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 66, 67, 68, 69, 70, 71,
                72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92, 93, 94,
                95, 96, 97, 98, 99, 100, 101, 102, 103, 104, 105, 106, 107, 108, 109, 110, 111, 112, 113,
                114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 126, 127
            ]
        )
    };
}

/// Sets this warpgroup's registers per thread to `N` (a multiple of 8, 24..=256): fewer gives
/// them back to the block's pool, more waits for them there. Every thread of the warpgroup
/// calls it, with the same `N`.
#[inline(always)]
pub fn set_max_registers<const N: u32, const MORE: bool>() {
    // SAFETY: changes only this warpgroup's register allocation; ptxas allocates the code
    // after it within `N`.
    unsafe {
        if MORE {
            asm!("setmaxnreg.inc.sync.aligned.u32 {n};", n = const N, options(nostack))
        } else {
            asm!("setmaxnreg.dec.sync.aligned.u32 {n};", n = const N, options(nostack))
        }
    };
}
