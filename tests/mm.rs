//! Matrix Market reader and writer: every feature on small inline texts and on the real files
//! shipped in tests/data, the malformed corpus (each file its own error), write -> read round
//! trips and gzip.

mod common;

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use rgla::dense::DenseMatrix;
use rgla::mm::{self, Field, Format, MatrixMarket, MmError, MmErrorKind, Symmetry};
use rgla::sparse::Coo;

fn data(name: &str) -> PathBuf {
    common::data_dir().join(name)
}

fn read_text(text: &str) -> Result<MatrixMarket<f64>, MmError> {
    mm::read_from(text.as_bytes(), "inline.mtx")
}

/// The entries as a map (row, col) -> value; panics on duplicates, which these files lack.
fn entry_map<T: Copy>(coo: &Coo<T>) -> HashMap<(u32, u32), T> {
    let mut map = HashMap::new();
    for ((&row, &col), &value) in coo.row_indices.iter().zip(&coo.col_indices).zip(&coo.values) {
        assert!(map.insert((row, col), value).is_none(), "duplicate entry ({row}, {col})");
    }
    map
}

/// A deliberately plain reader of coordinate files, the oracle for the real ones: split on
/// whitespace, parse, mirror.
fn oracle(path: &Path) -> HashMap<(u32, u32), f64> {
    let text = std::fs::read_to_string(path).unwrap();
    let mut lines = text.lines().filter(|line| !line.trim().is_empty());
    let banner = lines.next().unwrap().to_lowercase();
    let symmetric = banner.contains(" symmetric");
    let pattern = banner.contains("pattern");
    let mut lines = lines.filter(|line| !line.starts_with('%')).skip(1);
    let mut map = HashMap::new();
    for line in lines.by_ref() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let row: u32 = words[0].parse::<u32>().unwrap() - 1;
        let col: u32 = words[1].parse::<u32>().unwrap() - 1;
        let value: f64 = if pattern { 1.0 } else { words[2].parse().unwrap() };
        map.insert((row, col), value);
        if symmetric {
            map.insert((col, row), value);
        }
    }
    map
}

// ---------------------------------------------------------------- features, inline

#[test]
fn coordinate_real_general() {
    let read = read_text(
        "%%MatrixMarket matrix coordinate real general\n% a comment\n2 3 3\n1 1 1.5\n2 3 -2e-3\n1 3 .25\n",
    )
    .unwrap();
    let header = read.header;
    assert_eq!(
        (header.format, header.field, header.symmetry),
        (Format::Coordinate, Field::Real, Symmetry::General)
    );
    assert_eq!((header.rows, header.cols, header.entries), (2, 3, 3));
    let coo = read.coo;
    assert_eq!((coo.rows, coo.cols), (2, 3));
    assert_eq!(coo.row_indices, [0, 1, 0]);
    assert_eq!(coo.col_indices, [0, 2, 2]);
    assert_eq!(coo.values, [1.5, -2e-3, 0.25]);
}

#[test]
fn coordinate_integer_and_pattern() {
    let integer =
        read_text("%%MatrixMarket matrix coordinate integer general\n2 2 2\n1 1 -7\n2 2 +12\n").unwrap();
    assert_eq!(integer.header.field, Field::Integer);
    assert_eq!(integer.coo.values, [-7.0, 12.0]);
    let pattern = read_text("%%MatrixMarket matrix coordinate pattern general\n2 2 2\n1 2\n2 1\n").unwrap();
    assert_eq!(pattern.header.field, Field::Pattern);
    assert_eq!(pattern.coo.values, [1.0, 1.0]);
    assert_eq!(pattern.coo.row_indices, [0, 1]);
}

