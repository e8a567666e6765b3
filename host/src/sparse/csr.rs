//! Compressed sparse rows: the reports' layout (IRP/JA/AS in the Tor Vergata report) and the
//! hub every other format converts through.

use std::ops::Range;

use rayon::prelude::*;
use serde::Serialize;

use super::{Bsr, Coo, Hll, HllLayout, fits_u32, split_at_bounds};
use crate::Scalar;
use crate::error::{Error, Result};

/// A `rows x cols` matrix in CSR form: row `i` holds the entries
/// `row_ptr[i]..row_ptr[i + 1]` of `col_indices` and `values`.
///
/// Invariants, checked by [`Csr::new`]: `row_ptr` has `rows + 1` monotone entries from 0 to
/// `nnz`; columns are in range and strictly increasing within each row (duplicates are summed
/// on the way in, see [`Coo::to_csr`]); rows, columns and `nnz` fit in `u32` (the GPU kernels
/// index with `u32`, so a CSR matrix holds at most `u32::MAX` entries).
#[derive(Clone, Debug, PartialEq)]
pub struct Csr<T> {
    rows: usize,
    cols: usize,
    row_ptr: Vec<u32>,
    col_indices: Vec<u32>,
    values: Vec<T>,
}

/// Nonzeros per row: what `inspect` prints.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct RowStats {
    pub min: usize,
    pub mean: f64,
    pub max: usize,
    pub empty_rows: usize,
}

impl<T> Csr<T> {
    /// Checked construction from the three arrays; the error names the first problem found.
    pub fn new(
        rows: usize,
        cols: usize,
        row_ptr: Vec<u32>,
        col_indices: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Self> {
        check(rows, cols, &row_ptr, &col_indices, values.len())?;
        Ok(Csr { rows, cols, row_ptr, col_indices, values })
    }

    /// For builders in this crate whose output is valid by construction (checked in debug
    /// builds, so the tests check it).
    pub(crate) fn from_parts_unchecked(
        rows: usize,
        cols: usize,
        row_ptr: Vec<u32>,
        col_indices: Vec<u32>,
        values: Vec<T>,
    ) -> Self {
        debug_assert_eq!(
            check(rows, cols, &row_ptr, &col_indices, values.len()).map_err(|e| e.to_string()),
            Ok(())
        );
        Csr { rows, cols, row_ptr, col_indices, values }
    }

    /// A `rows x cols` matrix with no entries.
    pub fn empty(rows: usize, cols: usize) -> Result<Self> {
        fits_u32(rows, "rows")?;
        fits_u32(cols, "columns")?;
        Ok(Csr { rows, cols, row_ptr: vec![0; rows + 1], col_indices: Vec::new(), values: Vec::new() })
    }

    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    /// Entries stored (explicit zeros included).
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    pub fn row_ptr(&self) -> &[u32] {
        &self.row_ptr
    }

    pub fn col_indices(&self) -> &[u32] {
        &self.col_indices
    }

    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// The values may change freely: the structure stays valid.
    pub fn values_mut(&mut self) -> &mut [T] {
        &mut self.values
    }

    /// `(rows, cols, row_ptr, col_indices, values)`.
    pub fn into_parts(self) -> (usize, usize, Vec<u32>, Vec<u32>, Vec<T>) {
        (self.rows, self.cols, self.row_ptr, self.col_indices, self.values)
    }

    /// Positions of row `row`'s entries in `col_indices` and `values`.
    pub fn row_range(&self, row: usize) -> Range<usize> {
        self.row_ptr[row] as usize..self.row_ptr[row + 1] as usize
    }

    /// Row `row`'s column indices and values.
    pub fn row(&self, row: usize) -> (&[u32], &[T]) {
        let range = self.row_range(row);
        (&self.col_indices[range.clone()], &self.values[range])
    }

    pub fn row_len(&self, row: usize) -> usize {
        (self.row_ptr[row + 1] - self.row_ptr[row]) as usize
    }

    /// Min, mean and max nonzeros per row, and how many rows are empty (all zero for 0 rows).
    pub fn row_stats(&self) -> RowStats {
        let lengths = self.row_ptr.windows(2).map(|w| (w[1] - w[0]) as usize);
        RowStats {
            min: lengths.clone().min().unwrap_or(0),
            mean: if self.rows == 0 { 0.0 } else { self.nnz() as f64 / self.rows as f64 },
            max: lengths.clone().max().unwrap_or(0),
            empty_rows: lengths.filter(|&len| len == 0).count(),
        }
    }

    /// Memory footprint of the three arrays, in bytes.
    pub fn bytes(&self) -> usize {
        (self.row_ptr.len() + self.col_indices.len()) * size_of::<u32>() + self.values.len() * size_of::<T>()
    }

    /// Row boundaries `[0, b1, ..., rows]` that cut the matrix into at most `parts` contiguous
    /// row ranges of about equal work: the Tor Vergata report's `matrix_partition`, found by
    /// binary search on the row pointers. Work is counted as nonzeros plus one per row, so long
    /// runs of empty rows are shared out too. Ranges are never empty (fewer ranges come back
    /// when rows are few or one row dominates); `[0]` for a matrix with no rows.
    pub fn nnz_balanced_partition(&self, parts: usize) -> Vec<usize> {
        let work_before = |row: usize| self.row_ptr[row] as u64 + row as u64;
        let total = work_before(self.rows);
        let parts = parts.max(1) as u64;
        let mut bounds = vec![0];
        for k in 1..parts {
            let target = total * k / parts;
            // First row whose preceding work reaches the target.
            let (mut lo, mut hi) = (0, self.rows);
            while lo < hi {
                let mid = lo + (hi - lo) / 2;
                if work_before(mid) < target { lo = mid + 1 } else { hi = mid }
            }
            if lo > *bounds.last().unwrap() && lo < self.rows {
                bounds.push(lo);
            }
        }
        if self.rows > 0 {
            bounds.push(self.rows);
        }
        bounds
    }
}

/// A matrix whose entries lie further from the diagonal than this fraction of the rows on
/// average ([`Csr::mean_diagonal_distance`]) has no row order to follow: random columns lie
/// about a third of the rows away, renumbered meshes 0.24-0.33, meshes and stencils in their
/// generated order 0.0004-0.02 (PERF.md). The SpMV renumbers such matrices where that pays;
/// the multicolor coloring follows no row order on them.
pub const UNORDERED_MEAN_DISTANCE: f64 = 0.1;

impl<T: Scalar> Csr<T> {
    /// The main diagonal (`min(rows, cols)` values, zero where no entry is stored).
    pub fn diagonal(&self) -> Vec<T> {
        (0..self.rows.min(self.cols))
            .map(|i| {
                let (cols, values) = self.row(i);
                cols.binary_search(&(i as u32)).map_or(T::ZERO, |k| values[k])
            })
            .collect()
    }

