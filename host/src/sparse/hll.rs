//! Hacked ELLPACK (HLL), as in the Tor Vergata report: the rows are cut into hacks of
//! `hack_size` rows (32 there); each hack is an ELLPACK block as wide as its longest row, and
//! all hacks share one columns array and one values array, found through per-hack offsets.
//!
//! Inside a hack the slots are laid out row-major (the report's layout: a row's slots are
//! contiguous, good for a CPU thread per row) or column-major (slot `j` of consecutive rows is
//! contiguous, SELL-style: the threads of a warp, one per row, read coalesced).

use rayon::prelude::*;

use super::{Coo, Csr, fits_u32, split_at_bounds, try_filled};
use crate::Scalar;
use crate::error::{Error, Result};

/// The report's hack size: one warp's worth of rows.
pub const DEFAULT_HACK_SIZE: usize = 32;

/// How the slots of one hack are ordered.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub enum HllLayout {
    /// Row `r`'s slot `j` at `r * width + j` (the Tor Vergata report).
    #[default]
    RowMajor,
    /// Row `r`'s slot `j` at `j * rows_in_hack + r` (coalesced on a GPU).
    ColumnMajor,
}

/// A `rows x cols` matrix in HLL form. Hack `h` covers rows `h * hack_size..` (the last hack may
/// be shorter), is `hack_widths[h]` slots wide, and its slots are
/// `hack_offsets[h]..hack_offsets[h + 1]` of `col_indices` and `values`.
///
/// Rows shorter than their hack's width are padded with value zero at a valid column (the
/// row's last column, or 0 for an empty row), so kernels need no bounds test.
#[derive(Clone, Debug, PartialEq)]
pub struct Hll<T> {
    rows: usize,
    cols: usize,
    hack_size: usize,
    layout: HllLayout,
    hack_offsets: Vec<u32>,
    hack_widths: Vec<u32>,
    col_indices: Vec<u32>,
    values: Vec<T>,
}

impl<T> Hll<T> {
    pub fn rows(&self) -> usize {
        self.rows
    }

    pub fn cols(&self) -> usize {
        self.cols
    }

    pub fn hack_size(&self) -> usize {
        self.hack_size
    }

    pub fn layout(&self) -> HllLayout {
        self.layout
    }

    pub fn hacks(&self) -> usize {
        self.hack_widths.len()
    }

    /// `hacks + 1` offsets into `col_indices`/`values`.
    pub fn hack_offsets(&self) -> &[u32] {
        &self.hack_offsets
    }

    /// Per hack, the longest row's nonzero count (the report's `max_nzr`).
    pub fn hack_widths(&self) -> &[u32] {
        &self.hack_widths
    }

    pub fn col_indices(&self) -> &[u32] {
        &self.col_indices
    }

    pub fn values(&self) -> &[T] {
        &self.values
    }

    /// Rows in hack `h`: `hack_size`, except perhaps for the last hack.
    pub fn rows_in_hack(&self, h: usize) -> usize {
        self.hack_size.min(self.rows - h * self.hack_size)
    }

    /// Slots stored, padding included.
    pub fn stored(&self) -> usize {
        self.values.len()
    }

    /// The slots of row `row`, in order, as positions in `col_indices` and `values`.
    pub fn row_slots(&self, row: usize) -> std::iter::StepBy<std::ops::Range<usize>> {
        let h = row / self.hack_size;
        let width = self.hack_widths[h] as usize;
        let (start, stride) =
            start_and_stride(self.layout, self.rows_in_hack(h), width, row % self.hack_size);
        let start = self.hack_offsets[h] as usize + start;
        (start..start + width * stride).step_by(stride)
    }

    /// Memory footprint of the four arrays, in bytes.
    pub fn bytes(&self) -> usize {
        (self.hack_offsets.len() + self.hack_widths.len() + self.col_indices.len()) * size_of::<u32>()
            + self.values.len() * size_of::<T>()
    }
}

impl<T: Scalar> Hll<T> {
    /// Checked construction from per-hack widths and the slots (offsets follow from the widths);
    /// the error names the first problem found. Slots must number `sum(rows_in_hack * width)`
    /// (at most `u32::MAX`) and hold columns in range.
    pub fn new(
        rows: usize,
        cols: usize,
        hack_size: usize,
        layout: HllLayout,
        hack_widths: Vec<u32>,
        col_indices: Vec<u32>,
        values: Vec<T>,
    ) -> Result<Self> {
        let invalid = |message: String| Err(Error::InvalidInput(format!("HLL: {message}")));
        check_hack_size(hack_size)?;
        fits_u32(rows, "HLL: rows")?;
        fits_u32(cols, "HLL: columns")?;
        let hacks = rows.div_ceil(hack_size);
        if hack_widths.len() != hacks {
            return invalid(format!(
                "{} hack widths for {hacks} hacks of {hack_size} rows",
                hack_widths.len()
            ));
        }
        let hack_offsets = offsets(rows, hack_size, &hack_widths)?;
        let stored = *hack_offsets.last().unwrap() as usize;
        if col_indices.len() != stored || values.len() != stored {
            return invalid(format!(
                "lengths mismatched: {} column indices and {} values, but the hack widths make {stored} slots",
                col_indices.len(),
                values.len()
            ));
        }
        if let Some(k) = col_indices.par_iter().position_first(|&c| c as usize >= cols) {
            let h = hack_offsets.partition_point(|&o| o as usize <= k) - 1;
            return invalid(format!(
                "slot {k} (hack {h}): column {} out of range (the matrix has {cols} columns)",
                col_indices[k]
            ));
        }
        Ok(Hll { rows, cols, hack_size, layout, hack_offsets, hack_widths, col_indices, values })
    }

