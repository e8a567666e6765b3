//! The reader: the banner, comments, the size line, then one entry per line, streamed through
//! a large buffer and parsed byte by byte.

use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};
use std::path::Path;

use flate2::bufread::MultiGzDecoder;

use super::error::{MmError, MmErrorKind};
use super::lines::Lines;
use super::{Field, Format, Header, MatrixMarket, Symmetry};
use crate::Scalar;
use crate::dense::DenseMatrix;
use crate::memory::Footprint;
use crate::sparse::Coo;

/// The shortest coordinate entry line is `1 1\n`: a text of n bytes holds at most n / 4
/// entries, which bounds what is reserved before the entries are read.
const MIN_ENTRY_BYTES: u64 = 4;
/// The shortest array value line, `1\n`.
const MIN_VALUE_BYTES: u64 = 2;
/// Matrix Market text compresses about this much; only a first guess for the reservation.
const GZIP_RATIO_GUESS: u64 = 4;
/// Entries reserved when the input's size is unknown (`read_from`); the vectors grow past it.
const UNKNOWN_SIZE_RESERVE: usize = 4096;
const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];

/// Reads a `coordinate` file (plain or gzip-compressed) into COO, symmetric and
/// skew-symmetric files expanded to the full matrix.
pub fn read_coo<T: Scalar>(path: impl AsRef<Path>) -> Result<MatrixMarket<T>, MmError> {
    let file = OpenFile::open(path.as_ref())?;
    read_sparse(file.input, &file.name, file.text_bytes)
}

/// [`read_coo`] from any reader (plain or gzip-compressed text); `name` stands for the file in
/// error messages.
pub fn read_from<T: Scalar, R: BufRead>(reader: R, name: &str) -> Result<MatrixMarket<T>, MmError> {
    let input = Input::new(reader).map_err(|error| MmError::new(name, 1, MmErrorKind::Io(error)))?;
    read_sparse(input, name, None)
}

/// Reads an `array` file (dense, column-major; general, symmetric or skew-symmetric) into a
/// row-major dense matrix.
pub fn read_dense<T: Scalar>(path: impl AsRef<Path>) -> Result<DenseMatrix<T>, MmError> {
    let file = OpenFile::open(path.as_ref())?;
    read_array(file.input, &file.name, file.text_bytes)
}

/// [`read_dense`] from any reader; `name` stands for the file in error messages.
pub fn read_dense_from<T: Scalar, R: BufRead>(reader: R, name: &str) -> Result<DenseMatrix<T>, MmError> {
    let input = Input::new(reader).map_err(|error| MmError::new(name, 1, MmErrorKind::Io(error)))?;
    read_array(input, name, None)
}

/// Plain text, or text decompressed on the fly when the stream starts with the gzip magic.
enum Input<R> {
    Text(R),
    Gzip(MultiGzDecoder<R>),
}

impl<R: BufRead> Input<R> {
    fn new(mut reader: R) -> io::Result<Input<R>> {
        if reader.fill_buf()?.starts_with(&GZIP_MAGIC) {
            Ok(Input::Gzip(MultiGzDecoder::new(reader)))
        } else {
            Ok(Input::Text(reader))
        }
    }
}

impl<R: BufRead> Read for Input<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        match self {
            Input::Text(reader) => reader.read(buffer),
            Input::Gzip(decoder) => decoder.read(buffer).map_err(|error| {
                io::Error::new(error.kind(), format!("truncated or corrupt gzip data: {error}"))
            }),
        }
    }
}

/// A file opened for reading.
struct OpenFile {
    input: Input<BufReader<File>>,
    /// The path as given, for messages.
    name: String,
    /// About how many bytes of text it holds, to bound reservations.
    text_bytes: Option<u64>,
}

impl OpenFile {
    fn open(path: &Path) -> Result<OpenFile, MmError> {
        let name = path.display().to_string();
        let file = File::open(path).map_err(|error| MmError::new(&name, 0, MmErrorKind::Io(error)))?;
        let file_bytes = file.metadata().map(|metadata| metadata.len()).ok();
        let input = Input::new(BufReader::with_capacity(64 * 1024, file))
            .map_err(|error| MmError::new(&name, 1, MmErrorKind::Io(error)))?;
        let text_bytes = match input {
            Input::Text(_) => file_bytes,
            Input::Gzip(_) => file_bytes.map(|bytes| bytes.saturating_mul(GZIP_RATIO_GUESS)),
        };
        Ok(OpenFile { input, name, text_bytes })
    }
}

