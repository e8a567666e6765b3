//! Hopper's warpgroup matrix multiply (`wgmma.mma_async`, sm_90a): four warps issue one
//! asynchronous product whose B operand the tensor cores read from shared memory through a
//! matrix descriptor, and whose accumulators stay in the warps' registers until waited for.
//! Only in the sm_90a module (arch-specific instructions: not for later GPUs).

use core::arch::asm;

use super::shared::{SharedArray, address};

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

/// Makes this thread's writes to shared memory (plain stores, `cp.async`) visible to the
/// async proxy the tensor cores read through; before the barrier that precedes the `wgmma`.
#[inline(always)]
pub fn fence_shared_for_async() {
    // SAFETY: as above.
    unsafe { asm!("fence.proxy.async.shared::cta;", options(nostack)) };
}

/// The descriptor of a K-major operand tile in shared memory with the 128-byte swizzle: rows
/// of 128 bytes (32 f32 of k), 16-byte chunk c of row r stored at chunk `c ^ (r % 8)`, groups
/// of 8 rows 1024 bytes apart, the tile 1024-byte aligned. `k_bytes` (a multiple of 32) picks
/// the k-step inside the rows.
#[inline(always)]
pub fn descriptor_k_major_128b<T: Copy>(tile: SharedArray<T>, k_bytes: u32) -> u64 {
    let start = (address(tile, 0) + k_bytes) as u64;
    // Start address and strides in 16-byte units; the leading byte offset is unused with this
    // swizzle (1 by convention); bits 62-63: 1 = 128-byte swizzle.
    (start & 0x3FFFF) >> 4 | 1 << 16 | (1024 >> 4) << 32 | 1 << 62
}

/// acc += A B on a 64 x 128 x 8 TF32 tile (`wgmma.mma_async.m64n128k8.f32.tf32.tf32`),
/// asynchronous: the warpgroup's 128 threads call it together after [`fence`], and read acc
/// only after [`commit_group`] and [`wait_group`]. A (64 x 8) comes from registers: warp w of
/// the warpgroup holds rows 16w.., lane (g, t) = (l / 4, l % 4) holds A[16w + g][t],
/// A[16w + g + 8][t], A[16w + g][t + 4], A[16w + g + 8][t + 4] (f32 bits: the tensor cores
/// read their TF32 part, `mma::to_tf32` rounds them first). B (8 x
/// 128) is read through `b` ([`descriptor_k_major_128b`]: row n of that tile is column n of B).
/// acc[4j..4j + 4] of lane (g, t) in warp w: D[16w + g][8j + 2t + {0, 1}], then
/// D[16w + g + 8][8j + 2t + {0, 1}].
///
/// # Safety
/// `b` describes 128 rows of a shared tile whose writes are fenced for the async proxy and
/// behind a barrier; the shared memory stays unwritten and acc unread until the wait.
#[inline(always)]
pub unsafe fn mma_m64n128k8_tf32(acc: &mut [f32; 64], a: [u32; 4], b: u64) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 {{{d0}, {d1}, {d2}, {d3}, {d4}, {d5}, {d6}, {d7}, {d8}, {d9}, {d10}, {d11}, {d12}, {d13}, {d14}, {d15}, {d16}, {d17}, {d18}, {d19}, {d20}, {d21}, {d22}, {d23}, {d24}, {d25}, {d26}, {d27}, {d28}, {d29}, {d30}, {d31}, {d32}, {d33}, {d34}, {d35}, {d36}, {d37}, {d38}, {d39}, {d40}, {d41}, {d42}, {d43}, {d44}, {d45}, {d46}, {d47}, {d48}, {d49}, {d50}, {d51}, {d52}, {d53}, {d54}, {d55}, {d56}, {d57}, {d58}, {d59}, {d60}, {d61}, {d62}, {d63}}}, {{{a0}, {a1}, {a2}, {a3}}}, {b}, 1, 1, 1;",
            d0 = inout(reg32) acc[0],
            d1 = inout(reg32) acc[1],
            d2 = inout(reg32) acc[2],
            d3 = inout(reg32) acc[3],
            d4 = inout(reg32) acc[4],
            d5 = inout(reg32) acc[5],
            d6 = inout(reg32) acc[6],
            d7 = inout(reg32) acc[7],
            d8 = inout(reg32) acc[8],
            d9 = inout(reg32) acc[9],
            d10 = inout(reg32) acc[10],
            d11 = inout(reg32) acc[11],
            d12 = inout(reg32) acc[12],
            d13 = inout(reg32) acc[13],
            d14 = inout(reg32) acc[14],
            d15 = inout(reg32) acc[15],
            d16 = inout(reg32) acc[16],
            d17 = inout(reg32) acc[17],
            d18 = inout(reg32) acc[18],
            d19 = inout(reg32) acc[19],
            d20 = inout(reg32) acc[20],
            d21 = inout(reg32) acc[21],
            d22 = inout(reg32) acc[22],
            d23 = inout(reg32) acc[23],
            d24 = inout(reg32) acc[24],
            d25 = inout(reg32) acc[25],
            d26 = inout(reg32) acc[26],
            d27 = inout(reg32) acc[27],
            d28 = inout(reg32) acc[28],
            d29 = inout(reg32) acc[29],
            d30 = inout(reg32) acc[30],
            d31 = inout(reg32) acc[31],
            d32 = inout(reg32) acc[32],
            d33 = inout(reg32) acc[33],
            d34 = inout(reg32) acc[34],
            d35 = inout(reg32) acc[35],
            d36 = inout(reg32) acc[36],
            d37 = inout(reg32) acc[37],
            d38 = inout(reg32) acc[38],
            d39 = inout(reg32) acc[39],
            d40 = inout(reg32) acc[40],
            d41 = inout(reg32) acc[41],
            d42 = inout(reg32) acc[42],
            d43 = inout(reg32) acc[43],
            d44 = inout(reg32) acc[44],
            d45 = inout(reg32) acc[45],
            d46 = inout(reg32) acc[46],
            d47 = inout(reg32) acc[47],
            d48 = inout(reg32) acc[48],
            d49 = inout(reg32) acc[49],
            d50 = inout(reg32) acc[50],
            d51 = inout(reg32) acc[51],
            d52 = inout(reg32) acc[52],
            d53 = inout(reg32) acc[53],
            d54 = inout(reg32) acc[54],
            d55 = inout(reg32) acc[55],
            d56 = inout(reg32) acc[56],
            d57 = inout(reg32) acc[57],
            d58 = inout(reg32) acc[58],
            d59 = inout(reg32) acc[59],
            d60 = inout(reg32) acc[60],
            d61 = inout(reg32) acc[61],
            d62 = inout(reg32) acc[62],
            d63 = inout(reg32) acc[63],
            a0 = in(reg32) a[0],
            a1 = in(reg32) a[1],
            a2 = in(reg32) a[2],
            a3 = in(reg32) a[3],
            b = in(reg64) b,
            options(nostack),
        );
    }
}
