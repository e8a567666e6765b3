//! Sparse matrix formats (f32/f64 values, 32-bit indices) and their conversions:
//! COO -> CSR -> BSR / HLL and back to CSR. Each reports its memory footprint.
//!
//! Every index the GPU kernels read is a `u32`, so every format checks at construction that
//! its sizes fit: rows, columns, entries (CSR row pointers are `u32`, so a CSR matrix holds at
//! most `u32::MAX` entries) and stored slots (BSR, HLL).
//!
//! CSR is the hub: its rows have strictly increasing columns (no duplicates). BSR and HLL store
//! zeros for padding; converting them back to CSR keeps only the nonzero values, so a round
//! trip CSR -> BSR/HLL -> CSR is exact for matrices with no explicit zero entries (for others
//! it equals [`Csr::without_zeros`]).

pub mod bsr;
pub mod coo;
pub mod csr;
pub mod generate;
pub mod hll;

pub use bsr::Bsr;
pub use coo::Coo;
pub use csr::{Csr, RowStats, UNORDERED_MEAN_DISTANCE};
pub use generate::GenSpec;
pub use hll::{DEFAULT_HACK_SIZE, Hll, HllLayout};

use crate::error::{Error, Result};
use crate::memory::Footprint;

/// `value` as a `u32`, or an error naming `what` when it does not fit.
pub(crate) fn fits_u32(value: usize, what: &str) -> Result<u32> {
    u32::try_from(value)
        .map_err(|_| Error::InvalidInput(format!("{what} is {value}, over the u32 limit of {}", u32::MAX)))
}

/// Splits `slice` into the consecutive pieces `bounds[i]..bounds[i + 1]` (`bounds` starts at 0
/// and ends at `slice.len()`), so that rayon can fill or read them in parallel.
pub(crate) fn split_at_bounds<'a, X>(mut slice: &'a mut [X], bounds: &[usize]) -> Vec<&'a mut [X]> {
    let mut pieces = Vec::with_capacity(bounds.len().saturating_sub(1));
    for pair in bounds.windows(2) {
        let (piece, rest) = slice.split_at_mut(pair[1] - pair[0]);
        pieces.push(piece);
        slice = rest;
    }
    pieces
}

/// The inverse of the permutation `p` of 0..p.len(): `q[p[i]] = i`.
pub fn inverse_permutation(p: &[u32]) -> Vec<u32> {
    let mut q = vec![0u32; p.len()];
    for (i, &k) in p.iter().enumerate() {
        q[k as usize] = i as u32;
    }
    q
}

/// `len` copies of `value`, or an error naming `what` when the host has not the memory for them
/// (a padded format of a skewed matrix can need far more memory than the matrix itself).
pub(crate) fn try_filled<X: Clone>(len: usize, value: X, what: &str) -> Result<Vec<X>> {
    Footprint::new(format!("{what} ({len} slots)")).host::<X>(len as u128).check_host()?;
    let mut out = Vec::new();
    out.try_reserve_exact(len)
        .map_err(|_| Error::InvalidInput(format!("{what}: {len} slots exceed the address space")))?;
    out.resize(len, value);
    Ok(out)
}