fn read_sparse<T: Scalar, R: Read>(
    input: R,
    name: &str,
    text_bytes: Option<u64>,
) -> Result<MatrixMarket<T>, MmError> {
    let mut lines = Lines::new(input);
    let header = read_header(&mut lines).map_err(|kind| at_line(name, &lines, kind))?;
    if header.format == Format::Array {
        let kind = MmErrorKind::WrongFormat { found: "an array (dense)", reader: "read_dense" };
        return Err(MmError::new(name, 1, kind));
    }
    let coo = read_entries(&mut lines, &header, text_bytes).map_err(|kind| at_line(name, &lines, kind))?;
    Ok(MatrixMarket { header, coo })
}

fn read_array<T: Scalar, R: Read>(
    input: R,
    name: &str,
    text_bytes: Option<u64>,
) -> Result<DenseMatrix<T>, MmError> {
    let mut lines = Lines::new(input);
    let header = read_header(&mut lines).map_err(|kind| at_line(name, &lines, kind))?;
    if header.format == Format::Coordinate {
        let kind = MmErrorKind::WrongFormat { found: "a coordinate (sparse)", reader: "read_coo" };
        return Err(MmError::new(name, 1, kind));
    }
    let values = read_values(&mut lines, &header, text_bytes).map_err(|kind| at_line(name, &lines, kind))?;
    Ok(to_dense(&header, &values))
}

/// An error about the line `lines` stopped at (line 1 when the input is empty).
fn at_line<R: Read>(name: &str, lines: &Lines<R>, kind: MmErrorKind) -> MmError {
    MmError::new(name, lines.line_number().max(1), kind)
}

/// The banner, the comments after it and the size line.
fn read_header<R: Read>(lines: &mut Lines<R>) -> Result<Header, MmErrorKind> {
    let banner = lines.next_line()?.ok_or(MmErrorKind::Empty)?;
    let (format, field, symmetry) = parse_banner(banner)?;
    while let Some(line) = lines.next_line()? {
        if !is_blank_or_comment(line)? {
            return parse_size_line(line, format, field, symmetry);
        }
    }
    Err(MmErrorKind::MissingSizeLine)
}

fn parse_banner(line: &[u8]) -> Result<(Format, Field, Symmetry), MmErrorKind> {
    let text = as_text(line)?;
    let mut words = text.split_ascii_whitespace();
    if !words.next().is_some_and(|word| word.eq_ignore_ascii_case("%%MatrixMarket")) {
        return Err(MmErrorKind::MissingBanner(shorten(text)));
    }
    match words.next() {
        Some(word) if word.eq_ignore_ascii_case("matrix") => {}
        Some(word) => {
            return Err(MmErrorKind::BadBanner(format!("object `{word}` is not supported, only `matrix`")));
        }
        None => return Err(MmErrorKind::BadBanner("missing the object (`matrix`)".into())),
    }
    let format = keyword(words.next(), "format", &[Format::Coordinate, Format::Array], Format::name)?;
    let field = keyword(
        words.next(),
        "field",
        &[Field::Real, Field::Integer, Field::Pattern, Field::Complex],
        Field::name,
    )?;
    let symmetry = keyword(
        words.next(),
        "symmetry",
        &[Symmetry::General, Symmetry::Symmetric, Symmetry::SkewSymmetric, Symmetry::Hermitian],
        Symmetry::name,
    )?;
    if let Some(word) = words.next() {
        return Err(MmErrorKind::BadBanner(format!("unexpected `{word}` after the symmetry")));
    }
    if field == Field::Complex {
        return Err(MmErrorKind::Unsupported("complex"));
    }
    if symmetry == Symmetry::Hermitian {
        return Err(MmErrorKind::Unsupported("Hermitian"));
    }
    if field == Field::Pattern && format == Format::Array {
        return Err(MmErrorKind::BadBanner("`pattern` needs the `coordinate` format".into()));
    }
    if field == Field::Pattern && symmetry == Symmetry::SkewSymmetric {
        return Err(MmErrorKind::BadBanner(
            "a `pattern` matrix has no values to negate: it cannot be skew-symmetric".into(),
        ));
    }
    Ok((format, field, symmetry))
}