    /// The transpose, `cols x rows` (a counting sort by column: rows come out sorted).
    pub fn transpose(&self) -> Csr<T> {
        let mut row_ptr = vec![0u32; self.cols + 1];
        for &c in &self.col_indices {
            row_ptr[c as usize + 1] += 1;
        }
        for c in 0..self.cols {
            row_ptr[c + 1] += row_ptr[c];
        }
        let mut next = row_ptr.clone();
        let mut col_indices = vec![0u32; self.nnz()];
        let mut values = vec![T::ZERO; self.nnz()];
        for row in 0..self.rows {
            let (cols, vals) = self.row(row);
            for (&c, &v) in cols.iter().zip(vals) {
                let slot = &mut next[c as usize];
                col_indices[*slot as usize] = row as u32;
                values[*slot as usize] = v;
                *slot += 1;
            }
        }
        Csr::from_parts_unchecked(self.cols, self.rows, row_ptr, col_indices, values)
    }

    /// P A P^T, for a square matrix: row k is old row `new_to_old[k]`, and column c becomes
    /// column `old_to_new[c]` (the inverse permutation), each row sorted again.
    pub fn permute_symmetric(&self, new_to_old: &[u32], old_to_new: &[u32]) -> Csr<T> {
        let mut row_ptr = Vec::with_capacity(self.rows + 1);
        row_ptr.push(0u32);
        for &old in new_to_old {
            row_ptr.push(row_ptr.last().unwrap() + self.row_len(old as usize) as u32);
        }
        // Chunks of rows in parallel, each row's entries renumbered and sorted in one buffer.
        const ROWS: usize = 4096;
        let bounds: Vec<usize> =
            (0..=self.rows.div_ceil(ROWS)).map(|c| row_ptr[(c * ROWS).min(self.rows)] as usize).collect();
        let (mut col_indices, mut values) = (vec![0u32; self.nnz()], vec![T::ZERO; self.nnz()]);
        let chunks =
            split_at_bounds(&mut col_indices, &bounds).into_iter().zip(split_at_bounds(&mut values, &bounds));
        chunks.collect::<Vec<_>>().into_par_iter().zip(new_to_old.par_chunks(ROWS)).for_each(
            |((chunk_cols, chunk_values), old_rows)| {
                let mut row: Vec<(u32, T)> = Vec::new();
                let mut at = 0;
                for &old in old_rows {
                    let (cols, row_values) = self.row(old as usize);
                    row.clear();
                    row.extend(cols.iter().zip(row_values).map(|(&c, &v)| (old_to_new[c as usize], v)));
                    row.sort_unstable_by_key(|&(c, _)| c);
                    for &(c, v) in &row {
                        (chunk_cols[at], chunk_values[at]) = (c, v);
                        at += 1;
                    }
                }
            },
        );
        Csr::from_parts_unchecked(self.rows, self.cols, row_ptr, col_indices, values)
    }

