//! Values published to other blocks with a tag in every 8-byte word: 4 bytes of the value, 4
//! of the tag (NCCL's LL protocol). A reader spins until each word of a value carries the tag
//! it expects, so neither side needs a flag or a fence: the value reaches the reader in one
//! trip through L2. An aligned 8-byte access is single-copy atomic, so a word is never seen
//! half written. The writer picks tags that no word holds yet (a counter the host advances).

use crate::device::memory::{load_relaxed, load_relaxed_pair, store_relaxed, store_relaxed_pair};
use crate::device::thread::nanosleep;

/// Types sent as tagged words: u32 and f32 in one, f64 in two.
pub trait Tagged: Copy {
    /// Words per value.
    const WORDS: u32;

    /// Stores `self` with `tag` in its [`Tagged::WORDS`] words from `at`.
    ///
    /// # Safety
    /// `at` points to that many 8-byte-aligned global words.
    unsafe fn publish(self, at: *mut u64, tag: u32);

    /// Reads the words at `at` once: the value, if they all carry `tag`.
    ///
    /// # Safety
    /// As [`Tagged::publish`].
    unsafe fn read(at: *const u64, tag: u32) -> Option<Self>;

    /// Stores `first` and then `self`, each with `tag`, from `at` (a panel block's candidate:
    /// its row, then |pivot|): `first` and the value's first word in one 16-byte store, one
    /// request fewer (each word is still checked by its tag).
    ///
    /// # Safety
    /// `at` points to 1 + [`Tagged::WORDS`] global words, 16-byte aligned.
    unsafe fn publish_after(self, first: u32, at: *mut u64, tag: u32);

    /// Reads what [`Tagged::publish_after`] stores once (`first` and the value's first word in
    /// one 16-byte load): `first` and the value, if every word carries `tag`.
    ///
    /// # Safety
    /// As [`Tagged::publish_after`].
    unsafe fn read_after(at: *const u64, tag: u32) -> Option<(u32, Self)>;

    /// Waits until the words at `at` carry `tag`; returns the value they hold.
    ///
    /// # Safety
    /// As [`Tagged::publish`]; some thread publishes a value there with `tag` (else the spin
    /// never ends).
    #[inline(always)]
    unsafe fn wait(at: *const u64, tag: u32) -> Self {
        unsafe { wait_pausing(at, tag, 0) }
    }
}

/// As [`Tagged::wait`], pausing about `pause_ns` between polls when it is nonzero: a reader
/// that is not on the critical path leaves L2 to the ones that are.
///
/// # Safety
/// As [`Tagged::wait`].
#[inline(always)]
pub unsafe fn wait_pausing<T: Tagged>(at: *const u64, tag: u32, pause_ns: u32) -> T {
    loop {
        if let Some(value) = unsafe { T::read(at, tag) } {
            return value;
        }
        if pause_ns > 0 {
            nanosleep(pause_ns);
        }
    }
}

/// Waits until what [`Tagged::publish_after`] stores at `at` carries `tag`; returns `first`
/// and the value.
///
/// # Safety
/// As [`Tagged::publish_after`]; some thread publishes there with `tag`.
#[inline(always)]
pub unsafe fn wait_after<T: Tagged>(at: *const u64, tag: u32) -> (u32, T) {
    loop {
        if let Some(pair) = unsafe { T::read_after(at, tag) } {
            return pair;
        }
    }
}

/// Waits for two values at once (their loads in flight together, not one trip after the other).
///
/// # Safety
/// As [`Tagged::wait`], for both.
#[inline(always)]
pub unsafe fn wait_both<A: Tagged, B: Tagged>(a: *const u64, b: *const u64, tag: u32) -> (A, B) {
    loop {
        if let (Some(a), Some(b)) = unsafe { (A::read(a, tag), B::read(b, tag)) } {
            return (a, b);
        }
    }
}