/// The choice among `all` whose banner keyword is `word`, ignoring case.
fn keyword<K: Copy>(
    word: Option<&str>,
    what: &str,
    all: &[K],
    name: fn(K) -> &'static str,
) -> Result<K, MmErrorKind> {
    let Some(word) = word else {
        return Err(MmErrorKind::BadBanner(format!("missing the {what}")));
    };
    all.iter()
        .copied()
        .find(|&choice| word.eq_ignore_ascii_case(name(choice)))
        .ok_or_else(|| MmErrorKind::BadBanner(format!("unknown {what} `{word}`")))
}

/// `rows cols entries` (coordinate) or `rows cols` (array).
fn parse_size_line(
    line: &[u8],
    format: Format,
    field: Field,
    symmetry: Symmetry,
) -> Result<Header, MmErrorKind> {
    let text = as_text(line)?;
    let words: Vec<&str> = text.split_ascii_whitespace().collect();
    let (expected, needs) = match format {
        Format::Coordinate => (3, "a coordinate file needs 3 numbers (rows cols entries)"),
        Format::Array => (2, "an array file needs 2 numbers (rows cols)"),
    };
    if words.len() != expected {
        let reason = format!("{needs}, this line has {}", words.len());
        return Err(MmErrorKind::BadSizeLine { line: shorten(text), reason });
    }
    let rows = parse_size(text, "number of rows", words[0])?;
    let cols = parse_size(text, "number of columns", words[1])?;
    for (what, size, word) in [("number of rows", rows, words[0]), ("number of columns", cols, words[1])] {
        if size > u32::MAX as usize {
            let reason = "indices are 32-bit: at most 4294967295";
            return Err(MmErrorKind::SizeTooLarge { what, text: word.into(), reason });
        }
    }
    if symmetry != Symmetry::General && rows != cols {
        return Err(MmErrorKind::NotSquare { symmetry: symmetry.name(), rows, cols });
    }
    let entries = match format {
        Format::Coordinate => parse_size(text, "number of entries", words[2])?,
        Format::Array => array_values(rows, cols, symmetry).ok_or_else(|| MmErrorKind::SizeTooLarge {
            what: "array",
            text: format!("{rows} x {cols}"),
            reason: "more values than memory can address",
        })?,
    };
    Ok(Header { format, field, symmetry, rows, cols, entries })
}

/// Values an array file stores: all of them, or the lower triangle (with the diagonal unless
/// skew-symmetric, whose diagonal is zero).
fn array_values(rows: usize, cols: usize, symmetry: Symmetry) -> Option<usize> {
    match symmetry {
        Symmetry::General | Symmetry::Hermitian => rows.checked_mul(cols),
        Symmetry::Symmetric => rows.checked_mul(rows.checked_add(1)?).map(|n| n / 2),
        Symmetry::SkewSymmetric => rows.checked_mul(rows.saturating_sub(1)).map(|n| n / 2),
    }
}

fn parse_size(line: &str, what: &'static str, word: &str) -> Result<usize, MmErrorKind> {
    let all_digits = |text: &str| !text.is_empty() && text.bytes().all(|byte| byte.is_ascii_digit());
    if word.strip_prefix('-').is_some_and(all_digits) {
        return Err(MmErrorKind::NegativeSize { what, text: word.into() });
    }
    if !all_digits(word) {
        let reason = format!("{what} `{word}` is not a non-negative integer");
        return Err(MmErrorKind::BadSizeLine { line: shorten(line), reason });
    }
    let too_large = |reason| MmErrorKind::SizeTooLarge { what, text: word.into(), reason };
    let size = word.parse::<u64>().map_err(|_| too_large("more than 64 bits"))?;
    usize::try_from(size).map_err(|_| too_large("more than this machine's addresses"))
}

