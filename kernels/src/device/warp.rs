//! Warp-level primitives over the 32 lanes of a warp: shuffles, votes, reductions, and
//! appends to a queue. Every lane of the warp must take part (full mask).

use core::arch::asm;

use crate::device::atomic;
use crate::device::thread::lane_id;

/// Mask of all 32 lanes.
pub const FULL_MASK: u32 = 0xffff_ffff;

unsafe extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_bfly(mask: u32, value: u32, lane_mask: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_down(mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_up(mask: u32, value: u32, delta: u32, clamp: u32) -> u32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_idx(mask: u32, value: u32, lane: u32, clamp: u32) -> u32;
}

/// The `c` operand of `shfl.sync`: clamp at lane 31 (0 for `up`, which clamps at lane 0).
const CLAMP: u32 = 0x1f;

/// How a value moves between lanes: `Xor` (butterfly), `Down`, `Up`, `Idx` (broadcast).
#[derive(Clone, Copy)]
pub enum ShuffleMode {
    Xor,
    Down,
    Up,
    Idx,
}

#[inline(always)]
fn shuffle_u32(mode: ShuffleMode, value: u32, operand: u32) -> u32 {
    // SAFETY: warp-synchronous shuffles with the full mask; all lanes call them together.
    unsafe {
        match mode {
            ShuffleMode::Xor => shfl_bfly(FULL_MASK, value, operand, CLAMP),
            ShuffleMode::Down => shfl_down(FULL_MASK, value, operand, CLAMP),
            ShuffleMode::Up => shfl_up(FULL_MASK, value, operand, 0),
            ShuffleMode::Idx => shfl_idx(FULL_MASK, value, operand, CLAMP),
        }
    }
}

/// A type that can move between lanes of a warp (32-bit types in one shuffle, 64-bit in two).
pub trait Shuffle: Copy {
    fn shuffle(self, mode: ShuffleMode, operand: u32) -> Self;
}

impl Shuffle for u32 {
    #[inline(always)]
    fn shuffle(self, mode: ShuffleMode, operand: u32) -> Self {
        shuffle_u32(mode, self, operand)
    }
}
impl Shuffle for i32 {
    #[inline(always)]
    fn shuffle(self, mode: ShuffleMode, operand: u32) -> Self {
        shuffle_u32(mode, self as u32, operand) as i32
    }
}
impl Shuffle for f32 {
    #[inline(always)]
    fn shuffle(self, mode: ShuffleMode, operand: u32) -> Self {
        f32::from_bits(shuffle_u32(mode, self.to_bits(), operand))
    }
}
impl Shuffle for u64 {
    #[inline(always)]
    fn shuffle(self, mode: ShuffleMode, operand: u32) -> Self {
        let lo = shuffle_u32(mode, self as u32, operand);
        let hi = shuffle_u32(mode, (self >> 32) as u32, operand);
        (hi as u64) << 32 | lo as u64
    }
}
impl Shuffle for f64 {
    #[inline(always)]
    fn shuffle(self, mode: ShuffleMode, operand: u32) -> Self {
        f64::from_bits(self.to_bits().shuffle(mode, operand))
    }
}

/// The value of lane `lane ^ lane_mask` (`__shfl_xor_sync`).
#[inline(always)]
pub fn shuffle_xor<T: Shuffle>(value: T, lane_mask: u32) -> T {
    value.shuffle(ShuffleMode::Xor, lane_mask)
}
/// The value of lane `lane + delta`, or this lane's own past lane 31 (`__shfl_down_sync`).
#[inline(always)]
pub fn shuffle_down<T: Shuffle>(value: T, delta: u32) -> T {
    value.shuffle(ShuffleMode::Down, delta)
}
/// The value of lane `lane - delta`, or this lane's own below lane 0 (`__shfl_up_sync`).
#[inline(always)]
pub fn shuffle_up<T: Shuffle>(value: T, delta: u32) -> T {
    value.shuffle(ShuffleMode::Up, delta)
}
/// The value of lane `src_lane` (`__shfl_sync`).
#[inline(always)]
pub fn shuffle_idx<T: Shuffle>(value: T, src_lane: u32) -> T {
    value.shuffle(ShuffleMode::Idx, src_lane)
}

/// Bit `i` set when lane `i` passes `predicate` (`__ballot_sync`).
#[inline(always)]
pub fn ballot(predicate: bool) -> u32 {
    let result: u32;
    // SAFETY: warp vote with the full mask; all lanes call it together.
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {pred}, 0; vote.sync.ballot.b32 {r}, p, {mask}; }}",
            r = out(reg32) result,
            pred = in(reg32) predicate as u32,
            mask = in(reg32) FULL_MASK,
        );
    }
    result
}