    /// CSR in hacks of `hack_size` rows with the given in-hack layout. Errors when the padded
    /// slots would exceed `u32::MAX`.
    pub fn from_csr(csr: &Csr<T>, hack_size: usize, layout: HllLayout) -> Result<Hll<T>> {
        check_hack_size(hack_size)?;
        let rows = csr.rows();
        let rows_of = |h: usize| h * hack_size..((h + 1) * hack_size).min(rows);
        let hack_widths: Vec<u32> = (0..rows.div_ceil(hack_size))
            .into_par_iter()
            .map(|h| rows_of(h).map(|r| csr.row_len(r) as u32).max().unwrap_or(0))
            .collect();
        let hack_offsets = offsets(rows, hack_size, &hack_widths)?;
        let stored = *hack_offsets.last().unwrap() as usize;

        let mut col_indices = try_filled(stored, 0u32, "HLL: column indices")?;
        let mut values = try_filled(stored, T::ZERO, "HLL: values")?;
        let bounds: Vec<usize> = hack_offsets.iter().map(|&o| o as usize).collect();
        let col_pieces = split_at_bounds(&mut col_indices, &bounds);
        let value_pieces = split_at_bounds(&mut values, &bounds);
        col_pieces.into_par_iter().zip(value_pieces).enumerate().for_each(|(h, (hack_cols, hack_values))| {
            let rows_here = rows_of(h);
            let width = hack_widths[h] as usize;
            for r in rows_here.clone() {
                let (cols, vals) = csr.row(r);
                let padding_col = cols.last().copied().unwrap_or(0);
                let (start, stride) = start_and_stride(layout, rows_here.len(), width, r - rows_here.start);
                for j in 0..width {
                    let slot = start + j * stride;
                    hack_cols[slot] = cols.get(j).copied().unwrap_or(padding_col);
                    hack_values[slot] = vals.get(j).copied().unwrap_or(T::ZERO);
                }
            }
        });
        Ok(Hll { rows, cols: csr.cols(), hack_size, layout, hack_offsets, hack_widths, col_indices, values })
    }

    /// Back to CSR, keeping the nonzero values (padding and explicit zeros are dropped;
    /// columns are sorted and repeated columns summed, for hand-built matrices).
    pub fn to_csr(&self) -> Csr<T> {
        let mut coo = Coo::new(self.rows, self.cols);
        for row in 0..self.rows {
            for k in self.row_slots(row).filter(|&k| self.values[k] != T::ZERO) {
                coo.push(row as u32, self.col_indices[k], self.values[k]);
            }
        }
        coo.to_csr().expect("a valid HLL matrix makes a valid COO matrix")
    }

    /// Stored values equal to zero: the padding plus any explicit zeros.
    pub fn stored_zeros(&self) -> usize {
        self.values.par_iter().filter(|&&v| v == T::ZERO).count()
    }

    /// Fraction of the stored slots that hold zeros (0 when nothing is stored).
    pub fn padding_ratio(&self) -> f64 {
        if self.stored() == 0 { 0.0 } else { self.stored_zeros() as f64 / self.stored() as f64 }
    }
}

/// Where row `r` of a hack starts, relative to the hack, and the step between its slots.
fn start_and_stride(layout: HllLayout, rows_in_hack: usize, width: usize, r: usize) -> (usize, usize) {
    match layout {
        HllLayout::RowMajor => (r * width, 1),
        HllLayout::ColumnMajor => (r, rows_in_hack),
    }
}

fn check_hack_size(hack_size: usize) -> Result<()> {
    if hack_size == 0 {
        return Err(Error::InvalidInput("HLL: hack size must be at least 1".into()));
    }
    fits_u32(hack_size, "HLL: hack size").map(drop)
}

/// The `hacks + 1` slot offsets that the widths imply, checked against `u32::MAX`.
fn offsets(rows: usize, hack_size: usize, hack_widths: &[u32]) -> Result<Vec<u32>> {
    let mut offsets = Vec::with_capacity(hack_widths.len() + 1);
    let mut total = 0u64;
    offsets.push(0u32);
    for (h, &width) in hack_widths.iter().enumerate() {
        let rows_in_hack = hack_size.min(rows - h * hack_size) as u64;
        total += rows_in_hack * width as u64;
        offsets.push(fits_u32(total as usize, "HLL: stored slots (padding included)")?);
    }
    Ok(offsets)
}
