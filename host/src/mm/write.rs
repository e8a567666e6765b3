//! The writer: `coordinate real general` (or `pattern`) and `array real general`. Values are
//! written in the shortest decimal form that reads back to the same number (Rust's `{:e}` of
//! the f64 value), so write -> read returns exactly what was written. A path ending in `.gz`
//! is written gzip-compressed.

use std::fs::File;
use std::io::{self, BufWriter, Write};
use std::path::Path;

use flate2::Compression;
use flate2::write::GzEncoder;

use super::Field;
use super::error::{MmError, MmErrorKind};
use crate::Scalar;
use crate::dense::DenseMatrix;
use crate::sparse::Coo;

/// Writes `coo` as `coordinate real general` (`field` = `Real`) or `coordinate pattern general`
/// (`Pattern`: the values are left out). Entries are written as they are, duplicates included.
pub fn write_coo<T: Scalar>(path: impl AsRef<Path>, coo: &Coo<T>, field: Field) -> Result<(), MmError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    check_coo(coo, field).map_err(|message| MmError::new(&name, 0, MmErrorKind::Write(message)))?;
    write_file(path, |writer| write_coo_to(writer, coo, field))
        .map_err(|error| MmError::new(&name, 0, error.into()))
}

/// [`write_coo`] to any writer. A matrix that would not read back (an index out of range,
/// vectors of different lengths, a non-finite value) is an `InvalidInput` error.
pub fn write_coo_to<T: Scalar, W: Write>(writer: W, coo: &Coo<T>, field: Field) -> io::Result<()> {
    check_coo(coo, field).map_err(|message| io::Error::new(io::ErrorKind::InvalidInput, message))?;
    let mut writer = BufWriter::with_capacity(256 * 1024, writer);
    writeln!(writer, "%%MatrixMarket matrix coordinate {} general", field.name())?;
    writeln!(writer, "{} {} {}", coo.rows, coo.cols, coo.nnz())?;
    let indices = coo.row_indices.iter().zip(&coo.col_indices);
    if field == Field::Pattern {
        for (&row, &col) in indices {
            writeln!(writer, "{} {}", u64::from(row) + 1, u64::from(col) + 1)?;
        }
    } else {
        for ((&row, &col), &value) in indices.zip(&coo.values) {
            let value: f64 = value.into();
            writeln!(writer, "{} {} {value:e}", u64::from(row) + 1, u64::from(col) + 1)?;
        }
    }
    writer.flush()
}

/// Writes `dense` as `array real general`: every value, column by column.
pub fn write_dense<T: Scalar>(path: impl AsRef<Path>, dense: &DenseMatrix<T>) -> Result<(), MmError> {
    let path = path.as_ref();
    let name = path.display().to_string();
    check_dense(dense).map_err(|message| MmError::new(&name, 0, MmErrorKind::Write(message)))?;
    write_file(path, |writer| write_dense_to(writer, dense))
        .map_err(|error| MmError::new(&name, 0, error.into()))
}

/// [`write_dense`] to any writer; a non-finite value is an `InvalidInput` error.
pub fn write_dense_to<T: Scalar, W: Write>(writer: W, dense: &DenseMatrix<T>) -> io::Result<()> {
    check_dense(dense).map_err(|message| io::Error::new(io::ErrorKind::InvalidInput, message))?;
    let mut writer = BufWriter::with_capacity(256 * 1024, writer);
    writeln!(writer, "%%MatrixMarket matrix array real general")?;
    writeln!(writer, "{} {}", dense.rows, dense.cols)?;
    for col in 0..dense.cols {
        for row in 0..dense.rows {
            let value: f64 = dense.get(row, col).into();
            writeln!(writer, "{value:e}")?;
        }
    }
    writer.flush()
}

/// Creates the file (compressed when its name ends in `.gz`) and hands `write` the writer.
fn write_file(path: &Path, write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<()> {
    // The `write_*_to` functions buffer, so the file needs no buffer of its own.
    let mut file = File::create(path)?;
    if path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("gz")) {
        let mut encoder = GzEncoder::new(file, Compression::default());
        write(&mut encoder)?;
        encoder.finish().map(drop)
    } else {
        write(&mut file)
    }
}

/// Why `coo` cannot be written as a file that reads back, if it cannot.
fn check_coo<T: Scalar>(coo: &Coo<T>, field: Field) -> Result<(), String> {
    if !matches!(field, Field::Real | Field::Pattern) {
        return Err(format!("only real and pattern files are written, not {}", field.name()));
    }
    let nnz = coo.values.len();
    if coo.row_indices.len() != nnz || coo.col_indices.len() != nnz {
        return Err(format!(
            "COO with {} row indices, {} column indices and {nnz} values",
            coo.row_indices.len(),
            coo.col_indices.len()
        ));
    }
    if coo.rows > u32::MAX as usize || coo.cols > u32::MAX as usize {
        return Err(format!("{} x {} does not fit 32-bit indices", coo.rows, coo.cols));
    }
    let entries = coo.row_indices.iter().zip(&coo.col_indices).zip(&coo.values);
    for (entry, ((&row, &col), &value)) in entries.enumerate() {
        if row as usize >= coo.rows || col as usize >= coo.cols {
            return Err(format!(
                "entry {entry} at ({row}, {col}) is outside the {} x {} matrix",
                coo.rows, coo.cols
            ));
        }
        if field == Field::Real && !value.is_finite() {
            return Err(format!("entry {entry} at ({row}, {col}) is {value:?}, not finite"));
        }
    }
    Ok(())
}

fn check_dense<T: Scalar>(dense: &DenseMatrix<T>) -> Result<(), String> {
    if dense.rows.checked_mul(dense.cols) != Some(dense.data.len()) {
        return Err(format!("{} x {} matrix with {} values", dense.rows, dense.cols, dense.data.len()));
    }
    match dense.data.iter().position(|value| !value.is_finite()) {
        Some(at) => Err(format!(
            "value ({}, {}) is {:?}, not finite",
            at / dense.cols,
            at % dense.cols,
            dense.data[at]
        )),
        None => Ok(()),
    }
}