/// The entries of a coordinate file, expanded to the full matrix.
fn read_entries<T: Scalar, R: Read>(
    lines: &mut Lines<R>,
    header: &Header,
    text_bytes: Option<u64>,
) -> Result<Coo<T>, MmErrorKind> {
    let mut coo = Coo::new(header.rows, header.cols);
    // Reserve no more than the text can hold: the stated count is not trusted.
    let mut capacity = header.entries.min(fit_in(text_bytes, MIN_ENTRY_BYTES));
    let mirrored = header.symmetry != Symmetry::General;
    if mirrored {
        capacity = capacity.saturating_mul(2);
    }
    // The file's entries, as many as its text can hold, must fit the host's memory.
    let entries = header.entries.min(fit_in(text_bytes, MIN_ENTRY_BYTES)) as u128 * (1 + mirrored as u128);
    Footprint::new(format!(
        "the {} entries of a {} x {} Matrix Market file",
        header.entries, header.rows, header.cols
    ))
    .host::<u32>(2 * entries)
    .host::<T>(entries)
    .check_host()
    .map_err(|e| MmErrorKind::NotEnoughMemory(e.to_string()))?;
    coo.row_indices.reserve(capacity);
    coo.col_indices.reserve(capacity);
    coo.values.reserve(capacity);

    let mut found = 0;
    while let Some(line) = lines.next_line()? {
        if is_blank_or_comment(line)? {
            continue;
        }
        if found == header.entries {
            return Err(MmErrorKind::TooManyEntries { stated: header.entries });
        }
        let (row, col, value) = parse_entry::<T>(line, header).map_err(|kind| explain(line, kind))?;
        if header.symmetry == Symmetry::SkewSymmetric && row == col {
            return Err(MmErrorKind::SkewDiagonal(u64::from(row) + 1));
        }
        found += 1;
        coo.row_indices.push(row);
        coo.col_indices.push(col);
        coo.values.push(value);
        if mirrored && row != col {
            let mirror = match header.symmetry {
                Symmetry::SkewSymmetric => T::ZERO - value,
                _ => value,
            };
            coo.row_indices.push(col);
            coo.col_indices.push(row);
            coo.values.push(mirror);
        }
    }
    if found < header.entries {
        return Err(MmErrorKind::TooFewEntries { found, stated: header.entries });
    }
    Ok(coo)
}

/// The values of an array file, in file (column-major) order.
fn read_values<T: Scalar, R: Read>(
    lines: &mut Lines<R>,
    header: &Header,
    text_bytes: Option<u64>,
) -> Result<Vec<T>, MmErrorKind> {
    let mut values = Vec::with_capacity(header.entries.min(fit_in(text_bytes, MIN_VALUE_BYTES)));
    while let Some(line) = lines.next_line()? {
        if is_blank_or_comment(line)? {
            continue;
        }
        if values.len() == header.entries {
            return Err(MmErrorKind::TooManyEntries { stated: header.entries });
        }
        let mut cursor = Cursor { line, at: 0 };
        let value = cursor.value::<T>(header.field).map_err(|kind| explain(line, kind))?;
        if let Some(extra) = cursor.field() {
            return Err(explain(line, MmErrorKind::TrailingText(lossy(extra))));
        }
        values.push(value);
    }
    if values.len() < header.entries {
        return Err(MmErrorKind::TooFewEntries { found: values.len(), stated: header.entries });
    }
    Ok(values)
}

/// Places an array file's column-major values (or lower triangle) in a row-major matrix.
fn to_dense<T: Scalar>(header: &Header, values: &[T]) -> DenseMatrix<T> {
    let mut dense = DenseMatrix::zeros(header.rows, header.cols);
    if values.is_empty() {
        // Nothing to place; and a 0 x 4294967295 matrix should not take 4 billion empty steps.
        return dense;
    }
    let mut next = values.iter().copied();
    for col in 0..header.cols {
        let first_row = match header.symmetry {
            Symmetry::General | Symmetry::Hermitian => 0,
            Symmetry::Symmetric => col,
            Symmetry::SkewSymmetric => col + 1,
        };
        for row in first_row..header.rows {
            let value = next.next().unwrap_or(T::ZERO);
            dense.set(row, col, value);
            match header.symmetry {
                Symmetry::Symmetric => dense.set(col, row, value),
                Symmetry::SkewSymmetric => dense.set(col, row, T::ZERO - value),
                Symmetry::General | Symmetry::Hermitian => {}
            }
        }
    }
    dense
}

/// How many items of at least `min_bytes` each a text of `text_bytes` can hold.
fn fit_in(text_bytes: Option<u64>, min_bytes: u64) -> usize {
    match text_bytes {
        Some(bytes) => usize::try_from(bytes / min_bytes).unwrap_or(usize::MAX),
        None => UNKNOWN_SIZE_RESERVE,
    }
}