#[test]
fn symmetric_is_expanded_and_keeps_the_diagonal_once() {
    let read =
        read_text("%%MatrixMarket matrix coordinate real symmetric\n3 3 3\n1 1 4\n3 1 -1\n3 2 2\n").unwrap();
    assert_eq!(read.header.symmetry, Symmetry::Symmetric);
    assert_eq!(read.header.entries, 3, "the header keeps the count as read");
    let map = entry_map(&read.coo);
    assert_eq!(map.len(), 5);
    assert_eq!(map[&(0, 0)], 4.0);
    assert_eq!((map[&(2, 0)], map[&(0, 2)]), (-1.0, -1.0));
    assert_eq!((map[&(2, 1)], map[&(1, 2)]), (2.0, 2.0));
}

#[test]
fn skew_symmetric_is_expanded_with_negation() {
    let read =
        read_text("%%MatrixMarket matrix coordinate real skew-symmetric\n3 3 2\n2 1 1.5\n3 2 -4\n").unwrap();
    assert_eq!(read.header.symmetry, Symmetry::SkewSymmetric);
    let map = entry_map(&read.coo);
    assert_eq!(map.len(), 4);
    assert_eq!((map[&(1, 0)], map[&(0, 1)]), (1.5, -1.5));
    assert_eq!((map[&(2, 1)], map[&(1, 2)]), (-4.0, 4.0));
}

#[test]
fn pattern_symmetric_is_expanded() {
    let read = read_text("%%MatrixMarket matrix coordinate pattern symmetric\n2 2 2\n1 1\n2 1\n").unwrap();
    assert_eq!(entry_map(&read.coo), HashMap::from([((0, 0), 1.0), ((1, 0), 1.0), ((0, 1), 1.0)]));
}

#[test]
fn banner_keywords_ignore_case() {
    let read = read_text("%%matrixmarket MATRIX Coordinate REAL Skew-Symmetric\n2 2 1\n2 1 3\n").unwrap();
    assert_eq!(read.header.symmetry, Symmetry::SkewSymmetric);
    assert_eq!(read.coo.nnz(), 2);
}

#[test]
fn crlf_blank_lines_comments_tabs_and_no_final_newline_are_tolerated() {
    let text = "%%MatrixMarket matrix coordinate real general\r\n%\r\n\r\n% size next\r\n  2\t2  2 \r\n\r\n1 1 1.0\r\n% between entries\r\n   \r\n2\t2\t2.0";
    let read = read_text(text).unwrap();
    assert_eq!(read.coo.values, [1.0, 2.0]);
    assert_eq!(read.coo.row_indices, [0, 1]);
}

#[test]
fn empty_matrices_read() {
    let read = read_text("%%MatrixMarket matrix coordinate real general\n0 0 0\n").unwrap();
    assert_eq!((read.coo.rows, read.coo.cols, read.coo.nnz()), (0, 0, 0));
    let read = read_text("%%MatrixMarket matrix coordinate real general\n5 7 0\n").unwrap();
    assert_eq!((read.coo.rows, read.coo.cols, read.coo.nnz()), (5, 7, 0));
    let dense: DenseMatrix<f64> =
        mm::read_dense_from("%%MatrixMarket matrix array real general\n0 4294967295\n".as_bytes(), "e.mtx")
            .unwrap();
    assert_eq!((dense.rows, dense.cols, dense.data.len()), (0, u32::MAX as usize, 0));
}

#[test]
fn values_parse_in_every_notation_and_as_f32() {
    let text = "%%MatrixMarket matrix coordinate real general\n1 6 6\n1 1 1\n1 2 -0.5\n1 3 +.5\n1 4 1.E3\n1 5 2.5e-3\n1 6 -7.25D0\n";
    // Fortran's `D` exponent is not Matrix Market: the last line is an error.
    let error = read_text(text).unwrap_err();
    assert_eq!(error.line, 8);
    let text = text.replace("-7.25D0", "-7.25e+0");
    let read = read_text(&text).unwrap();
    assert_eq!(read.coo.values, [1.0, -0.5, 0.5, 1000.0, 2.5e-3, -7.25]);
    let single: MatrixMarket<f32> = mm::read_from(text.as_bytes(), "inline.mtx").unwrap();
    assert_eq!(single.coo.values, [1.0f32, -0.5, 0.5, 1000.0, 2.5e-3, -7.25]);
}

