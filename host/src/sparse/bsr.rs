//! Block sparse rows (the Uruguay report's block format, 8x8 there): square dense blocks,
//! stored row-major inside, indexed like CSR by block row and block column.

use rayon::prelude::*;

use super::{Csr, fits_u32, split_at_bounds, try_filled};
use crate::Scalar;
use crate::error::{Error, Result};

/// A `rows x cols` matrix cut into `block_size x block_size` blocks. Block row `br` holds the
/// blocks `block_row_ptr[br]..block_row_ptr[br + 1]`; block `k` sits in block column
/// `block_col_indices[k]` and its values are `values[k * b * b..(k + 1) * b * b]`, row-major.
///
/// When `rows` or `cols` is not a multiple of the block size, the last block row/column is
/// partial: its slots outside the matrix are stored as zeros (checked by [`Bsr::new`]) and never
/// read against `x`. Zeros inside blocks are stored too: [`Bsr::stored_zeros`] counts them.
#[derive(Clone, Debug, PartialEq)]
pub struct Bsr<T> {
    rows: usize,
    cols: usize,
    block_size: usize,
    block_row_ptr: Vec<u32>,
    block_col_indices: Vec<u32>,
    values: Vec<T>,
}

impl<T> Bsr<T> {
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    pub fn block_size(&self) -> usize {
        self.block_size
    }

    /// Rows of blocks: `ceil(rows / block_size)`.
    pub fn block_rows(&self) -> usize {
        self.rows.div_ceil(self.block_size)
    }

    /// Columns of blocks: `ceil(cols / block_size)`.
    pub fn block_cols(&self) -> usize {
        self.cols.div_ceil(self.block_size)
    }

    /// Blocks stored.
    pub fn blocks(&self) -> usize {
        self.block_col_indices.len()
    }

    pub fn block_row_ptr(&self) -> &[u32] {
        &self.block_row_ptr
    }

    pub fn block_col_indices(&self) -> &[u32] {
        &self.block_col_indices
    }

    /// All blocks' values, block after block, each row-major.
    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// Block `k`'s `block_size * block_size` values, row-major.
    pub fn block(&self, k: usize) -> &[T] {
        let area = self.block_size * self.block_size;
        &self.values[k * area..(k + 1) * area]
    }

    /// Value slots stored: `blocks * block_size^2`.
    pub fn stored(&self) -> usize {
        self.values.len()
    }

    /// Memory footprint of the three arrays, in bytes.
    pub fn bytes(&self) -> usize {
        (self.block_row_ptr.len() + self.block_col_indices.len()) * size_of::<u32>()
            + self.values.len() * size_of::<T>()
    }
}