    /// The rows in breadth-first order over the pattern (Cuthill-McKee without the degree
    /// sort): each component from its first row, the first from a row of fewest entries (but
    /// at least one). Neighbours then get near numbers, whatever order the matrix came in.
    /// The result is `new_to_old`, a permutation of the rows; columns past the last row are not
    /// followed (the order is meant for square matrices).
    pub fn breadth_first_order(&self) -> Vec<u32> {
        self.breadth_first_order_within(usize::MAX).unwrap_or_default()
    }

    /// [`Self::breadth_first_order`], or None as soon as a level (the rows first reached from
    /// the level before) holds more than `widest` rows: a row's neighbours lie in its own
    /// level and the two beside it, so wide levels keep them far apart, and a random graph's
    /// levels grow wide within a few steps.
    pub fn breadth_first_order_within(&self, widest: usize) -> Option<Vec<u32>> {
        breadth_first_order_within(self.rows, &self.row_ptr, &self.col_indices, widest)
    }

    /// How far the entries lie from the diagonal, on average, as a fraction of the rows
    /// (0 for a diagonal matrix, about 1/3 for random columns), with the rows and columns
    /// numbered by `old_to_new` where given (a square matrix's: one number for each row).
    pub fn mean_diagonal_distance(&self, old_to_new: Option<&[u32]>) -> f64 {
        if let Some(p) = old_to_new {
            assert!(
                self.rows == self.cols && p.len() == self.rows,
                "a numbering of {} rows for a {} x {} matrix",
                p.len(),
                self.rows,
                self.cols
            );
        }
        if self.nnz() == 0 {
            return 0.0;
        }
        let number = |i: usize| old_to_new.map_or(i, |p| p[i] as usize) as f64;
        let total: f64 = (0..self.rows)
            .into_par_iter()
            .map(|r| self.row(r).0.iter().map(|&c| (number(r) - number(c as usize)).abs()).sum::<f64>())
            .sum();
        total / self.nnz() as f64 / self.rows.max(1) as f64
    }

    /// The same matrix with values converted to `U` (rounded when narrowing).
    pub fn cast<U: Scalar>(&self) -> Csr<U> {
        let values = self.values.par_iter().map(|&v| U::from_f64(v.into())).collect();
        Csr::from_parts_unchecked(
            self.rows,
            self.cols,
            self.row_ptr.clone(),
            self.col_indices.clone(),
            values,
        )
    }

    pub fn to_f32(&self) -> Csr<f32> {
        self.cast()
    }

    pub fn to_f64(&self) -> Csr<f64> {
        self.cast()
    }

    /// The same matrix without its explicit zero entries (what BSR/HLL -> CSR returns).
    pub fn without_zeros(&self) -> Csr<T> {
        let mut row_ptr = Vec::with_capacity(self.rows + 1);
        row_ptr.push(0u32);
        let (mut col_indices, mut values) = (Vec::new(), Vec::new());
        for row in 0..self.rows {
            let (cols, vals) = self.row(row);
            for (&c, &v) in cols.iter().zip(vals) {
                if v != T::ZERO {
                    col_indices.push(c);
                    values.push(v);
                }
            }
            row_ptr.push(values.len() as u32);
        }
        Csr::from_parts_unchecked(self.rows, self.cols, row_ptr, col_indices, values)
    }