/// One coordinate entry: 0-based row and column, and the value (1 for a pattern).
fn parse_entry<T: Scalar>(line: &[u8], header: &Header) -> Result<(u32, u32, T), MmErrorKind> {
    let mut cursor = Cursor { line, at: 0 };
    let row = cursor.index("row index", header.rows)?;
    let col = cursor.index("column index", header.cols)?;
    let value = match header.field {
        Field::Pattern => T::ONE,
        field => cursor.value(field)?,
    };
    if let Some(extra) = cursor.field() {
        return Err(MmErrorKind::TrailingText(lossy(extra)));
    }
    Ok((row, col, value))
}

/// Reads a data line left to right, one whitespace-separated field at a time (`\r` counts as
/// whitespace, for CRLF files).
struct Cursor<'a> {
    line: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn skip_spaces(&mut self) {
        while self.line.get(self.at).is_some_and(|&byte| is_space(byte)) {
            self.at += 1;
        }
    }

    /// The next field, or `None` at the end of the line.
    fn field(&mut self) -> Option<&'a [u8]> {
        self.skip_spaces();
        let start = self.at;
        while self.line.get(self.at).is_some_and(|&byte| !is_space(byte)) {
            self.at += 1;
        }
        (self.at > start).then(|| &self.line[start..self.at])
    }

    /// A 1-based index in 1..=max, returned 0-based. This is the hot path (two per entry):
    /// the digits are summed as they are scanned, and only a bad field is read again to say why.
    fn index(&mut self, what: &'static str, max: usize) -> Result<u32, MmErrorKind> {
        // Saturating keeps the sum from overflowing; any index this large is out of range.
        const SATURATED: u64 = 1 << 40;
        self.skip_spaces();
        let rest = &self.line[self.at..];
        let mut index: u64 = 0;
        let mut length = 0;
        for &byte in rest {
            let digit = byte.wrapping_sub(b'0');
            if digit > 9 {
                break;
            }
            index = (index * 10 + u64::from(digit)).min(SATURATED);
            length += 1;
        }
        let (digits, after) = rest.split_at(length);
        if digits.is_empty() || after.first().is_some_and(|&byte| !is_space(byte)) {
            return Err(match self.field() {
                None => MmErrorKind::MissingField(what),
                Some(field) => MmErrorKind::BadIndex { what, text: lossy(field) },
            });
        }
        self.at += length;
        if index == 0 || index > max as u64 {
            return Err(MmErrorKind::IndexOutOfRange { what, text: lossy(digits), max });
        }
        // max <= u32::MAX (checked with the size line), so index - 1 fits.
        u32::try_from(index - 1).map_err(|_| MmErrorKind::IndexOutOfRange { what, text: lossy(digits), max })
    }

    /// A value of the file's field, as `T`; it must be finite.
    fn value<T: Scalar>(&mut self, field: Field) -> Result<T, MmErrorKind> {
        self.skip_spaces();
        let start = self.at;
        let value = match field {
            Field::Integer => self.integer()?,
            _ => self.real()?,
        };
        let text = &self.line[start..self.at];
        if !value.is_finite() {
            return Err(MmErrorKind::NonFiniteValue(lossy(text)));
        }
        let converted = T::from_f64(value);
        if !converted.is_finite() {
            return Err(MmErrorKind::ValueOverflows { text: lossy(text), precision: T::NAME });
        }
        Ok(converted)
    }

    /// A real number, parsed straight from the bytes (the hot path: `str::parse` would need a
    /// UTF-8 check and a separate scan for the field's end, and parses more slowly).
    fn real(&mut self) -> Result<f64, MmErrorKind> {
        let rest = &self.line[self.at..];
        match fast_float2::parse_partial::<f64, _>(rest) {
            Ok((value, length)) if rest.get(length).is_none_or(|&byte| is_space(byte)) => {
                self.at += length;
                Ok(value)
            }
            _ => Err(match self.field() {
                None => MmErrorKind::MissingField("value"),
                Some(field) => MmErrorKind::BadValue { text: lossy(field), expected: "a real number" },
            }),
        }
    }

    /// An integer (with an optional sign), as f64.
    fn integer(&mut self) -> Result<f64, MmErrorKind> {
        match self.field() {
            Some(field) => parse_integer(field),
            None => Err(MmErrorKind::MissingField("value")),
        }
    }
}