/// Whether any lane passes `predicate` (`__any_sync`).
#[inline(always)]
pub fn any(predicate: bool) -> bool {
    ballot(predicate) != 0
}

/// Whether every lane passes `predicate` (`__all_sync`).
#[inline(always)]
pub fn all(predicate: bool) -> bool {
    ballot(predicate) == FULL_MASK
}

/// Waits for every lane of the warp (`__syncwarp`).
#[inline(always)]
pub fn sync_warp() {
    // SAFETY: warp barrier with the full mask; all lanes call it together.
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) FULL_MASK) }
}

/// Sum over the 32 lanes; every lane gets the total.
#[inline(always)]
pub fn reduce_sum<T: Shuffle + core::ops::Add<Output = T>>(value: T) -> T {
    reduce_sum_groups(value, 32)
}

/// Sum over groups of `width` consecutive lanes (`width` a power of two up to 32); every lane
/// of a group gets its group's total (a butterfly of `shfl.bfly`; every lane takes part).
#[inline(always)]
pub fn reduce_sum_groups<T: Shuffle + core::ops::Add<Output = T>>(mut value: T, width: u32) -> T {
    let mut offset = width / 2;
    while offset > 0 {
        value = value + shuffle_xor(value, offset);
        offset /= 2;
    }
    value
}

/// Bitwise or over groups of `width` consecutive lanes (a power of two up to 32); every lane
/// of a group gets its group's result.
#[inline(always)]
pub fn reduce_or_groups<T: Shuffle + core::ops::BitOr<Output = T>>(mut value: T, width: u32) -> T {
    let mut offset = width / 2;
    while offset > 0 {
        value = value | shuffle_xor(value, offset);
        offset /= 2;
    }
    value
}

/// Appends `value` to `queue` at `*tail` for every lane that passes `predicate`, one atomic
/// per warp (all lanes call this together).
///
/// # Safety
/// `tail` is a valid counter and `queue` has room for every value appended.
#[inline(always)]
pub unsafe fn append(predicate: bool, value: u32, tail: *mut u32, queue: *mut u32) {
    let lanes = ballot(predicate);
    if lanes == 0 {
        return;
    }
    let lane = lane_id();
    let first = if lane == 0 { unsafe { atomic::add(tail, lanes.count_ones()) } } else { 0 };
    let first = shuffle_idx(first, 0);
    if predicate {
        let before = (lanes & ((1u32 << lane) - 1)).count_ones();
        // SAFETY: the caller's room.
        unsafe { *queue.add((first + before) as usize) = value };
    }
}

/// Maximum over the 32 lanes; every lane gets it.
#[inline(always)]
pub fn reduce_max<T: Shuffle + PartialOrd>(mut value: T) -> T {
    let mut offset = 16;
    while offset > 0 {
        let other = shuffle_xor(value, offset);
        if other > value {
            value = other;
        }
        offset /= 2;
    }
    value
}

/// The largest `value` over the 32 lanes with its `index`; among equal values the smallest
/// index wins (the first maximum, as BLAS `i_amax` picks). Every lane gets the pair.
#[inline(always)]
pub fn reduce_max_index<T: Shuffle + PartialOrd>(mut value: T, mut index: u32) -> (T, u32) {
    let mut offset = 16;
    while offset > 0 {
        let (other, other_index) = (shuffle_xor(value, offset), shuffle_xor(index, offset));
        if other > value || (other == value && other_index < index) {
            value = other;
            index = other_index;
        }
        offset /= 2;
    }
    (value, index)
}

/// Sum over groups of `width` consecutive lanes (`width` a power of two up to 32): lane 0 of
/// each group ends with its group's total (the `shfl_down` tree of the reports' kernels).
#[inline(always)]
pub fn reduce_sum_down<T: Shuffle + core::ops::Add<Output = T>>(mut value: T, width: u32) -> T {
    let mut offset = width / 2;
    while offset > 0 {
        value = value + shuffle_down(value, offset);
        offset /= 2;
    }
    value
}

/// Inclusive prefix sums within groups of `width` consecutive lanes (`width` a power of two up
/// to 32): lane k of a group ends with the sum of the group's lanes 0..=k (`shfl_up` steps).
#[inline(always)]
pub fn inclusive_sum_groups(mut value: u32, width: u32) -> u32 {
    let lane = crate::device::thread::lane_id() % width;
    let mut offset = 1;
    while offset < width {
        let earlier = shuffle_up(value, offset);
        if lane >= offset {
            value += earlier;
        }
        offset *= 2;
    }
    value
}
