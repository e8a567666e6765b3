//! Hopper's tensor memory accelerator (sm_90): one thread asks for a whole 2-D tile of a global
//! matrix, described by a tensor map the host encodes (`cuTensorMapEncodeTiled`), and the copy
//! engine writes it to shared memory in the map's swizzle, zeros where the tile reaches past the
//! matrix. An mbarrier in shared memory counts the bytes landed; the threads that need the tile
//! wait for its phase to flip.

use core::arch::asm;

/// An mbarrier: a 64-bit word in shared memory, named by its shared-window address (8-byte
/// aligned). Each phase completes when its expected arrivals and bytes have all come in, and
/// the next phase begins.
#[derive(Clone, Copy)]
pub struct Barrier(pub u32);

impl Barrier {
    /// Sets up the barrier for `arrivals` arrivals a phase. One thread, before
    /// [`fence_barrier_init`] and a block barrier.
    #[inline(always)]
    pub fn init(self, arrivals: u32) {
        // SAFETY: writes the barrier word at a shared address the caller owns.
        unsafe {
            asm!("mbarrier.init.shared::cta.b64 [{b}], {n};", b = in(reg32) self.0, n = in(reg32) arrivals, options(nostack))
        };
    }

    /// One arrival that also expects `bytes` more of copies to land in this phase.
    #[inline(always)]
    pub fn arrive_expecting(self, bytes: u32) {
        // SAFETY: an initialized barrier (the caller's kernel set it up).
        unsafe {
            asm!(
                "mbarrier.arrive.expect_tx.shared::cta.b64 {s}, [{b}], {n};",
                s = out(reg64) _,
                b = in(reg32) self.0,
                n = in(reg32) bytes,
                options(nostack),
            )
        };
    }

    /// One arrival.
    #[inline(always)]
    pub fn arrive(self) {
        // SAFETY: as above.
        unsafe {
            asm!("mbarrier.arrive.shared::cta.b64 {s}, [{b}];", s = out(reg64) _, b = in(reg32) self.0, options(nostack))
        };
    }

    /// Waits until the phase of parity `parity` (0 for the first, 1 for the second, ...) has
    /// completed; the copies it counted are then visible to this thread.
    #[inline(always)]
    pub fn wait(self, parity: u32) {
        loop {
            let done: u32;
            // SAFETY: as above; `try_wait` suspends the thread a while before it answers no.
            unsafe {
                asm!(
                    "{{ .reg .pred p; mbarrier.try_wait.parity.shared::cta.b64 p, [{b}], {q}; selp.u32 {d}, 1, 0, p; }}",
                    d = out(reg32) done,
                    b = in(reg32) self.0,
                    q = in(reg32) parity,
                    options(nostack),
                )
            };
            if done != 0 {
                return;
            }
        }
    }
}

/// Makes barrier initialisations visible to the copy engine; before the block barrier that
/// follows them.
#[inline(always)]
pub fn fence_barrier_init() {
    // SAFETY: an ordering instruction, no operands.
    unsafe { asm!("fence.mbarrier_init.release.cluster;", options(nostack)) };
}

/// Copies the tile of `map` whose first element is (`column`, `row`) of the global matrix into
/// shared memory at `destination` (a shared-window address, aligned as the map's swizzle
/// needs), and counts its bytes on `landed`.
///
/// # Safety
/// `map` points to a valid tensor map in global memory (64-byte aligned), written before the
/// launch; the destination's bytes lie in the block's shared memory and nobody reads or writes
/// them until `landed`'s phase completes.
#[inline(always)]
pub unsafe fn load_tile(destination: u32, map: *const u64, column: u32, row: u32, landed: Barrier) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}}}], [{b}];",
            d = in(reg32) destination,
            m = in(reg64) map,
            x = in(reg32) column,
            y = in(reg32) row,
            b = in(reg32) landed.0,
            options(nostack),
        )
    };
}

/// As [`load_tile`] for a map of three dimensions: the box whose first element is (`x`, `y`,
/// `z`).
///
/// # Safety
/// As [`load_tile`].
#[inline(always)]
pub unsafe fn load_box_3d(destination: u32, map: *const u64, [x, y, z]: [u32; 3], landed: Barrier) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [{d}], [{m}, {{{x}, {y}, {z}}}], [{b}];",
            d = in(reg32) destination,
            m = in(reg64) map,
            x = in(reg32) x,
            y = in(reg32) y,
            z = in(reg32) z,
            b = in(reg32) landed.0,
            options(nostack),
        )
    };
}

/// As [`load_tile`], the tile written at `destination` in every block of the cluster named by
/// `blocks` (bit r: the block of rank r), each counting its bytes on its own `landed` (the
/// same shared-window address in each block).
///
/// # Safety
/// As [`load_tile`], in each of those blocks.
#[inline(always)]
pub unsafe fn load_tile_multicast(
    destination: u32,
    map: *const u64,
    column: u32,
    row: u32,
    landed: Barrier,
    blocks: u16,
) {
    // SAFETY: the caller's contract.
    unsafe {
        asm!(
            "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [{d}], [{m}, {{{x}, {y}}}], [{b}], {k};",
            d = in(reg32) destination,
            m = in(reg64) map,
            x = in(reg32) column,
            y = in(reg32) row,
            b = in(reg32) landed.0,
            k = in(reg16) blocks,
            options(nostack),
        )
    };
}

/// This block's rank in its cluster.
#[inline(always)]
pub fn cluster_rank() -> u32 {
    let rank: u32;
    // SAFETY: reads a special register.
    unsafe { asm!("mov.u32 {r}, %cluster_ctarank;", r = out(reg32) rank, options(nostack, nomem)) };
    rank
}

/// Waits until every thread of every block of the cluster has arrived here; what each wrote to
/// shared memory before (barrier initialisations among it) is then visible to all.
#[inline(always)]
pub fn cluster_sync() {
    cluster_arrive();
    cluster_wait();
}

/// The first half of [`cluster_sync`]: this thread has arrived. Not `.aligned`: the compiler
/// may duplicate inline assembly into branches, and the lanes must meet the same instruction.
#[inline(always)]
pub fn cluster_arrive() {
    // SAFETY: a barrier, no operands.
    unsafe { asm!("barrier.cluster.arrive.release;", options(nostack)) };
}

/// The second half of [`cluster_sync`]: waits for every thread of the cluster to arrive.
#[inline(always)]
pub fn cluster_wait() {
    // SAFETY: as above.
    unsafe { asm!("barrier.cluster.wait.acquire;", options(nostack)) };
}

impl Barrier {
    /// One arrival on the barrier at the same shared-window address in the cluster's block of
    /// rank `rank`.
    #[inline(always)]
    pub fn arrive_in(self, rank: u32) {
        // SAFETY: the barrier is initialized in every block of the cluster, which all live
        // until the cluster's last `cluster_sync`.
        unsafe {
            asm!(
                "{{ .reg .b32 r; mapa.shared::cluster.u32 r, {b}, {k}; mbarrier.arrive.shared::cluster.b64 _, [r]; }}",
                b = in(reg32) self.0,
                k = in(reg32) rank,
                options(nostack),
            )
        };
    }
}
