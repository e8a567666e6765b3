//! Shapes and plans of the SymGS kernels.

/// Warps per block of the sync-free sweep.
pub const SYNC_FREE_WARPS_PER_BLOCK: u32 = 4;

/// Threads per block of the multicolor CSR relaxation (`relax_color`), which is built for 16
/// such blocks an SM at once.
pub const RELAX_COLOR_THREADS: u32 = 128;

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

/// The words of a queue of rows taken in rounds on the device (the coloring's breadth-first
/// search and Jones-Plassmann's rounds), by the round modulo 3: where a round's appended rows
/// start, from `ROUND_START`...
pub const ROUND_START: usize = 0;
/// ...and how many there are, from `ROUND_COUNT`.
pub const ROUND_COUNT: usize = 3;
/// The queue's words.
pub const ROUND_WORDS: usize = 6;
/// The breadth-first search's flag after the queue's words: it met an odd cycle.
pub const ODD_CYCLE: usize = ROUND_WORDS;