fn parse_integer(text: &[u8]) -> Result<f64, MmErrorKind> {
    let digits = text.strip_prefix(b"-").or_else(|| text.strip_prefix(b"+")).unwrap_or(text);
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return Err(MmErrorKind::BadValue { text: lossy(text), expected: "an integer" });
    }
    // Only ASCII digits and a sign here, so the text is UTF-8; i64 may overflow.
    std::str::from_utf8(text)
        .ok()
        .and_then(|text| text.parse::<i64>().ok())
        .map(|value| value as f64)
        .ok_or_else(|| MmErrorKind::BadValue { text: lossy(text), expected: "an integer of at most 64 bits" })
}

fn is_space(byte: u8) -> bool {
    matches!(byte, b' ' | b'\t' | b'\r')
}

/// Blank and `%` comment lines are skipped wherever they are; a comment must still be text.
fn is_blank_or_comment(line: &[u8]) -> Result<bool, MmErrorKind> {
    match line.iter().find(|&&byte| !is_space(byte)) {
        None => Ok(true),
        Some(b'%') => as_text(line).map(|_| true),
        Some(_) => Ok(false),
    }
}

/// The line as text, or the reason it is binary.
fn as_text(line: &[u8]) -> Result<&str, MmErrorKind> {
    if let Some(&byte) =
        line.iter().find(|&&byte| (byte < 0x20 && byte != b'\t' && byte != b'\r') || byte == 0x7f)
    {
        return Err(MmErrorKind::Binary(byte));
    }
    std::str::from_utf8(line).map_err(|_| MmErrorKind::InvalidUtf8)
}

/// Reports a line that is not text as binary, which says more than the parse error it caused.
fn explain(line: &[u8], kind: MmErrorKind) -> MmErrorKind {
    match as_text(line) {
        Err(binary) => binary,
        Ok(_) => kind,
    }
}

/// A field for an error message: at most 40 characters, invalid UTF-8 replaced.
fn lossy(bytes: &[u8]) -> String {
    shorten(&String::from_utf8_lossy(bytes))
}

fn shorten(text: &str) -> String {
    const MAX_CHARS: usize = 40;
    let trimmed = text.trim();
    if trimmed.chars().count() <= MAX_CHARS {
        trimmed.to_string()
    } else {
        trimmed.chars().take(MAX_CHARS).chain("...".chars()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn index(line: &str, max: usize) -> Result<u32, MmErrorKind> {
        Cursor { line: line.as_bytes(), at: 0 }.index("row index", max)
    }

    #[test]
    fn index_parsing() {
        assert_eq!(index("1 2", 5).unwrap(), 0);
        assert_eq!(index("  \t0005\r", 5).unwrap(), 4);
        assert_eq!(index("4294967295", u32::MAX as usize).unwrap(), u32::MAX - 1);
        assert!(matches!(index("6", 5), Err(MmErrorKind::IndexOutOfRange { .. })));
        assert!(matches!(index("0", 5), Err(MmErrorKind::IndexOutOfRange { .. })));
        assert!(matches!(index("99999999999999999999999999", 5), Err(MmErrorKind::IndexOutOfRange { .. })));
        assert!(matches!(index("+1", 5), Err(MmErrorKind::BadIndex { .. })));
        assert!(matches!(index("1.0", 5), Err(MmErrorKind::BadIndex { .. })));
        assert!(matches!(index("  ", 5), Err(MmErrorKind::MissingField(_))));
    }

    #[test]
    fn value_parsing_leaves_the_cursor_after_the_value() {
        let mut cursor = Cursor { line: b" -1.5e-3  7", at: 0 };
        assert_eq!(cursor.value::<f64>(Field::Real).unwrap(), -1.5e-3);
        assert_eq!(cursor.field(), Some(&b"7"[..]));
        assert_eq!(cursor.field(), None);
        let mut cursor = Cursor { line: b"1.5x", at: 0 };
        assert!(matches!(cursor.value::<f64>(Field::Real), Err(MmErrorKind::BadValue { .. })));
        let mut cursor = Cursor { line: b"-12", at: 0 };
        assert_eq!(cursor.value::<f32>(Field::Integer).unwrap(), -12.0);
        let mut cursor = Cursor { line: b"99999999999999999999", at: 0 };
        assert!(matches!(cursor.value::<f64>(Field::Integer), Err(MmErrorKind::BadValue { .. })));
    }

    #[test]
    fn reservations_are_bounded_by_the_text() {
        assert_eq!(fit_in(Some(40), MIN_ENTRY_BYTES), 10);
        assert_eq!(fit_in(None, MIN_ENTRY_BYTES), UNKNOWN_SIZE_RESERVE);
    }
}
