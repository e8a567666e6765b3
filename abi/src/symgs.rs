//! Shapes and plans of the SymGS kernels.

/// Warps per block of the sync-free sweep: a block takes one ticket for all its warps.
pub const SYNC_FREE_WARPS_PER_BLOCK: u32 = 4;
/// Shared bytes of the sync-free sweep: the block's ticket (one word, in a 16-byte slot).
pub const SYNC_FREE_SHARED_BYTES: usize = 16;

/// How a finished row of the sync-free sweep tells the rows that wait on it (the sweep's
/// `SIGNAL`): a done flag per row, stored with release semantics after the value...
pub const DONE_FLAGS: u32 = 0;
/// ...or the value itself, polled until it is no longer the "unset" NaN.
pub const VALUE: u32 = 1;

/// Which half of a symmetric sweep a multicolor (or level-copies) launch runs, its `sweep`
/// argument: the backward half...
pub const BACKWARD: u32 = 0;
/// ...the forward half...
pub const FORWARD: u32 = 1;
/// ...or the forward half from x = 0 (a preconditioner's sweep): the entries of later groups
/// multiply zeros, so they are not read...
pub const FORWARD_FROM_ZERO: u32 = 2;
/// ...or the backward half of a sweep that another follows: it also keeps each row's sum over
/// later groups for the next forward half...
pub const BACKWARD_KEEPING_UPPER: u32 = 3;
/// ...or the forward half of a sweep that follows one: each row's sum over later groups is the
/// one kept (no later group has changed since), so only the earlier groups' entries are read.
pub const FORWARD_KEPT_UPPER: u32 = 4;

/// The rows a sync-free sweep reads (its `ROWS`): whole rows...
pub const WHOLE_ROWS: u32 = 0;
/// ...whole rows, keeping each row's sum over the entries it waits on for the next half...
pub const WHOLE_ROWS_KEEPING: u32 = 1;
/// ...or only the entries a row waits on, the rest of its sum from the half before.
pub const HALF_ROWS: u32 = 2;

/// The most rows a node block of the multicolor sweep may hold: each lane keeps two sums per
/// row of its block.
pub const MAX_BLOCK_ROWS: usize = 4;

/// How block tickets of the sync-free sweep map to warp slots of its row order (a slot is
/// one row for a warp per row): tickets `wide_first .. wide_first + wide_tickets` give each
/// warp of the block `batch` consecutive slots, every other ticket one. Batches suit a run of
/// wide levels, whose rows do not wait on each other: a warp's next row is then one ticket and
/// one barrier cheaper. Elsewhere a warp would hold rows that wait on rows it has not reached,
/// so one slot each.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TicketPlan {
    pub wide_first: u32,
    pub wide_tickets: u32,
    pub batch: u32,
}

// SAFETY: #[repr(C)] of u32s.
unsafe impl crate::DeviceParam for TicketPlan {}

impl TicketPlan {
    /// No batches: a slot per warp for every ticket.
    pub const NONE: TicketPlan = TicketPlan { wide_first: 0, wide_tickets: 0, batch: 1 };

    /// Batches of `batch` rows per warp over the longest run of levels (`offsets`: where each
    /// level starts in the order, and the end) of at least `wide_rows` rows each, in whole
    /// tickets of [`SYNC_FREE_WARPS_PER_BLOCK`] warps.
    pub fn new(offsets: &[u32], wide_rows: usize, batch: u32) -> TicketPlan {
        let warps = SYNC_FREE_WARPS_PER_BLOCK;
        let (mut run, mut run_start) = ((0, 0), None);
        for (level, bounds) in offsets.windows(2).enumerate() {
            if ((bounds[1] - bounds[0]) as usize) < wide_rows {
                run_start = None;
                continue;
            }
            let start = offsets[*run_start.get_or_insert(level)];
            if bounds[1] - start > run.1 - run.0 {
                run = (start, bounds[1]);
            }
        }
        // A single ticket is a row per warp (a warp per row).
        let wide_first = run.0.div_ceil(warps);
        let wide_tickets = run.1.saturating_sub(wide_first * warps) / (warps * batch);
        TicketPlan { wide_first, wide_tickets, batch }
    }

    /// The first warp slot of ticket `t` for a block of `warps` warps, and slots per warp.
    #[inline(always)]
    pub fn slots(self, t: u32, warps: u32) -> (u32, u32) {
        let before = t.min(self.wide_first);
        let wide = t.saturating_sub(self.wide_first).min(self.wide_tickets);
        let after = t.saturating_sub(self.wide_first).saturating_sub(self.wide_tickets);
        let first = before.saturating_add(wide.saturating_mul(self.batch)).saturating_add(after);
        let per_warp = if wide < self.wide_tickets && t >= self.wide_first { self.batch } else { 1 };
        (first.saturating_mul(warps), per_warp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const WARPS: u32 = SYNC_FREE_WARPS_PER_BLOCK;

    /// The rows a plan hands out in batches.
    fn batched_rows(plan: TicketPlan) -> (u32, u32) {
        let start = plan.wide_first * WARPS;
        (start, start + plan.wide_tickets * WARPS * plan.batch)
    }

    #[test]
    fn ticket_plan_covers_the_longest_run_of_wide_levels_in_whole_tickets() {
        // Levels of 1, 9, 20, 20, 2, 8 rows: the run of levels of at least 10 rows is 10..50.
        let offsets = [0, 1, 10, 30, 50, 52, 60];
        for batch in [1, 2, 3] {
            let plan = TicketPlan::new(&offsets, 10, batch);
            assert_eq!(plan.batch, batch);
            // Inside the run, short of it at each end by less than a ticket.
            let (start, end) = batched_rows(plan);
            assert!((10..10 + WARPS).contains(&start), "{plan:?}");
            assert!(end <= 50 && 50 - end < WARPS * batch, "{plan:?}");
        }
        // Every level wide: the whole order.
        let (start, end) = batched_rows(TicketPlan::new(&offsets, 1, 1));
        assert_eq!((start, end), (0, 60 / WARPS * WARPS));
        // No level wide enough, or no levels: no batches.
        assert_eq!(TicketPlan::new(&offsets, 21, 2).wide_tickets, 0);
        assert_eq!(TicketPlan::new(&[0], 1, 2).wide_tickets, 0);
    }

    #[test]
    fn tickets_hand_out_every_slot_once_in_order() {
        let plan = TicketPlan { wide_first: 3, wide_tickets: 5, batch: 2 };
        let mut next = 0;
        for t in 0..20 {
            let (first, per_warp) = plan.slots(t, WARPS);
            assert_eq!(first, next, "ticket {t}");
            next = first + per_warp * WARPS;
        }
        assert_eq!(TicketPlan::NONE.slots(7, WARPS), (7 * WARPS, 1));
    }
}