impl<T: Scalar> Bsr<T> {
    /// Checked construction from the three arrays; the error names the first problem found.
    /// Besides CSR's rules (on blocks), the values must fit `blocks * block_size^2` slots
    /// (at most `u32::MAX`) and be zero outside the matrix in partial edge blocks.
    pub fn new(
        rows: usize,
        cols: usize,
        block_size: usize,
        block_row_ptr: Vec<u32>,
        block_col_indices: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Self> {
        let invalid = |message: String| Err(Error::InvalidInput(format!("BSR: {message}")));
        if block_size == 0 {
            return invalid("block size must be at least 1".into());
        }
        fits_u32(rows, "BSR: rows")?;
        fits_u32(cols, "BSR: columns")?;
        let (block_rows, block_cols) = (rows.div_ceil(block_size), cols.div_ceil(block_size));
        if block_row_ptr.len() != block_rows + 1 {
            return invalid(format!(
                "block row pointers have {} entries, expected block rows + 1 = {}",
                block_row_ptr.len(),
                block_rows + 1
            ));
        }
        if block_row_ptr[0] != 0 {
            return invalid(format!("block row pointers must start at 0, found {}", block_row_ptr[0]));
        }
        if let Some(i) = block_row_ptr.windows(2).position(|w| w[1] < w[0]) {
            return invalid(format!("block row pointers not monotone at block row {i}"));
        }
        let blocks = block_col_indices.len();
        if block_row_ptr[block_rows] as usize != blocks {
            return invalid(format!(
                "block row pointers end at {} but there are {blocks} block column indices",
                block_row_ptr[block_rows]
            ));
        }
        let stored = stored_slots(blocks, block_size)?;
        if values.len() != stored {
            return invalid(format!(
                "lengths mismatched: {} values for {blocks} blocks of {block_size}x{block_size} ({stored} expected)",
                values.len()
            ));
        }
        let bsr = Bsr { rows, cols, block_size, block_row_ptr, block_col_indices, values };
        for br in 0..block_rows {
            let block_cols_here = bsr.block_row_range(br).map(|k| bsr.block_col_indices[k]);
            let mut previous = None;
            for bc in block_cols_here {
                if bc as usize >= block_cols {
                    return invalid(format!(
                        "block row {br}: block column {bc} out of range (the matrix has {block_cols} block columns)"
                    ));
                }
                if previous.is_some_and(|p| bc <= p) {
                    return invalid(format!("block row {br}: block columns not strictly increasing"));
                }
                previous = Some(bc);
            }
        }
        if let Some((row, col)) = bsr.nonzero_outside_matrix() {
            return invalid(format!(
                "nonzero value at ({row}, {col}), outside the {rows} x {cols} matrix (edge blocks must be zero-padded)"
            ));
        }
        Ok(bsr)
    }

    /// CSR cut into `block_size x block_size` blocks; every block holding an entry is stored
    /// whole. Errors when the stored slots would exceed `u32::MAX`.
    pub fn from_csr(csr: &Csr<T>, block_size: usize) -> Result<Bsr<T>> {
        if block_size == 0 {
            return Err(Error::InvalidInput("BSR: block size must be at least 1".into()));
        }
        fits_u32(block_size, "BSR: block size")?;
        let b = block_size;
        let block_rows = csr.rows().div_ceil(b);
        let rows_of = |br: usize| br * b..((br + 1) * b).min(csr.rows());
        // Pass 1: which block columns each block row touches (sorted), so the total is checked
        // before the values are allocated.
        let block_cols_per_row: Vec<Vec<u32>> = (0..block_rows)
            .into_par_iter()
            .map(|br| {
                let mut block_cols: Vec<u32> =
                    rows_of(br).flat_map(|r| csr.row(r).0.iter().map(|&c| c / b as u32)).collect();
                block_cols.sort_unstable();
                block_cols.dedup();
                block_cols
            })
            .collect();
        let mut block_row_ptr = Vec::with_capacity(block_rows + 1);
        block_row_ptr.push(0usize);
        for block_cols in &block_cols_per_row {
            block_row_ptr.push(block_row_ptr.last().unwrap() + block_cols.len());
        }
        let blocks = *block_row_ptr.last().unwrap();
        fits_u32(blocks, "BSR: blocks")?;
        let stored = stored_slots(blocks, b)?;

        // Pass 2: scatter each block row's entries into its blocks, in parallel.
        let mut values = try_filled(stored, T::ZERO, "BSR: values")?;
        let value_bounds: Vec<usize> = block_row_ptr.iter().map(|&k| k * b * b).collect();
        split_at_bounds(&mut values, &value_bounds).into_par_iter().enumerate().for_each(
            |(br, block_values)| {
                let block_cols = &block_cols_per_row[br];
                for r in rows_of(br) {
                    let (cols, vals) = csr.row(r);
                    for (&c, &v) in cols.iter().zip(vals) {
                        let k = block_cols.binary_search(&(c / b as u32)).unwrap();
                        block_values[k * b * b + (r % b) * b + c as usize % b] = v;
                    }
                }
            },
        );
        Ok(Bsr {
            rows: csr.rows(),
            cols: csr.cols(),
            block_size: b,
            block_row_ptr: block_row_ptr.iter().map(|&k| k as u32).collect(),
            block_col_indices: block_cols_per_row.concat(),
            values,
        })
    }

    /// Back to CSR, keeping the nonzero values (padding and explicit zeros are dropped).
    pub fn to_csr(&self) -> Csr<T> {
        let b = self.block_size;
        let mut row_ptr = Vec::with_capacity(self.rows + 1);
        row_ptr.push(0u32);
        let (mut col_indices, mut values) = (Vec::new(), Vec::new());
        for row in 0..self.rows {
            let br = row / b;
            for k in self.block_row_range(br) {
                let c0 = self.block_col_indices[k] as usize * b;
                let block_row = &self.block(k)[(row % b) * b..][..b];
                for (c, &v) in block_row.iter().enumerate().take(self.cols.saturating_sub(c0)) {
                    if v != T::ZERO {
                        col_indices.push((c0 + c) as u32);
                        values.push(v);
                    }
                }
            }
            row_ptr.push(values.len() as u32);
        }
        Csr::from_parts_unchecked(self.rows, self.cols, row_ptr, col_indices, values)
    }

    /// Stored values equal to zero: padding of the blocks plus any explicit zeros.
    pub fn stored_zeros(&self) -> usize {
        self.values.par_iter().filter(|&&v| v == T::ZERO).count()
    }

    /// Fraction of the stored slots that hold zeros (0 when nothing is stored).
    pub fn padding_ratio(&self) -> f64 {
        if self.stored() == 0 { 0.0 } else { self.stored_zeros() as f64 / self.stored() as f64 }
    }

    /// Block indices of block row `br`.
    pub fn block_row_range(&self, br: usize) -> std::ops::Range<usize> {
        self.block_row_ptr[br] as usize..self.block_row_ptr[br + 1] as usize
    }

    /// The first (row, col) of a nonzero stored outside the matrix, in partial edge blocks.
    fn nonzero_outside_matrix(&self) -> Option<(usize, usize)> {
        let b = self.block_size;
        for br in 0..self.block_rows() {
            for k in self.block_row_range(br) {
                let (r0, c0) = (br * b, self.block_col_indices[k] as usize * b);
                if r0 + b <= self.rows && c0 + b <= self.cols {
                    continue;
                }
                for (slot, &v) in self.block(k).iter().enumerate() {
                    let (row, col) = (r0 + slot / b, c0 + slot % b);
                    if (row >= self.rows || col >= self.cols) && v != T::ZERO {
                        return Some((row, col));
                    }
                }
            }
        }
        None
    }
}

/// `blocks * block_size^2`, checked against `u32::MAX` (the GPU kernels index values with u32).
fn stored_slots(blocks: usize, block_size: usize) -> Result<usize> {
    let stored =
        block_size.checked_mul(block_size).and_then(|area| area.checked_mul(blocks)).ok_or_else(|| {
            Error::InvalidInput(format!("BSR: {blocks} blocks of {block_size}x{block_size} overflow"))
        })?;
    fits_u32(stored, "BSR: stored values")?;
    Ok(stored)
}