#[test]
fn a_value_beyond_f32_is_an_error_for_f32_only() {
    let text = "%%MatrixMarket matrix coordinate real general\n1 1 1\n1 1 1e300\n";
    assert!(read_text(text).is_ok());
    let error = mm::read_from::<f32, _>(text.as_bytes(), "inline.mtx").unwrap_err();
    assert!(matches!(error.kind, MmErrorKind::ValueOverflows { precision: "f32", .. }), "{error}");
    assert_eq!(error.line, 3);
}

#[test]
fn indices_up_to_the_size_are_accepted() {
    let text =
        "%%MatrixMarket matrix coordinate real general\n4294967295 4294967295 1\n4294967295 4294967295 1\n";
    let read = read_text(text).unwrap();
    assert_eq!(read.coo.row_indices, [u32::MAX - 1]);
}

#[test]
fn array_general_is_column_major_in_the_file() {
    let dense: DenseMatrix<f64> = mm::read_dense_from(
        "%%MatrixMarket matrix array real general\n% comment\n2 3\n1\n2\n3\n4\n5\n6\n".as_bytes(),
        "inline.mtx",
    )
    .unwrap();
    assert_eq!((dense.rows, dense.cols), (2, 3));
    assert_eq!(dense.data, [1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
}

#[test]
fn array_symmetric_and_skew_symmetric() {
    let symmetric: DenseMatrix<f64> =
        mm::read_dense_from("%%MatrixMarket matrix array real symmetric\n2 2\n1\n2\n3\n".as_bytes(), "s.mtx")
            .unwrap();
    assert_eq!(symmetric.data, [1.0, 2.0, 2.0, 3.0]);
    let skew: DenseMatrix<f64> = mm::read_dense_from(
        "%%MatrixMarket matrix array real skew-symmetric\n3 3\n1\n2\n3\n".as_bytes(),
        "k.mtx",
    )
    .unwrap();
    assert_eq!(skew.data, [0.0, -1.0, -2.0, 1.0, 0.0, -3.0, 2.0, 3.0, 0.0]);
}

#[test]
fn each_reader_points_to_the_other_for_the_other_format() {
    let error = mm::read_dense_from::<f64, _>(
        "%%MatrixMarket matrix coordinate real general\n1 1 0\n".as_bytes(),
        "c.mtx",
    )
    .unwrap_err();
    assert!(matches!(error.kind, MmErrorKind::WrongFormat { reader: "read_coo", .. }), "{error}");
    let error = read_text("%%MatrixMarket matrix array real general\n1 1\n1\n").unwrap_err();
    assert!(matches!(error.kind, MmErrorKind::WrongFormat { reader: "read_dense", .. }), "{error}");
    assert_eq!(
        error.to_string(),
        "inline.mtx:1: this is an array (dense) file: read it with `mm::read_dense`"
    );
}

#[test]
fn a_missing_file_names_the_path() {
    let error = mm::read_coo::<f64>(data("no_such_file.mtx")).unwrap_err();
    assert!(matches!(error.kind, MmErrorKind::Io(_)));
    assert_eq!(error.line, 0);
    assert!(error.to_string().contains("no_such_file.mtx: "), "{error}");
}

// ---------------------------------------------------------------- the shipped real files

#[test]
fn real_general_file() {
    let read = mm::read_coo::<f64>(data("cage4.mtx")).unwrap();
    assert_eq!((read.header.rows, read.header.cols, read.header.entries), (9, 9, 49));
    assert_eq!(read.coo.nnz(), 49);
    assert_eq!((read.coo.row_indices[0], read.coo.col_indices[0], read.coo.values[0]), (0, 0, 0.75));
    let last = read.coo.nnz() - 1;
    assert_eq!((read.coo.row_indices[last], read.coo.col_indices[last]), (8, 8));
    assert_eq!(read.coo.values[last], 0.166666666666667);
    assert_eq!(entry_map(&read.coo), oracle(&data("cage4.mtx")));
}

#[test]
fn non_square_file() {
    let read = mm::read_coo::<f64>(data("lp_e226.mtx")).unwrap();
    assert_eq!((read.coo.rows, read.coo.cols, read.coo.nnz()), (223, 472, 2768));
    assert_eq!(entry_map(&read.coo), oracle(&data("lp_e226.mtx")));
}

#[test]
fn symmetric_real_integer_and_pattern_files_with_crlf() {
    for (name, field, stated) in [
        ("nos4.mtx", Field::Real, 347),
        ("Trefethen_150.mtx", Field::Integer, 1095),
        ("dwt_419.mtx", Field::Pattern, 1991),
    ] {
        let read = mm::read_coo::<f64>(data(name)).unwrap();
        assert_eq!(
            (read.header.field, read.header.symmetry, read.header.entries),
            (field, Symmetry::Symmetric, stated)
        );
        let map = entry_map(&read.coo);
        let diagonal = map.keys().filter(|(row, col)| row == col).count();
        assert_eq!(read.coo.nnz(), 2 * stated - diagonal, "{name}: off-diagonal entries mirrored");
        for (&(row, col), &value) in &map {
            assert_eq!(map[&(col, row)], value, "{name}: symmetric at ({row}, {col})");
        }
        assert_eq!(map, oracle(&data(name)), "{name}");
    }
    // Trefethen_150: the primes on the diagonal, 1 off it.
    let read = mm::read_coo::<f32>(data("Trefethen_150.mtx")).unwrap();
    let map = entry_map(&read.coo);
    assert_eq!((map[&(0, 0)], map[&(1, 1)], map[&(149, 149)], map[&(1, 0)]), (2.0, 3.0, 863.0, 1.0));
}

#[test]
fn skew_symmetric_file() {
    let read = mm::read_coo::<f64>(data("skew_4.mtx")).unwrap();
    let map = entry_map(&read.coo);
    assert_eq!(map.len(), 8);
    for (&(row, col), &value) in &map {
        assert_eq!(map[&(col, row)], -value);
    }
    assert_eq!((map[&(3, 2)], map[&(2, 3)]), (30.0, -30.0));
}

#[test]
fn array_files() {
    let general = mm::read_dense::<f64>(data("array_3x2.mtx")).unwrap();
    assert_eq!(general, DenseMatrix::new(3, 2, vec![1.0, 4.0, 2.0, 5.0, 3.0, 6.0]).unwrap());
    let symmetric = mm::read_dense::<f32>(data("array_symmetric_3.mtx")).unwrap();
    assert_eq!(symmetric.data, [1.0, 2.0, 3.0, 2.0, 4.0, 5.0, 3.0, 5.0, 6.0]);
}

#[test]
fn complex_file_is_rejected_on_its_banner() {
    let error = mm::read_coo::<f64>(data("qc324.mtx")).unwrap_err();
    assert!(matches!(error.kind, MmErrorKind::Unsupported("complex")), "{error}");
    assert_eq!(error.line, 1);
    assert!(error.to_string().contains("qc324.mtx:1: complex matrices are not supported"), "{error}");
}

// ---------------------------------------------------------------- the malformed corpus

type KindCheck = fn(&MmErrorKind) -> bool;

/// Each file of tests/data/malformed: the line its error names, a word of the message, and
/// the kind of error.
const MALFORMED: &[(&str, usize, &str, KindCheck)] = &[
    ("empty.mtx", 1, "empty", |k| matches!(k, MmErrorKind::Empty)),
    ("no_banner.mtx", 1, "missing banner", |k| matches!(k, MmErrorKind::MissingBanner(_))),
    ("banner_unknown_format.mtx", 1, "unknown format `sparse`", |k| matches!(k, MmErrorKind::BadBanner(_))),
    ("banner_missing_symmetry.mtx", 1, "missing the symmetry", |k| matches!(k, MmErrorKind::BadBanner(_))),
    ("banner_extra_word.mtx", 1, "unexpected `extra`", |k| matches!(k, MmErrorKind::BadBanner(_))),
    ("banner_vector.mtx", 1, "object `vector`", |k| matches!(k, MmErrorKind::BadBanner(_))),
    ("banner_pattern_array.mtx", 1, "`pattern` needs the `coordinate` format", |k| {
        matches!(k, MmErrorKind::BadBanner(_))
    }),
    ("complex.mtx", 1, "complex matrices are not supported", |k| {
        matches!(k, MmErrorKind::Unsupported("complex"))
    }),
    ("hermitian.mtx", 1, "Hermitian matrices are not supported", |k| {
        matches!(k, MmErrorKind::Unsupported("Hermitian"))
    }),
    ("missing_size_line.mtx", 4, "missing size line", |k| matches!(k, MmErrorKind::MissingSizeLine)),
    ("size_line_two_numbers.mtx", 2, "needs 3 numbers", |k| matches!(k, MmErrorKind::BadSizeLine { .. })),
    ("size_line_not_a_number.mtx", 2, "number of columns `x`", |k| {
        matches!(k, MmErrorKind::BadSizeLine { .. })
    }),
    ("array_size_line_three_numbers.mtx", 2, "needs 2 numbers", |k| {
        matches!(k, MmErrorKind::BadSizeLine { .. })
    }),
    ("negative_rows.mtx", 2, "negative number of rows `-3`", |k| {
        matches!(k, MmErrorKind::NegativeSize { .. })
    }),
    ("negative_entries.mtx", 2, "negative number of entries", |k| {
        matches!(k, MmErrorKind::NegativeSize { .. })
    }),
    ("size_overflows_64_bits.mtx", 2, "more than 64 bits", |k| matches!(k, MmErrorKind::SizeTooLarge { .. })),
    ("rows_over_32_bits.mtx", 2, "indices are 32-bit", |k| matches!(k, MmErrorKind::SizeTooLarge { .. })),
    ("symmetric_not_square.mtx", 2, "must be square", |k| {
        matches!(k, MmErrorKind::NotSquare { rows: 3, cols: 4, .. })
    }),
    ("row_index_zero.mtx", 4, "row index 0 is out of range 1..=3", |k| {
        matches!(k, MmErrorKind::IndexOutOfRange { .. })
    }),
    ("column_index_zero.mtx", 3, "column index 0 is out of range 1..=3", |k| {
        matches!(k, MmErrorKind::IndexOutOfRange { .. })
    }),
    ("row_index_out_of_range.mtx", 5, "row index 4 is out of range 1..=3", |k| {
        matches!(k, MmErrorKind::IndexOutOfRange { .. })
    }),
    ("column_index_out_of_range.mtx", 3, "column index 6 is out of range 1..=5", |k| {
        matches!(k, MmErrorKind::IndexOutOfRange { .. })
    }),
    ("index_overflows_64_bits.mtx", 3, "out of range", |k| matches!(k, MmErrorKind::IndexOutOfRange { .. })),
    ("negative_index.mtx", 3, "row index `-1` is not a positive integer", |k| {
        matches!(k, MmErrorKind::BadIndex { .. })
    }),
    ("missing_column_index.mtx", 3, "missing its column index", |k| {
        matches!(k, MmErrorKind::MissingField(_))
    }),
    ("missing_value.mtx", 4, "missing its value", |k| matches!(k, MmErrorKind::MissingField("value"))),
    ("too_few_entries.mtx", 4, "ends after 2 of the 3", |k| {
        matches!(k, MmErrorKind::TooFewEntries { found: 2, stated: 3 })
    }),
    ("too_many_entries.mtx", 5, "more than the 2", |k| {
        matches!(k, MmErrorKind::TooManyEntries { stated: 2 })
    }),
    ("claims_1e15_entries.mtx", 2, "ends after 0 of the 1000000000000000", |k| {
        matches!(k, MmErrorKind::TooFewEntries { found: 0, .. })
    }),
    ("array_too_few_values.mtx", 5, "ends after 3 of the 4", |k| {
        matches!(k, MmErrorKind::TooFewEntries { .. })
    }),
    ("array_too_many_values.mtx", 5, "more than the 2", |k| matches!(k, MmErrorKind::TooManyEntries { .. })),
    ("array_claims_1e10_values.mtx", 3, "ends after 1 of the 10000000000", |k| {
        matches!(k, MmErrorKind::TooFewEntries { .. })
    }),
    ("bad_value.mtx", 3, "`1.0x` is not a real number", |k| matches!(k, MmErrorKind::BadValue { .. })),
    ("nan_value.mtx", 3, "`NaN` is not finite", |k| matches!(k, MmErrorKind::NonFiniteValue(_))),
    ("infinite_value.mtx", 4, "`1e400` is not finite", |k| matches!(k, MmErrorKind::NonFiniteValue(_))),
    ("integer_with_fraction.mtx", 3, "`1.5` is not an integer", |k| {
        matches!(k, MmErrorKind::BadValue { .. })
    }),
    ("trailing_text.mtx", 3, "unexpected text `2.0`", |k| matches!(k, MmErrorKind::TrailingText(_))),
    ("pattern_with_value.mtx", 3, "unexpected text `1.0`", |k| matches!(k, MmErrorKind::TrailingText(_))),
    ("skew_diagonal.mtx", 4, "diagonal entry (2, 2)", |k| matches!(k, MmErrorKind::SkewDiagonal(2))),
    ("truncated.mtx", 5, "missing its column index", |k| matches!(k, MmErrorKind::MissingField(_))),
    ("truncated_gzip.mtx.gz", 0, "truncated or corrupt gzip data", |k| matches!(k, MmErrorKind::Io(_))),
    ("nul_byte.mtx", 4, "byte 0x00", |k| matches!(k, MmErrorKind::Binary(0))),
    ("invalid_utf8_entry.mtx", 3, "invalid UTF-8", |k| matches!(k, MmErrorKind::InvalidUtf8)),
    ("invalid_utf8_comment.mtx", 2, "invalid UTF-8", |k| matches!(k, MmErrorKind::InvalidUtf8)),
    ("binary_file.mtx", 1, "byte 0x7f", |k| matches!(k, MmErrorKind::Binary(0x7f))),
];

fn read_malformed(name: &str) -> MmError {
    let path = data("malformed").join(name);
    let error = if name.starts_with("array_") {
        mm::read_dense::<f64>(&path).map(drop).unwrap_err()
    } else {
        mm::read_coo::<f64>(&path).map(drop).unwrap_err()
    };
    // The same bytes through `read_from` give the same error.
    let bytes = std::fs::read(&path).unwrap();
    let from_bytes = if name.starts_with("array_") {
        mm::read_dense_from::<f64, _>(&bytes[..], name).map(drop).unwrap_err()
    } else {
        mm::read_from::<f64, _>(&bytes[..], name).map(drop).unwrap_err()
    };
    assert_eq!(from_bytes.to_string(), error.to_string().replace(&path.display().to_string(), name));
    error
}

#[test]
fn every_malformed_file_gets_its_own_error() {
    for &(name, line, words, is_kind) in MALFORMED {
        let error = read_malformed(name);
        let message = error.to_string();
        assert!(is_kind(&error.kind), "{name}: unexpected kind: {message}");
        assert!(message.contains(words), "{name}: `{words}` not in: {message}");
        let path = data("malformed").join(name);
        assert_eq!(error.file, path.display().to_string(), "{name}");
        if name.ends_with(".gz") {
            // Where a corrupt stream fails depends on the decompressor's buffering: past line 1.
            assert!(error.line >= 1, "{name}: {message}");
            continue;
        }
        assert_eq!(error.line, line, "{name}: {message}");
        assert!(message.starts_with(&format!("{}:{line}: ", path.display())), "{message}");
    }
}

#[test]
fn the_malformed_corpus_and_the_table_agree() {
    let mut files: Vec<String> = std::fs::read_dir(data("malformed"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    files.sort();
    let mut listed: Vec<String> = MALFORMED.iter().map(|&(name, ..)| name.to_string()).collect();
    listed.sort();
    assert_eq!(files, listed);
}

#[test]
fn a_header_claiming_1e15_entries_in_40_bytes_reserves_nothing_large() {
    // Both with the file size known (read_coo, in the table above) and unknown (read_from).
    let text = "%%MatrixMarket matrix coordinate real general\n5 5 1000000000000000\n1 1 1\n";
    let error = read_text(text).unwrap_err();
    assert!(matches!(error.kind, MmErrorKind::TooFewEntries { found: 1, stated: 1_000_000_000_000_000 }));
    let symmetric = text.replace("general", "symmetric");
    assert!(matches!(read_text(&symmetric).unwrap_err().kind, MmErrorKind::TooFewEntries { .. }));
}

#[test]
fn a_line_without_end_is_an_error_not_a_huge_buffer() {
    let mut text = b"%%MatrixMarket matrix coordinate real general\n1 1 1\n".to_vec();
    text.resize(text.len() + (1 << 20), b'7');
    let error = mm::read_from::<f64, _>(&text[..], "long.mtx").unwrap_err();
    assert!(matches!(error.kind, MmErrorKind::LineTooLong(_)), "{error}");
    assert_eq!(error.line, 3);
}

// ---------------------------------------------------------------- writing

fn sample_coo() -> Coo<f64> {
    Coo {
        rows: 4,
        cols: 3,
        row_indices: vec![0, 3, 1, 3, 0],
        col_indices: vec![0, 2, 1, 0, 0],
        values: vec![0.1, -1.0 / 3.0, 6.02214076e23, f64::MIN_POSITIVE, 5e-324],
    }
}

#[test]
fn write_then_read_returns_the_same_entries_exactly() {
    let coo = sample_coo();
    let mut bytes = Vec::new();
    mm::write_coo_to(&mut bytes, &coo, Field::Real).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(text.starts_with("%%MatrixMarket matrix coordinate real general\n4 3 5\n1 1 1e-1\n"), "{text}");
    let read = read_text(&text).unwrap();
    assert_eq!(read.coo, coo, "duplicates and order kept, values bit for bit");
}

#[test]
fn f32_values_round_trip_exactly() {
    let coo = Coo {
        rows: 2,
        cols: 2,
        row_indices: vec![0, 1],
        col_indices: vec![1, 0],
        values: vec![0.1f32, 1.0e-40],
    };
    let mut bytes = Vec::new();
    mm::write_coo_to(&mut bytes, &coo, Field::Real).unwrap();
    let read: MatrixMarket<f32> = mm::read_from(&bytes[..], "f32.mtx").unwrap();
    assert_eq!(read.coo, coo);
}

#[test]
fn pattern_write_leaves_values_out() {
    let mut bytes = Vec::new();
    mm::write_coo_to(&mut bytes, &sample_coo(), Field::Pattern).unwrap();
    let text = String::from_utf8(bytes).unwrap();
    assert!(
        text.starts_with("%%MatrixMarket matrix coordinate pattern general\n4 3 5\n1 1\n4 3\n"),
        "{text}"
    );
    let read = read_text(&text).unwrap();
    assert_eq!(read.coo.values, [1.0; 5]);
    assert_eq!(read.coo.row_indices, sample_coo().row_indices);
}

#[test]
fn real_files_round_trip_through_files_plain_and_gzip() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["cage4.mtx", "lp_e226.mtx", "nos4.mtx", "dwt_419.mtx"] {
        let original = mm::read_coo::<f64>(data(name)).unwrap().coo;
        for out_name in [name.to_string(), format!("{name}.gz")] {
            let out = dir.path().join(&out_name);
            mm::write_coo(&out, &original, Field::Real).unwrap();
            let again = mm::read_coo::<f64>(&out).unwrap();
            assert_eq!(again.header.symmetry, Symmetry::General, "written expanded");
            assert_eq!(again.coo, original, "{out_name}");
        }
    }
}

#[test]
fn dense_round_trip() {
    let dense = DenseMatrix::new(2, 3, vec![1.5, -2.0, 1e-300, 0.0, 7.0, 1.0 / 7.0]).unwrap();
    let mut bytes = Vec::new();
    mm::write_dense_to(&mut bytes, &dense).unwrap();
    assert!(
        String::from_utf8_lossy(&bytes)
            .starts_with("%%MatrixMarket matrix array real general\n2 3\n1.5e0\n0e0\n")
    );
    let read: DenseMatrix<f64> = mm::read_dense_from(&bytes[..], "dense.mtx").unwrap();
    assert_eq!(read, dense);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("dense.mtx.gz");
    mm::write_dense(&path, &dense).unwrap();
    assert_eq!(mm::read_dense::<f64>(&path).unwrap(), dense);
}

#[test]
fn writing_a_matrix_that_would_not_read_back_is_an_error() {
    let mut outside = sample_coo();
    outside.row_indices[1] = 4;
    let mut bytes = Vec::new();
    let error = mm::write_coo_to(&mut bytes, &outside, Field::Real).unwrap_err();
    assert!(error.to_string().contains("outside the 4 x 3 matrix"), "{error}");
    let mut nan = sample_coo();
    nan.values[0] = f64::NAN;
    assert!(mm::write_coo_to(&mut bytes, &nan, Field::Real).is_err());
    assert!(mm::write_coo_to(&mut bytes, &nan, Field::Pattern).is_ok(), "a pattern has no values to check");
    assert!(mm::write_coo_to(&mut bytes, &sample_coo(), Field::Complex).is_err());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bad.mtx");
    let error = mm::write_coo(&path, &outside, Field::Real).unwrap_err();
    assert!(matches!(error.kind, MmErrorKind::Write(_)));
    assert!(!path.exists(), "nothing written");
}

// ---------------------------------------------------------------- gzip

fn gzip(bytes: &[u8]) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    encoder.write_all(bytes).unwrap();
    encoder.finish().unwrap()
}

#[test]
fn gzip_files_are_read_by_extension_or_by_magic_bytes() {
    let plain = std::fs::read(data("nos4.mtx")).unwrap();
    let expected = mm::read_coo::<f64>(data("nos4.mtx")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for name in ["nos4.mtx.gz", "nos4_compressed_without_extension.mtx"] {
        let path = dir.path().join(name);
        std::fs::write(&path, gzip(&plain)).unwrap();
        assert_eq!(mm::read_coo::<f64>(&path).unwrap(), expected, "{name}");
    }
    // From a reader too, and a stream of several gzip members.
    let mut two_members = gzip(&plain[..1000]);
    two_members.extend(gzip(&plain[1000..]));
    assert_eq!(mm::read_from::<f64, _>(&two_members[..], "two.mtx.gz").unwrap(), expected);
}

#[test]
fn gzip_cut_short_is_an_error() {
    let compressed = gzip(&std::fs::read(data("lp_e226.mtx")).unwrap());
    for cut in [10, compressed.len() / 2, compressed.len() - 4] {
        let error = mm::read_from::<f64, _>(&compressed[..cut], "cut.mtx.gz").unwrap_err();
        assert!(error.line >= 1, "{error}");
    }
}
