//! Matrix Market I/O: the text format of the SuiteSparse collection.
//!
//! Reads `coordinate` files (real, integer or pattern values; general, symmetric or
//! skew-symmetric, the last two expanded to the full matrix) into [`crate::sparse::Coo`],
//! and `array` files (dense, column-major) into [`DenseMatrix`](crate::dense::DenseMatrix).
//! Complex and Hermitian files are rejected. Gzip-compressed files (`.mtx.gz`) are read
//! transparently, recognized by their first bytes. Banner keywords are case-insensitive; CRLF
//! line endings, blank lines and `%` comment lines are tolerated, and so are entries above the
//! diagonal of a symmetric file (the format asks for the lower triangle; they are mirrored
//! alike). Values are parsed as f64, then rounded to `T`.
//!
//! Every malformed input ends in an [`MmError`] naming the file, the line and what is wrong;
//! the reader never panics, and never allocates more than the input's size justifies (a header
//! claiming 10^15 entries in a 40-byte file is a "too few entries" error).
//!
//! The writer writes `coordinate real general` (or `pattern`) and `array real general`, with
//! values in the shortest form that reads back to the same number.

mod error;
mod lines;
mod read;
mod write;

pub use error::{MmError, MmErrorKind};
pub use read::{read_coo, read_dense, read_dense_from, read_from};
pub use write::{write_coo, write_coo_to, write_dense, write_dense_to};

use crate::sparse::Coo;

/// The banner and size line of a file, as read (before symmetric expansion).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Header {
    pub format: Format,
    pub field: Field,
    pub symmetry: Symmetry,
    pub rows: usize,
    pub cols: usize,
    /// Entries stored in the file: as stated in the size line (`coordinate`), or implied by
    /// the shape and symmetry (`array`).
    pub entries: usize,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Sparse: one `row col [value]` line per stored entry.
    Coordinate,
    /// Dense: every value, column by column.
    Array,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Real,
    Integer,
    /// No values: every stored entry is 1.
    Pattern,
    Complex,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Symmetry {
    General,
    /// Only the lower triangle is stored; a(j, i) = a(i, j).
    Symmetric,
    /// Only the strict lower triangle is stored; a(j, i) = -a(i, j).
    SkewSymmetric,
    Hermitian,
}

impl Format {
    /// The banner keyword.
    pub fn name(self) -> &'static str {
        match self {
            Format::Coordinate => "coordinate",
            Format::Array => "array",
        }
    }
}

impl Field {
    /// The banner keyword.
    pub fn name(self) -> &'static str {
        match self {
            Field::Real => "real",
            Field::Integer => "integer",
            Field::Pattern => "pattern",
            Field::Complex => "complex",
        }
    }
}

impl Symmetry {
    /// The banner keyword.
    pub fn name(self) -> &'static str {
        match self {
            Symmetry::General => "general",
            Symmetry::Symmetric => "symmetric",
            Symmetry::SkewSymmetric => "skew-symmetric",
            Symmetry::Hermitian => "hermitian",
        }
    }
}

/// A sparse matrix read from a file: the header as read, and the entries expanded to the full
/// matrix (symmetric and skew-symmetric files mirrored), in file order, duplicates kept.
#[derive(Clone, Debug, PartialEq)]
pub struct MatrixMarket<T> {
    pub header: Header,
    pub coo: Coo<T>,
}
