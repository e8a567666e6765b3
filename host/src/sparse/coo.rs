//! Coordinate format: the form readers and generators produce.

use rayon::prelude::*;

use super::{Csr, fits_u32, split_at_bounds};
use crate::Scalar;
use crate::error::{Error, Result};

/// A sparse matrix as (row, col, value) triplets, in any order, duplicates allowed until
/// converted (conversion to CSR sums them).
#[derive(Clone, Debug, PartialEq)]
pub struct Coo<T> {
    pub rows: usize,
    pub cols: usize,
    pub row_indices: Vec<u32>,
    pub col_indices: Vec<u32>,
    pub values: Vec<T>,
}

impl<T> Coo<T> {
    /// An empty `rows x cols` matrix.
    pub fn new(rows: usize, cols: usize) -> Coo<T> {
        Coo { rows, cols, row_indices: Vec::new(), col_indices: Vec::new(), values: Vec::new() }
    }

    /// Checked construction from the three arrays; see [`Coo::check`].
    pub fn from_triplets(
        rows: usize,
        cols: usize,
        row_indices: Vec<u32>,
        col_indices: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Coo<T>> {
        let coo = Coo { rows, cols, row_indices, col_indices, values };
        coo.check()?;
        Ok(coo)
    }

    /// Appends one entry. Not checked here (the fields are public anyway): [`Coo::to_csr`]
    /// checks everything.
    pub fn push(&mut self, row: u32, col: u32, value: T) {
        self.row_indices.push(row);
        self.col_indices.push(col);
        self.values.push(value);
    }

    /// Entries stored (duplicates counted).
    pub fn nnz(&self) -> usize {
        self.values.len()
    }

    /// Memory footprint of the three arrays, in bytes.
    pub fn bytes(&self) -> usize {
        (self.row_indices.len() + self.col_indices.len()) * size_of::<u32>()
            + self.values.len() * size_of::<T>()
    }

    /// Sizes fit in `u32`, the three arrays have one length, every index is in range; the error
    /// names the first problem found.
    pub fn check(&self) -> Result<()> {
        fits_u32(self.rows, "COO: rows")?;
        fits_u32(self.cols, "COO: columns")?;
        let (n_rows, n_cols, n_values) = (self.row_indices.len(), self.col_indices.len(), self.values.len());
        if n_rows != n_values || n_cols != n_values {
            return Err(Error::InvalidInput(format!(
                "COO: lengths mismatched: {n_rows} row indices, {n_cols} column indices, {n_values} values"
            )));
        }
        fits_u32(n_values, "COO: the number of entries")?;
        let out_of_range = |indices: &[u32], limit: usize, what: &str| match indices
            .par_iter()
            .position_first(|&i| i as usize >= limit)
        {
            Some(k) => Err(Error::InvalidInput(format!(
                "COO: entry {k}: {what} index {} out of range (the matrix has {limit} {what}s)",
                indices[k]
            ))),
            None => Ok(()),
        };
        out_of_range(&self.row_indices, self.rows, "row")?;
        out_of_range(&self.col_indices, self.cols, "column")
    }
}

impl<T: Scalar> Coo<T> {
    /// CSR with columns sorted within each row and duplicates summed (in input order, so the
    /// result does not depend on thread count). Explicit zeros are kept.
    pub fn to_csr(&self) -> Result<Csr<T>> {
        self.check()?;
        let mut row_ptr = vec![0u32; self.rows + 1];
        for &r in &self.row_indices {
            row_ptr[r as usize + 1] += 1;
        }
        for r in 0..self.rows {
            row_ptr[r + 1] += row_ptr[r];
        }
        // Bucket the entries by row (stable), then sort each row by column (stable too).
        let mut entries = vec![(0u32, T::ZERO); self.nnz()];
        let mut next = row_ptr.clone();
        for ((&r, &c), &v) in self.row_indices.iter().zip(&self.col_indices).zip(&self.values) {
            let slot = &mut next[r as usize];
            entries[*slot as usize] = (c, v);
            *slot += 1;
        }
        let bounds: Vec<usize> = row_ptr.iter().map(|&p| p as usize).collect();
        split_at_bounds(&mut entries, &bounds).into_par_iter().for_each(|row| row.sort_by_key(|&(c, _)| c));

        let mut col_indices = Vec::with_capacity(self.nnz());
        let mut values = Vec::with_capacity(self.nnz());
        let mut summed_row_ptr = Vec::with_capacity(self.rows + 1);
        summed_row_ptr.push(0u32);
        for row in bounds.windows(2) {
            let row_start = col_indices.len();
            for &(c, v) in &entries[row[0]..row[1]] {
                if col_indices.len() > row_start && col_indices.last() == Some(&c) {
                    let last = values.len() - 1;
                    values[last] = values[last] + v;
                } else {
                    col_indices.push(c);
                    values.push(v);
                }
            }
            summed_row_ptr.push(col_indices.len() as u32);
        }
        Ok(Csr::from_parts_unchecked(self.rows, self.cols, summed_row_ptr, col_indices, values))
    }
}