#[inline(always)]
fn word(bits: u32, tag: u32) -> u64 {
    ((tag as u64) << 32) | bits as u64
}

#[inline(always)]
fn is_tagged(word: u64, tag: u32) -> bool {
    (word >> 32) as u32 == tag
}

/// An f64's low and high 4 bytes, one tagged word each.
#[inline(always)]
fn halves(value: f64) -> (u32, u32) {
    let bits = value.to_bits();
    (bits as u32, (bits >> 32) as u32)
}

#[inline(always)]
fn from_halves(low: u32, high: u32) -> f64 {
    f64::from_bits(((high as u64) << 32) | low as u64)
}

impl Tagged for u32 {
    const WORDS: u32 = 1;

    #[inline(always)]
    unsafe fn publish(self, at: *mut u64, tag: u32) {
        unsafe { store_relaxed(at, word(self, tag)) }
    }

    #[inline(always)]
    unsafe fn read(at: *const u64, tag: u32) -> Option<u32> {
        let w = unsafe { load_relaxed(at) };
        is_tagged(w, tag).then_some(w as u32)
    }

    #[inline(always)]
    unsafe fn publish_after(self, first: u32, at: *mut u64, tag: u32) {
        unsafe { store_relaxed_pair(at, (word(first, tag), word(self, tag))) }
    }

    #[inline(always)]
    unsafe fn read_after(at: *const u64, tag: u32) -> Option<(u32, u32)> {
        let (first, value) = unsafe { load_relaxed_pair(at) };
        (is_tagged(first, tag) && is_tagged(value, tag)).then_some((first as u32, value as u32))
    }
}

impl Tagged for f32 {
    const WORDS: u32 = 1;

    #[inline(always)]
    unsafe fn publish(self, at: *mut u64, tag: u32) {
        unsafe { self.to_bits().publish(at, tag) }
    }

    #[inline(always)]
    unsafe fn read(at: *const u64, tag: u32) -> Option<f32> {
        unsafe { u32::read(at, tag) }.map(f32::from_bits)
    }

    #[inline(always)]
    unsafe fn publish_after(self, first: u32, at: *mut u64, tag: u32) {
        unsafe { self.to_bits().publish_after(first, at, tag) }
    }

    #[inline(always)]
    unsafe fn read_after(at: *const u64, tag: u32) -> Option<(u32, f32)> {
        unsafe { u32::read_after(at, tag) }.map(|(first, bits)| (first, f32::from_bits(bits)))
    }
}

impl Tagged for f64 {
    const WORDS: u32 = 2;

    #[inline(always)]
    unsafe fn publish(self, at: *mut u64, tag: u32) {
        let (low, high) = halves(self);
        unsafe {
            store_relaxed(at, word(low, tag));
            store_relaxed(at.add(1), word(high, tag));
        }
    }

    #[inline(always)]
    unsafe fn read(at: *const u64, tag: u32) -> Option<f64> {
        // Both loads in flight at once; the halves may land in either order.
        let (low, high) = unsafe { (load_relaxed(at), load_relaxed(at.add(1))) };
        (is_tagged(low, tag) && is_tagged(high, tag)).then(|| from_halves(low as u32, high as u32))
    }

    #[inline(always)]
    unsafe fn publish_after(self, first: u32, at: *mut u64, tag: u32) {
        let (low, high) = halves(self);
        unsafe {
            store_relaxed_pair(at, (word(first, tag), word(low, tag)));
            store_relaxed(at.add(2), word(high, tag));
        }
    }

    #[inline(always)]
    unsafe fn read_after(at: *const u64, tag: u32) -> Option<(u32, f64)> {
        // Both loads in flight at once.
        let ((first, low), high) = unsafe { (load_relaxed_pair(at), load_relaxed(at.add(2))) };
        (is_tagged(first, tag) && is_tagged(low, tag) && is_tagged(high, tag))
            .then(|| (first as u32, from_halves(low as u32, high as u32)))
    }
}