    /// Triplets in row-major order.
    pub fn to_coo(&self) -> Coo<T> {
        let row_indices =
            (0..self.rows).flat_map(|row| std::iter::repeat_n(row as u32, self.row_len(row))).collect();
        Coo {
            rows: self.rows,
            cols: self.cols,
            row_indices,
            col_indices: self.col_indices.clone(),
            values: self.values.clone(),
        }
    }

    /// BSR with square `block_size x block_size` blocks; see [`Bsr::from_csr`].
    pub fn to_bsr(&self, block_size: usize) -> Result<Bsr<T>> {
        Bsr::from_csr(self, block_size)
    }

    /// HLL with `hack_size` rows per hack; see [`Hll::from_csr`].
    pub fn to_hll(&self, hack_size: usize, layout: HllLayout) -> Result<Hll<T>> {
        Hll::from_csr(self, hack_size, layout)
    }
}

/// The invariants of [`Csr`]; the error names the first one broken.
fn check(rows: usize, cols: usize, row_ptr: &[u32], col_indices: &[u32], values_len: usize) -> Result<()> {
    let invalid = |message: String| Err(Error::InvalidInput(format!("CSR: {message}")));
    fits_u32(rows, "CSR: rows")?;
    fits_u32(cols, "CSR: columns")?;
    if row_ptr.len() != rows + 1 {
        return invalid(format!(
            "row pointers have {} entries, expected rows + 1 = {}",
            row_ptr.len(),
            rows + 1
        ));
    }
    if col_indices.len() != values_len {
        return invalid(format!(
            "lengths mismatched: {} column indices but {values_len} values",
            col_indices.len()
        ));
    }
    if row_ptr[0] != 0 {
        return invalid(format!("row pointers must start at 0, found {}", row_ptr[0]));
    }
    if let Some(i) = row_ptr.windows(2).position(|w| w[1] < w[0]) {
        return invalid(format!(
            "row pointers not monotone: row_ptr[{}] = {} < row_ptr[{i}] = {}",
            i + 1,
            row_ptr[i + 1],
            row_ptr[i]
        ));
    }
    if row_ptr[rows] as usize != values_len {
        return invalid(format!("row pointers end at {} but there are {values_len} entries", row_ptr[rows]));
    }
    let row = |r: usize| &col_indices[row_ptr[r] as usize..row_ptr[r + 1] as usize];
    let row_is_bad = |r: usize| {
        let row = row(r);
        row.last().is_some_and(|&c| c as usize >= cols) || row.windows(2).any(|w| w[1] <= w[0])
    };
    if let Some(r) = (0..rows).into_par_iter().find_first(|&r| row_is_bad(r)) {
        let row = row(r);
        if let Some(w) = row.windows(2).find(|w| w[1] <= w[0]) {
            return invalid(format!(
                "row {r}: columns not strictly increasing ({} then {}); duplicates must be summed first (build through Coo)",
                w[0], w[1]
            ));
        }
        return invalid(format!(
            "row {r}: column {} out of range (the matrix has {cols} columns)",
            row.last().unwrap()
        ));
    }
    Ok(())
}

/// [`Csr::breadth_first_order_within`] over a pattern of `n` rows given by its row pointers and
/// column indices.
pub(crate) fn breadth_first_order_within(
    n: usize,
    row_ptr: &[u32],
    col_idx: &[u32],
    widest: usize,
) -> Option<Vec<u32>> {
    let row = |r: usize| &col_idx[row_ptr[r] as usize..row_ptr[r + 1] as usize];
    let mut order = Vec::with_capacity(n);
    let mut seen = vec![false; n];
    let first = (0..n).filter(|&r| !row(r).is_empty()).min_by_key(|&r| row(r).len()).unwrap_or(0);
    for start in std::iter::once(first).chain(0..n) {
        if start >= n || seen[start] {
            continue;
        }
        seen[start] = true;
        order.push(start as u32);
        let (mut head, mut level_end) = (order.len() - 1, order.len());
        while head < order.len() {
            if head == level_end {
                // The level after the one just taken is complete.
                if order.len() - level_end > widest {
                    return None;
                }
                level_end = order.len();
            }
            let r = order[head] as usize;
            head += 1;
            for &c in row(r).iter().filter(|&&c| (c as usize) < n) {
                if !std::mem::replace(&mut seen[c as usize], true) {
                    order.push(c);
                }
            }
        }
    }
    Some(order)
}
