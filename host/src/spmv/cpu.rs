//! CPU SpMV, y = A x: serial references for CSR, BSR and HLL (the oracles every other kernel is
//! checked against) and their rayon versions. Each format's arithmetic lives in one per-row (or
//! per-block-row, per-hack) routine that the serial and parallel versions share, so they agree
//! to the bit.
//!
//! Every routine sums a row's products in column order from zero, with separate multiply and
//! add (`mul_add` is a slow libm call on x86-64 unless built with FMA enabled). Stored zeros
//! (BSR/HLL padding) add exact zeros, so every format agrees with CSR exactly for finite x.

use rayon::prelude::*;

use crate::Scalar;
use crate::error::{Error, Result};
use crate::sparse::{Bsr, Csr, Hll, split_at_bounds};

/// Serial CSR: the reference (the Tor Vergata report's Algorithm 1).
pub fn csr_serial<T: Scalar>(a: &Csr<T>, x: &[T], y: &mut [T]) -> Result<()> {
    check_lengths("csr_serial", a.rows(), a.cols(), x, y)?;
    csr_rows(a, x, 0, y);
    Ok(())
}

/// Rayon CSR: contiguous row ranges of about equal work, one per thread, from
/// [`Csr::nnz_balanced_partition`] (the report's `matrix_partition`).
pub fn csr_rayon<T: Scalar>(a: &Csr<T>, x: &[T], y: &mut [T]) -> Result<()> {
    check_lengths("csr_rayon", a.rows(), a.cols(), x, y)?;
    let bounds = a.nnz_balanced_partition(rayon::current_num_threads());
    let pieces = split_at_bounds(y, &bounds);
    pieces
        .into_par_iter()
        .zip(&bounds[..])
        .for_each(|(y_part, &first_row)| csr_rows(a, x, first_row, y_part));
    Ok(())
}

/// Serial BSR.
pub fn bsr_serial<T: Scalar>(a: &Bsr<T>, x: &[T], y: &mut [T]) -> Result<()> {
    check_lengths("bsr_serial", a.rows(), a.cols(), x, y)?;
    y.chunks_mut(a.block_size()).enumerate().for_each(|(br, y_block)| bsr_block_row(a, x, br, y_block));
    Ok(())
}

/// Rayon BSR: block rows shared out by work stealing.
pub fn bsr_rayon<T: Scalar>(a: &Bsr<T>, x: &[T], y: &mut [T]) -> Result<()> {
    check_lengths("bsr_rayon", a.rows(), a.cols(), x, y)?;
    y.par_chunks_mut(a.block_size()).enumerate().for_each(|(br, y_block)| bsr_block_row(a, x, br, y_block));
    Ok(())
}

/// Serial HLL (the report's `matvec_serial_hll`), for either in-hack layout.
pub fn hll_serial<T: Scalar>(a: &Hll<T>, x: &[T], y: &mut [T]) -> Result<()> {
    check_lengths("hll_serial", a.rows(), a.cols(), x, y)?;
    y.chunks_mut(a.hack_size()).enumerate().for_each(|(h, y_hack)| hll_hack(a, x, h, y_hack));
    Ok(())
}

/// Rayon HLL with dynamic scheduling: rayon splits the hacks adaptively and idle threads steal
/// the rest, like the report's OpenMP `schedule(guided)`.
pub fn hll_rayon<T: Scalar>(a: &Hll<T>, x: &[T], y: &mut [T]) -> Result<()> {
    check_lengths("hll_rayon", a.rows(), a.cols(), x, y)?;
    y.par_chunks_mut(a.hack_size()).enumerate().for_each(|(h, y_hack)| hll_hack(a, x, h, y_hack));
    Ok(())
}

/// Rows `first_row..first_row + y.len()` of a CSR product.
fn csr_rows<T: Scalar>(a: &Csr<T>, x: &[T], first_row: usize, y: &mut [T]) {
    for (row, y_row) in (first_row..).zip(y) {
        let (cols, values) = a.row(row);
        *y_row = cols.iter().zip(values).fold(T::ZERO, |sum, (&c, &v)| sum + v * x[c as usize]);
    }
}

/// Block row `br` of a BSR product: blocks in column order, each row's partial sum carried
/// across blocks, so the sums run in CSR's order.
fn bsr_block_row<T: Scalar>(a: &Bsr<T>, x: &[T], br: usize, y_block: &mut [T]) {
    let b = a.block_size();
    y_block.fill(T::ZERO);
    for k in a.block_row_range(br) {
        let c0 = a.block_col_indices()[k] as usize * b;
        let x_block = &x[c0..(c0 + b).min(x.len())]; // the last block column may be partial
        for (y_row, block_row) in y_block.iter_mut().zip(a.block(k).chunks(b)) {
            *y_row = block_row.iter().zip(x_block).fold(*y_row, |sum, (&v, &xc)| sum + v * xc);
        }
    }
}

/// Hack `h` of an HLL product.
fn hll_hack<T: Scalar>(a: &Hll<T>, x: &[T], h: usize, y_hack: &mut [T]) {
    let (cols, values) = (a.col_indices(), a.values());
    for (row, y_row) in (h * a.hack_size()..).zip(y_hack) {
        *y_row = a.row_slots(row).fold(T::ZERO, |sum, k| sum + values[k] * x[cols[k] as usize]);
    }
}

/// x must have `cols` entries and y `rows`.
fn check_lengths<T>(kernel: &str, rows: usize, cols: usize, x: &[T], y: &[T]) -> Result<()> {
    if x.len() != cols || y.len() != rows {
        return Err(Error::InvalidInput(format!(
            "{kernel}: the matrix is {rows} x {cols}, so x needs {cols} entries and y {rows}; got x {} and y {}",
            x.len(),
            y.len()
        )));
    }
    Ok(())
}
