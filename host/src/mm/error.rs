//! The reader's and writer's error: which file, which line, what is wrong.

use std::fmt;

/// An error while reading or writing a Matrix Market file. Displays as
/// `matrices/foo.mtx:12: entry row index 0 is out of range 1..=5`.
#[derive(Debug)]
pub struct MmError {
    /// The path as given, or the name passed to `read_from`.
    pub file: String,
    /// 1-based line number; 0 when the error is not about a line (the file cannot be opened).
    pub line: usize,
    pub kind: MmErrorKind,
}

/// What is wrong. Tests match on the variant; the message says it to a person.
#[derive(Debug, thiserror::Error)]
pub enum MmErrorKind {
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("the file is empty (expected a `%%MatrixMarket matrix ...` banner)")]
    Empty,
    #[error("missing banner: the first line must start with `%%MatrixMarket`, found `{0}`")]
    MissingBanner(String),
    #[error(
        "bad banner: {0} (expected `%%MatrixMarket matrix coordinate|array real|integer|pattern general|symmetric|skew-symmetric`)"
    )]
    BadBanner(String),
    #[error("{0} matrices are not supported (only real, integer and pattern values)")]
    Unsupported(&'static str),
    #[error("binary data: byte 0x{0:02x} is not Matrix Market text")]
    Binary(u8),
    #[error("invalid UTF-8: Matrix Market files are text")]
    InvalidUtf8,
    #[error("line is longer than {0} bytes (Matrix Market lines have at most 1024 characters)")]
    LineTooLong(usize),
    #[error("missing size line: the file ends after the banner and comments")]
    MissingSizeLine,
    #[error("bad size line `{line}`: {reason}")]
    BadSizeLine { line: String, reason: String },
    #[error("negative {what} `{text}` in the size line")]
    NegativeSize { what: &'static str, text: String },
    #[error("{what} `{text}` is too large ({reason})")]
    SizeTooLarge { what: &'static str, text: String, reason: &'static str },
    #[error("{0}")]
    NotEnoughMemory(String),
    #[error("a {symmetry} matrix must be square, this one is {rows} x {cols}")]
    NotSquare { symmetry: &'static str, rows: usize, cols: usize },
    #[error("entry {what} `{text}` is not a positive integer")]
    BadIndex { what: &'static str, text: String },
    #[error("entry {what} {text} is out of range 1..={max}")]
    IndexOutOfRange { what: &'static str, text: String, max: usize },
    #[error("entry is missing its {0}")]
    MissingField(&'static str),
    #[error("unexpected text `{0}` after the entry")]
    TrailingText(String),
    #[error("value `{text}` is not {expected}")]
    BadValue { text: String, expected: &'static str },
    #[error("value `{0}` is not finite")]
    NonFiniteValue(String),
    #[error("value `{text}` overflows {precision}")]
    ValueOverflows { text: String, precision: &'static str },
    #[error(
        "skew-symmetric matrix with a diagonal entry ({0}, {0}): its diagonal must be zero and is not stored"
    )]
    SkewDiagonal(u64),
    #[error("too few entries: the file ends after {found} of the {stated} the size line calls for")]
    TooFewEntries { found: usize, stated: usize },
    #[error("too many entries: more than the {stated} the size line calls for")]
    TooManyEntries { stated: usize },
    #[error("this is {found} file: read it with `mm::{reader}`")]
    WrongFormat { found: &'static str, reader: &'static str },
    #[error("cannot write: {0}")]
    Write(String),
}

impl MmError {
    pub fn new(file: impl Into<String>, line: usize, kind: MmErrorKind) -> MmError {
        MmError { file: file.into(), line, kind }
    }
}

impl fmt::Display for MmError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.kind)
        } else {
            write!(f, "{}:{}: {}", self.file, self.line, self.kind)
        }
    }
}

// The I/O cause is already in the message, so `source` stays empty (no repeated text in chains).
impl std::error::Error for MmError {}
