//! Searches over sorted offsets that several kernels share.

/// The segment holding position `k`, of `count` (at least 1) segments whose starts
/// `start(0) = 0 <= start(1) <= ...` rise: the last `s < count` with `start(s) <= k`, so empty
/// segments are skipped. A binary search; `start` is called with indices below `count` only.
#[inline(always)]
pub fn segment_of(count: u32, k: u32, start: impl Fn(u32) -> u32) -> u32 {
    let (mut low, mut high) = (0, count);
    while high - low > 1 {
        let mid = low + (high - low) / 2;
        if start(mid) <= k {
            low = mid;
        } else {
            high = mid;
        }
    }
    low
}
