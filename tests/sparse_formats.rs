//! Sparse formats, conversions and generators: checked construction, exact round trips,
//! footprints and statistics, generated matrices' structure, `GenSpec` parsing.
//! (That conversions preserve y = A x is in `spmv_cpu.rs`.)

use rgla::sparse::generate::{self, GenSpec, edge_cases};
use rgla::sparse::{Bsr, Coo, Csr, Hll, HllLayout, inverse_permutation};
use rgla::verify::compare;
use rgla::{Error, Scalar};

const BLOCK_SIZES: [usize; 5] = [1, 2, 3, 8, 32];
const HACK_SIZES: [usize; 4] = [1, 4, 5, 32];
const LAYOUTS: [HllLayout; 2] = [HllLayout::RowMajor, HllLayout::ColumnMajor];

/// Small generated matrices, one per generator.
const SMALL_SPECS: [&str; 16] = [
    "stencil27:5x4x3",
    "poisson2d:9x7",
    "poisson3d:4",
    "random:rows=200,cols=150,nnz_per_row=9,seed=3",
    "random:rows=120,nnz_per_row=7,spd=true,seed=4",
    "block:block_rows=5,block_cols=7,block_size=3,blocks_per_row=2",
    "banded:n=90,bandwidth=6,nnz_per_row=5,seed=5",
    "banded:n=90,bandwidth=4,dominant=true",
    "powerlaw:n=2000,seed=6",
    "road:n=300,window=5",
    "fem:3x3x2,dof=2",
    "rmat:scale=9,edge_factor=8",
    "web:n=3000,seed=2",
    "circuit:n=2000,dense_rows=3,dense_len=300",
    "delaunay:n=500",
    "shuffle:stencil27:5x4x3",
];

fn small_generated() -> Vec<(String, Csr<f64>)> {
    SMALL_SPECS
        .iter()
        .map(|spec| (spec.to_string(), spec.parse::<GenSpec>().unwrap().generate().unwrap()))
        .collect()
}

fn all_test_matrices() -> Vec<(String, Csr<f64>)> {
    edge_cases().into_iter().chain(small_generated()).collect()
}

/// The message of an `InvalidInput` error, which must contain `expected`.
fn assert_invalid<T: std::fmt::Debug>(result: Result<T, Error>, expected: &str) {
    match result {
        Err(Error::InvalidInput(message)) => {
            assert!(message.contains(expected), "error `{message}` should mention `{expected}`")
        }
        other => panic!("expected an InvalidInput error mentioning `{expected}`, got {other:?}"),
    }
}

/// Equal matrices, or a panic naming the first row that differs (not a dump of both).
fn assert_same<T: Scalar>(got: &Csr<T>, expected: &Csr<T>, what: &str) {
    if got == expected {
        return;
    }
    assert_eq!(
        (got.rows(), got.cols(), got.nnz()),
        (expected.rows(), expected.cols(), expected.nnz()),
        "{what}"
    );
    let row = (0..got.rows()).find(|&r| got.row(r) != expected.row(r)).unwrap();
    panic!("{what}: row {row} is {:?}, expected {:?}", got.row(row), expected.row(row));
}

/// Re-checks a matrix's invariants through the checked constructor.
fn assert_valid(csr: &Csr<f64>) {
    let (rows, cols, row_ptr, col_indices, values) = csr.clone().into_parts();
    Csr::new(rows, cols, row_ptr, col_indices, values).unwrap();
}

fn dense(csr: &Csr<f64>) -> Vec<Vec<f64>> {
    let mut out = vec![vec![0.0; csr.cols()]; csr.rows()];
    for (row, dense_row) in out.iter_mut().enumerate() {
        let (cols, values) = csr.row(row);
        for (&c, &v) in cols.iter().zip(values) {
            dense_row[c as usize] = v;
        }
    }
    out
}

#[test]
fn coo_to_csr_sums_duplicates_and_sorts_columns() {
    let mut coo = Coo::new(3, 4);
    for (row, col, value) in [(2, 3, 1.0), (0, 2, 2.0), (2, 0, 3.0), (0, 2, 0.5), (0, 0, 4.0), (2, 3, -1.0)] {
        coo.push(row, col, value);
    }
    let csr = coo.to_csr().unwrap();
    assert_eq!(csr.row_ptr(), [0, 2, 2, 4]);
    assert_eq!(csr.col_indices(), [0, 2, 0, 3]);
    // (2, 3) sums to an explicit zero, which CSR keeps.
    assert_eq!(csr.values(), [4.0, 2.5, 3.0, 0.0]);
    assert_same(&csr.to_coo().to_csr().unwrap(), &csr, "COO round trip");
    assert_eq!(csr.without_zeros().nnz(), 3);
}

#[test]
fn coo_checked_construction_names_the_problem() {
    assert_invalid(Coo::from_triplets(2, 2, vec![0, 1], vec![0], vec![1.0, 2.0]), "lengths mismatched");
    assert_invalid(
        Coo::from_triplets(2, 2, vec![0, 2], vec![0, 1], vec![1.0, 2.0]),
        "entry 1: row index 2 out of range",
    );
    assert_invalid(
        Coo::from_triplets(2, 2, vec![0, 1], vec![5, 1], vec![1.0, 2.0]),
        "entry 0: column index 5",
    );
    assert_invalid(
        Coo::<f64>::from_triplets(1 << 32, 2, vec![], vec![], vec![]),
        "rows is 4294967296, over the u32",
    );
    assert_invalid(Coo::<f64>::new(3, usize::MAX).to_csr(), "columns");
    assert!(Coo::from_triplets(2, 3, vec![1, 0], vec![2, 0], vec![1.0f32, 2.0]).is_ok());
}

#[test]
fn csr_checked_construction_names_the_problem() {
    let ok = || (vec![0u32, 2, 3], vec![0u32, 2, 1], vec![1.0, 2.0, 3.0]);
    let (row_ptr, cols, values) = ok();
    assert!(Csr::new(2, 3, row_ptr, cols, values).is_ok());

    let (_, cols, values) = ok();
    assert_invalid(
        Csr::new(2, 3, vec![0, 2], cols, values),
        "row pointers have 2 entries, expected rows + 1 = 3",
    );
    let (_, cols, values) = ok();
    assert_invalid(Csr::new(2, 3, vec![1, 2, 3], cols, values), "row pointers must start at 0");
    let (_, cols, values) = ok();
    assert_invalid(
        Csr::new(2, 3, vec![0, 3, 2], cols, values),
        "not monotone: row_ptr[2] = 2 < row_ptr[1] = 3",
    );
    let (_, cols, values) = ok();
    assert_invalid(
        Csr::new(2, 3, vec![0, 1, 2], cols, values),
        "row pointers end at 2 but there are 3 entries",
    );
    let (row_ptr, cols, _) = ok();
    assert_invalid(
        Csr::new(2, 3, row_ptr, cols, vec![1.0, 2.0]),
        "lengths mismatched: 3 column indices but 2 values",
    );
    let (row_ptr, _, values) = ok();
    assert_invalid(Csr::new(2, 3, row_ptr, vec![0, 2, 3], values), "row 1: column 3 out of range");
    let (row_ptr, _, values) = ok();
    assert_invalid(
        Csr::new(2, 3, row_ptr, vec![2, 0, 1], values),
        "row 0: columns not strictly increasing (2 then 0)",
    );
    let (row_ptr, _, values) = ok();
    assert_invalid(
        Csr::new(2, 3, row_ptr, vec![1, 1, 1], values),
        "row 0: columns not strictly increasing (1 then 1)",
    );
    assert_invalid(Csr::<f64>::new(1 << 32, 3, vec![], vec![], vec![]), "rows");
    assert_invalid(Csr::<f64>::new(3, 1 << 33, vec![], vec![], vec![]), "columns");
    assert_invalid(Csr::<f64>::empty(1 << 32, 1), "rows");
}

#[test]
fn bsr_checked_construction_names_the_problem() {
    // 3x3 in 2x2 blocks: block rows 2, block columns 2.
    let block = |values: [f64; 4]| values.to_vec();
    let ok = || {
        (vec![0u32, 1, 2], vec![0u32, 1], [block([1.0, 2.0, 3.0, 4.0]), block([5.0, 0.0, 0.0, 0.0])].concat())
    };
    let (ptr, cols, values) = ok();
    let bsr = Bsr::new(3, 3, 2, ptr, cols, values).unwrap();
    assert_eq!(bsr.to_csr().nnz(), 5);

    let (ptr, cols, values) = ok();
    assert_invalid(Bsr::new(3, 3, 0, ptr, cols, values), "block size must be at least 1");
    let (_, cols, values) = ok();
    assert_invalid(
        Bsr::new(3, 3, 2, vec![0, 2], cols, values),
        "block row pointers have 2 entries, expected block rows + 1 = 3",
    );
    let (_, cols, values) = ok();
    assert_invalid(Bsr::new(3, 3, 2, vec![0, 2, 1], cols, values), "not monotone");
    let (_, cols, values) = ok();
    assert_invalid(
        Bsr::new(3, 3, 2, vec![0, 1, 1], cols, values),
        "end at 1 but there are 2 block column indices",
    );
    let (ptr, _, values) = ok();
    assert_invalid(Bsr::new(3, 3, 2, ptr, vec![0, 2], values), "block row 1: block column 2 out of range");
    let (ptr, cols, _) = ok();
    assert_invalid(
        Bsr::new(3, 3, 2, ptr, cols, vec![1.0; 7]),
        "lengths mismatched: 7 values for 2 blocks of 2x2 (8 expected)",
    );
    let (ptr, cols, mut values) = ok();
    values[5] = 9.0; // row 2, column 3 of a 3x3 matrix
    assert_invalid(Bsr::new(3, 3, 2, ptr, cols, values), "nonzero value at (2, 3), outside the 3 x 3 matrix");
    assert_invalid(
        Bsr::new(2, 4, 2, vec![0, 2], vec![1, 0], vec![1.0; 8]),
        "block row 0: block columns not strictly increasing",
    );
    assert_invalid(Csr::<f64>::empty(4, 4).unwrap().to_bsr(0), "block size must be at least 1");
}

#[test]
fn hll_checked_construction_names_the_problem() {
    // 3 rows in hacks of 2: widths [2, 1] make 2 * 2 + 1 * 1 = 5 slots.
    let ok = || (vec![2u32, 1], vec![0u32, 1, 1, 1, 0], vec![1.0, 2.0, 3.0, 0.0, 4.0]);
    let (widths, cols, values) = ok();
    let hll = Hll::new(3, 2, 2, HllLayout::RowMajor, widths, cols, values).unwrap();
    assert_eq!(hll.hack_offsets(), [0, 4, 5]);
    assert_eq!(hll.to_csr().nnz(), 4);

    let (widths, cols, values) = ok();
    assert_invalid(
        Hll::new(3, 2, 0, HllLayout::RowMajor, widths, cols, values),
        "hack size must be at least 1",
    );
    let (_, cols, values) = ok();
    assert_invalid(
        Hll::new(3, 2, 2, HllLayout::RowMajor, vec![2], cols, values),
        "1 hack widths for 2 hacks of 2 rows",
    );
    let (widths, cols, _) = ok();
    assert_invalid(
        Hll::new(3, 2, 2, HllLayout::RowMajor, widths, cols, vec![1.0; 4]),
        "lengths mismatched: 5 column indices and 4 values, but the hack widths make 5 slots",
    );
    let (widths, _, values) = ok();
    assert_invalid(
        Hll::new(3, 2, 2, HllLayout::ColumnMajor, widths, vec![0, 1, 1, 1, 2], values),
        "slot 4 (hack 1): column 2 out of range",
    );
    assert_invalid(
        Csr::<f32>::empty(4, 4).unwrap().to_hll(0, HllLayout::RowMajor),
        "hack size must be at least 1",
    );
}

#[test]
fn bsr_and_hll_round_trips_are_exact() {
    for (name, csr) in all_test_matrices() {
        assert_valid(&csr);
        // On random columns every entry fills a block of its own: skip the huge ones.
        for block_size in BLOCK_SIZES.into_iter().filter(|b| csr.nnz() * b * b <= 4_000_000) {
            let bsr = csr.to_bsr(block_size).unwrap();
            assert_same(&bsr.to_csr(), &csr, &format!("{name}: CSR -> BSR {block_size} -> CSR"));
            // The converted matrix passes the checked constructor too.
            let rebuilt = Bsr::new(
                bsr.rows(),
                bsr.cols(),
                block_size,
                bsr.block_row_ptr().to_vec(),
                bsr.block_col_indices().to_vec(),
                bsr.values().to_vec(),
            );
            assert!(rebuilt.unwrap() == bsr, "{name}: BSR {block_size} re-checked");
        }
        for hack_size in HACK_SIZES {
            for layout in LAYOUTS {
                let hll = csr.to_hll(hack_size, layout).unwrap();
                assert_same(
                    &hll.to_csr(),
                    &csr,
                    &format!("{name}: CSR -> HLL {hack_size} {layout:?} -> CSR"),
                );
                let rebuilt = Hll::new(
                    hll.rows(),
                    hll.cols(),
                    hack_size,
                    layout,
                    hll.hack_widths().to_vec(),
                    hll.col_indices().to_vec(),
                    hll.values().to_vec(),
                );
                assert!(rebuilt.unwrap() == hll, "{name}: HLL {hack_size} {layout:?} re-checked");
            }
        }
    }
}

#[test]
fn round_trips_drop_explicit_zeros_only() {
    let mut coo = Coo::new(3, 3);
    for (row, col, value) in [(0, 0, 1.0), (0, 1, 0.0), (1, 2, 2.0), (2, 0, 0.0)] {
        coo.push(row, col, value);
    }
    let csr = coo.to_csr().unwrap();
    assert_eq!(csr.nnz(), 4);
    let expected = csr.without_zeros();
    assert_eq!(expected.nnz(), 2);
    assert_same(&csr.to_bsr(2).unwrap().to_csr(), &expected, "BSR drops zeros");
    assert_same(&csr.to_hll(2, HllLayout::ColumnMajor).unwrap().to_csr(), &expected, "HLL drops zeros");
}

#[test]
fn bsr_counts_its_stored_zeros() {
    // 3x3 with (0, 0) and (2, 2), blocks of 2: two blocks, 8 slots, 2 of them entries.
    let csr = Coo::from_triplets(3, 3, vec![0, 2], vec![0, 2], vec![1.0, 2.0]).unwrap().to_csr().unwrap();
    let bsr = csr.to_bsr(2).unwrap();
    assert_eq!((bsr.block_rows(), bsr.block_cols(), bsr.blocks(), bsr.stored()), (2, 2, 2, 8));
    assert_eq!(bsr.block_col_indices(), [0, 1]);
    assert_eq!(bsr.values(), [1.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0]);
    assert_eq!(bsr.stored_zeros(), 6);
    assert_eq!(bsr.padding_ratio(), 0.75);
    assert_eq!(bsr.bytes(), (3 + 2) * 4 + 8 * 8);

    // Block-aligned dense blocks need no padding.
    let blocks: Csr<f32> = generate::block_random(6, 6, 8, 2, 1).unwrap();
    let bsr = blocks.to_bsr(8).unwrap();
    assert_eq!((bsr.blocks(), bsr.stored_zeros(), bsr.padding_ratio()), (12, 0, 0.0));
    assert_eq!(bsr.bytes(), (7 + 12) * 4 + 12 * 64 * 4);
}

#[test]
fn hll_pads_with_the_rows_last_column_in_either_layout() {
    // Rows of 1, 3 and 0 entries in hacks of 2: hack 0 is 2 rows x 3 slots, hack 1 is empty.
    let csr = Coo::from_triplets(3, 5, vec![0, 1, 1, 1], vec![4, 0, 2, 3], vec![1.0, 2.0, 3.0, 4.0])
        .unwrap()
        .to_csr()
        .unwrap();
    let row_major = csr.to_hll(2, HllLayout::RowMajor).unwrap();
    assert_eq!(
        (row_major.hacks(), row_major.hack_widths(), row_major.hack_offsets()),
        (2, &[3, 0][..], &[0, 6, 6][..])
    );
    assert_eq!(row_major.col_indices(), [4, 4, 4, 0, 2, 3]);
    assert_eq!(row_major.values(), [1.0, 0.0, 0.0, 2.0, 3.0, 4.0]);
    let column_major = csr.to_hll(2, HllLayout::ColumnMajor).unwrap();
    assert_eq!(column_major.col_indices(), [4, 0, 4, 2, 4, 3]);
    assert_eq!(column_major.values(), [1.0, 2.0, 0.0, 3.0, 0.0, 4.0]);
    assert_eq!(column_major.row_slots(1).collect::<Vec<_>>(), [1, 3, 5]);
    for hll in [&row_major, &column_major] {
        assert_eq!((hll.stored(), hll.stored_zeros()), (6, 2));
        assert!((hll.padding_ratio() - 2.0 / 6.0).abs() < 1e-15);
        assert_eq!(hll.bytes(), (3 + 2 + 6) * 4 + 6 * 8);
    }
    // An empty row pads with column 0.
    let empty_row =
        Coo::from_triplets(2, 3, vec![1, 1], vec![1, 2], vec![1.0, 2.0]).unwrap().to_csr().unwrap();
    assert_eq!(empty_row.to_hll(2, HllLayout::RowMajor).unwrap().col_indices(), [0, 0, 1, 2]);
}

#[test]
fn footprints_and_row_stats() {
    let csr: Csr<f64> = generate::stencil27(4, 4, 4).unwrap();
    assert_eq!(csr.bytes(), (65 + csr.nnz()) * 4 + csr.nnz() * 8);
    assert_eq!(csr.to_f32().bytes(), (65 + csr.nnz()) * 4 + csr.nnz() * 4);
    let coo = csr.to_coo();
    assert_eq!(coo.bytes(), csr.nnz() * 16);
    let stats = csr.row_stats();
    assert_eq!((stats.min, stats.max, stats.empty_rows), (8, 27, 0));
    assert_eq!(stats.mean, csr.nnz() as f64 / 64.0);

    let empty = Csr::<f64>::empty(0, 3).unwrap().row_stats();
    assert_eq!((empty.min, empty.mean, empty.max, empty.empty_rows), (0, 0.0, 0, 0));
    let with_gaps =
        edge_cases::<f64>().into_iter().find(|(name, _)| name.contains("every third row")).unwrap().1;
    assert_eq!(with_gaps.row_stats().empty_rows, 17);
}

#[test]
fn diagonal_transpose_and_cast() {
    for (name, csr) in all_test_matrices() {
        let dense_a = dense(&csr);
        let diagonal = csr.diagonal();
        assert_eq!(diagonal.len(), csr.rows().min(csr.cols()), "{name}");
        for (i, &d) in diagonal.iter().enumerate() {
            assert_eq!(d, dense_a[i][i], "{name}: diagonal {i}");
        }
        let transposed = csr.transpose();
        assert_valid(&transposed);
        assert_eq!((transposed.rows(), transposed.cols()), (csr.cols(), csr.rows()), "{name}");
        let dense_t = dense(&transposed);
        for (i, row) in dense_a.iter().enumerate() {
            for (j, &v) in row.iter().enumerate() {
                assert_eq!(dense_t[j][i], v, "{name}: transpose at ({i}, {j})");
            }
        }
        assert_same(&transposed.transpose(), &csr, &format!("{name}: transposed twice"));
        let single = csr.to_f32();
        assert_eq!((single.row_ptr(), single.col_indices()), (csr.row_ptr(), csr.col_indices()), "{name}");
        for (&s, &d) in single.values().iter().zip(csr.values()) {
            assert_eq!(s, d as f32, "{name}");
        }
        assert_same(&single.to_f64().cast::<f32>(), &single, &format!("{name}: f32 -> f64 -> f32"));
    }
}

#[test]
fn nnz_balanced_partition_covers_rows_with_balanced_work() {
    for (name, csr) in all_test_matrices() {
        let work = |rows: std::ops::Range<usize>| {
            csr.row_ptr()[rows.end] as usize - csr.row_ptr()[rows.start] as usize + rows.len()
        };
        let longest_row = csr.row_stats().max + 1;
        for parts in [1, 2, 3, 7, 64] {
            let bounds = csr.nnz_balanced_partition(parts);
            assert_eq!(bounds[0], 0, "{name}");
            assert_eq!(*bounds.last().unwrap(), csr.rows(), "{name}");
            assert!(bounds.len() <= parts + 1, "{name}: {} ranges for {parts} parts", bounds.len() - 1);
            assert!(bounds.windows(2).all(|w| w[0] < w[1]), "{name}: empty range in {bounds:?}");
            // Each range holds at most its share plus one row's work.
            let share = work(0..csr.rows()).div_ceil(parts);
            for w in bounds.windows(2) {
                assert!(work(w[0]..w[1]) <= share + longest_row, "{name}, {parts} parts: {bounds:?}");
            }
        }
    }
    let stencil: Csr<f64> = generate::stencil27(16, 16, 16).unwrap();
    assert_eq!(stencil.nnz_balanced_partition(4).len(), 5);
}

#[test]
fn stencils_and_poisson_have_the_known_structure() {
    let (nx, ny, nz) = (6, 5, 4);
    let a: Csr<f64> = generate::stencil27(nx, ny, nz).unwrap();
    assert_valid(&a);
    assert_eq!(a.rows(), nx * ny * nz);
    assert_eq!(a.nnz(), (3 * nx - 2) * (3 * ny - 2) * (3 * nz - 2)); // HPCG's count
    let interior = 1 + nx * (1 + ny);
    assert_eq!(a.row_len(interior), 27);
    assert_eq!(a.row_len(0), 8);
    assert!(a.diagonal().iter().all(|&d| d == 26.0));
    assert!(a.values().iter().all(|&v| v == 26.0 || v == -1.0));
    assert_same(&a.transpose(), &a, "stencil27 symmetric");

    let p2: Csr<f32> = generate::poisson2d(30, 20).unwrap();
    assert_eq!((p2.rows(), p2.nnz()), (600, 5 * 600 - 2 * 30 - 2 * 20));
    assert!(p2.diagonal().iter().all(|&d| d == 4.0));
    let p3: Csr<f64> = generate::poisson3d(7, 7, 7).unwrap();
    assert_eq!((p3.rows(), p3.nnz()), (343, 7 * 343 - 6 * 49));
    assert_same(&p3.transpose(), &p3, "poisson3d symmetric");
    // Every row of a Laplacian sums to zero except at the boundary, where it is positive.
    for row in 0..p3.rows() {
        assert!(p3.row(row).1.iter().sum::<f64>() >= 0.0);
    }
    assert_eq!(GenSpec::Poisson3d { nx: 0, ny: 3, nz: 3 }.generate::<f64>().unwrap().rows(), 0);
}

#[test]
fn random_generators_have_the_asked_structure() {
    let a: Csr<f64> = generate::random_uniform(1000, 300, 27, 9).unwrap();
    assert_valid(&a);
    assert_eq!(a.row_stats().min, 27);
    assert_eq!(a.row_stats().max, 27);
    assert!(a.values().iter().all(|&v| (0.5..1.5).contains(&v.abs())));
    // Dense rows go through the selection-sampling branch.
    let full: Csr<f64> = generate::random_uniform(5, 40, 40, 9).unwrap();
    assert!((0..5).all(|row| full.row(row).0.iter().copied().eq(0..40)));
    assert_invalid(generate::random_uniform::<f64>(5, 4, 5, 1), "5 nonzeros per row exceed the 4 columns");

    let banded: Csr<f64> = generate::banded(500, 10, Some(7), false, 2).unwrap();
    assert_valid(&banded);
    for row in 0..500 {
        let cols = banded.row(row).0;
        assert_eq!(cols.len(), 7.min(row.min(10) + 1 + (499 - row).min(10)));
        assert!(cols.iter().all(|&c| (c as i64 - row as i64).abs() <= 10));
    }
    let full_band: Csr<f64> = generate::banded(50, 3, None, false, 2).unwrap();
    assert_eq!(full_band.nnz(), 50 * 7 - 2 * (3 + 2 + 1));

    let road: Csr<f64> = generate::road(3000, 16, 4).unwrap();
    assert_valid(&road);
    assert!((2..=4).contains(&road.row_stats().min) && road.row_stats().max <= 4);
    assert_diagonally_dominant("road", &road);

    let power: Csr<f64> = generate::power_law(100_000, 2, 100_000, 1.5, 3).unwrap();
    assert_valid(&power);
    let stats = power.row_stats();
    assert!(stats.min >= 2 && stats.mean < 10.0 && stats.max > 1000, "power law row lengths: {stats:?}");
    assert_invalid(generate::power_law::<f64>(10, 2, 10, 0.0, 1), "alpha must be positive");
}

fn assert_diagonally_dominant(name: &str, a: &Csr<f64>) {
    for (row, diagonal) in a.diagonal().into_iter().enumerate() {
        let (cols, values) = a.row(row);
        let off_diagonal: f64 =
            cols.iter().zip(values).filter(|&(&c, _)| c as usize != row).map(|(_, v)| v.abs()).sum();
        assert!(diagonal > off_diagonal, "{name}: row {row} is not diagonally dominant");
    }
}

#[test]
fn spd_and_fem_generators_are_symmetric_and_dominant() {
    for spec in [
        "random:rows=400,nnz_per_row=9,spd=true,seed=8",
        "fem:4x3x3,dof=3,seed=2",
        "banded:n=300,bandwidth=5,dominant=1",
    ] {
        let a: Csr<f64> = spec.parse::<GenSpec>().unwrap().generate().unwrap();
        assert_valid(&a);
        assert_diagonally_dominant(spec, &a);
        if !spec.starts_with("banded") {
            assert_same(&a.transpose(), &a, &format!("{spec} symmetric"));
        }
    }
    let spd: Csr<f64> = generate::random_spd(1000, 27, 1).unwrap();
    let mean = spd.row_stats().mean;
    assert!((20.0..=28.0).contains(&mean), "spd rows average {mean} entries, asked 27");
    let fem: Csr<f64> = generate::fem(4, 4, 4, 6, 1).unwrap();
    assert_eq!((fem.rows(), fem.row_stats().max), (384, 27 * 6));
    assert_invalid(generate::fem::<f64>(2, 2, 2, 0, 1), "dof must be at least 1");
}

#[test]
fn generators_depend_on_the_seed_only() {
    // Large enough for several row chunks, so the parallel fill is exercised.
    for spec in [
        "random:rows=20000,cols=5000,nnz_per_row=5",
        "powerlaw:n=20000",
        "road:n=20000",
        "banded:n=20000,bandwidth=9,nnz_per_row=4",
        "rmat:scale=15,edge_factor=4",
        "web:n=20000",
        "circuit:n=20000,dense_rows=2,dense_len=500",
        "delaunay:n=20000",
    ] {
        let spec: GenSpec = spec.parse().unwrap();
        let a: Csr<f64> = spec.generate().unwrap();
        assert_valid(&a);
        assert_same(&spec.generate::<f64>().unwrap(), &a, &format!("{spec}: same seed, same matrix"));
        let reseeded = match spec.clone() {
            GenSpec::Random { rows, cols, nnz_per_row, spd, .. } => {
                GenSpec::Random { rows, cols, nnz_per_row, spd, seed: 2 }
            }
            GenSpec::PowerLaw { n, min_nnz, max_nnz, alpha, .. } => {
                GenSpec::PowerLaw { n, min_nnz, max_nnz, alpha, seed: 2 }
            }
            GenSpec::Road { n, window, .. } => GenSpec::Road { n, window, seed: 2 },
            GenSpec::Banded { n, bandwidth, nnz_per_row, dominant, .. } => {
                GenSpec::Banded { n, bandwidth, nnz_per_row, dominant, seed: 2 }
            }
            GenSpec::Rmat { scale, edge_factor, a, b, c, .. } => {
                GenSpec::Rmat { scale, edge_factor, a, b, c, seed: 2 }
            }
            GenSpec::Web { n, .. } => GenSpec::Web { n, seed: 2 },
            GenSpec::Circuit { n, dense_rows, dense_len, .. } => {
                GenSpec::Circuit { n, dense_rows, dense_len, seed: 2 }
            }
            GenSpec::Delaunay { n, .. } => GenSpec::Delaunay { n, seed: 2 },
            other => unreachable!("{other}"),
        };
        assert!(reseeded.generate::<f64>().unwrap() != a, "{spec}: another seed, another matrix");
        // f32 matrices are the f64 ones rounded (dominant diagonals are summed in f32).
        let single = spec.generate::<f32>().unwrap();
        assert_eq!((single.row_ptr(), single.col_indices()), (a.row_ptr(), a.col_indices()), "{spec}");
        compare(single.values(), a.values(), 1e-6).check(&spec.to_string(), f32::EPSILON as f64).unwrap();
    }
}

#[test]
fn x_vector_is_integers_1_to_5() {
    let x: Vec<f64> = generate::vector_1_to_5(1000, 3);
    assert!(x.iter().all(|&v| v.fract() == 0.0 && (1.0..=5.0).contains(&v)));
    for k in 1..=5 {
        assert!(x.contains(&(k as f64)));
    }
    assert_eq!(generate::vector_1_to_5::<f32>(1000, 3), x.iter().map(|&v| v as f32).collect::<Vec<_>>());
}

#[test]
fn gen_specs_parse_with_defaults_and_print_back() {
    let cases = [
        ("stencil27:64x64x64", GenSpec::Stencil27 { nx: 64, ny: 64, nz: 64 }),
        ("stencil27:16", GenSpec::Stencil27 { nx: 16, ny: 16, nz: 16 }),
        ("poisson2d:1000", GenSpec::Poisson2d { nx: 1000, ny: 1000 }),
        ("poisson2d:300x200", GenSpec::Poisson2d { nx: 300, ny: 200 }),
        ("poisson3d:100", GenSpec::Poisson3d { nx: 100, ny: 100, nz: 100 }),
        (
            "random:rows=100000,nnz_per_row=27,seed=1",
            GenSpec::Random { rows: 100_000, cols: 100_000, nnz_per_row: 27, spd: false, seed: 1 },
        ),
        (
            "random: rows = 1_000, cols=50, nnz_per_row=3, spd=yes, seed=9",
            GenSpec::Random { rows: 1000, cols: 50, nnz_per_row: 3, spd: true, seed: 9 },
        ),
        (
            "block:block_rows=100,blocks_per_row=4",
            GenSpec::Block { block_rows: 100, block_cols: 100, block_size: 8, blocks_per_row: 4, seed: 1 },
        ),
        (
            "banded:n=1000,bandwidth=13,nnz_per_row=27,dominant=true,seed=4",
            GenSpec::Banded { n: 1000, bandwidth: 13, nnz_per_row: Some(27), dominant: true, seed: 4 },
        ),
        (
            "banded:n=10,bandwidth=2",
            GenSpec::Banded { n: 10, bandwidth: 2, nnz_per_row: None, dominant: false, seed: 1 },
        ),
        (
            "powerlaw:n=1000000,alpha=2",
            GenSpec::PowerLaw { n: 1_000_000, min_nnz: 2, max_nnz: 1_000_000, alpha: 2.0, seed: 1 },
        ),
        ("road:n=500", GenSpec::Road { n: 500, window: 64, seed: 1 }),
        ("FEM:10x10x5,dof=6", GenSpec::Fem { nx: 10, ny: 10, nz: 5, dof: 6, seed: 1 }),
        (
            "rmat:scale=20,edge_factor=16",
            GenSpec::Rmat { scale: 20, edge_factor: 16, a: 0.57, b: 0.19, c: 0.19, seed: 1 },
        ),
        ("web:n=1_000_000", GenSpec::Web { n: 1_000_000, seed: 1 }),
        ("circuit:n=1000", GenSpec::Circuit { n: 1000, dense_rows: 10, dense_len: 10, seed: 1 }),
        ("delaunay:n=100,seed=3", GenSpec::Delaunay { n: 100, seed: 3 }),
        ("shuffle:stencil27:8", GenSpec::Shuffle(Box::new(GenSpec::Stencil27 { nx: 8, ny: 8, nz: 8 }))),
        (
            "shuffle:shuffle:road:n=9",
            GenSpec::Shuffle(Box::new(GenSpec::Shuffle(Box::new(GenSpec::Road {
                n: 9,
                window: 64,
                seed: 1,
            })))),
        ),
    ];
    for (text, expected) in cases {
        let parsed: GenSpec = text.parse().unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(parsed, expected, "{text}");
        assert_eq!(parsed.to_string().parse::<GenSpec>().unwrap(), parsed, "{text} printed as {parsed}");
        assert!(parsed.to_string().starts_with(parsed.kind()));
    }
}

#[test]
fn gen_spec_errors_name_the_bad_part() {
    let cases = [
        ("stencil27", "expected KIND:ARGUMENTS"),
        ("cube:64", "unknown kind `cube`"),
        ("stencil27:", "expects grid sizes first"),
        ("stencil27:64x64", "has 2 sizes; expected 1 or 3"),
        ("poisson2d:10x10x10", "has 3 sizes; expected 1 or 2"),
        ("stencil27:64xq", "grid size `q`: expected a whole number"),
        ("random:rows=abc,nnz_per_row=3", "`rows=abc`: expected a whole number"),
        ("random:rows=10", "missing `nnz_per_row=`"),
        ("random:rows=10,nnz_per_row=3,colour=red", "unknown argument `colour`"),
        ("random:rows=10,nnz_per_row=3,rows=5", "`rows` given twice"),
        ("random:rows=10,,nnz_per_row=3", "empty argument"),
        ("random:rows=10,nnz_per_row=3,spd=maybe", "`spd=maybe`: expected true or false"),
        ("random:100,nnz_per_row=3", "unexpected `100`"),
        ("road:n=10,20", "`20` should be key=value"),
        ("powerlaw:n=10,alpha=fast", "`alpha=fast`: expected a finite number"),
        ("fem:4x4x4,dof=-1", "`dof=-1`"),
    ];
    for (text, expected) in cases {
        let result = text.parse::<GenSpec>();
        assert_invalid(result, expected);
        if let Err(e) = text.parse::<GenSpec>() {
            assert!(e.to_string().contains(&format!("`{text}`")), "{e} should quote the spec");
        }
    }
    let unknown = "random:rows=10,nnz_per_row=3,colour=red".parse::<GenSpec>().unwrap_err().to_string();
    assert!(unknown.contains("rows, cols, nnz_per_row, spd, seed"), "{unknown}");
    // Errors that only the sizes reveal come from generate().
    let not_square: GenSpec = "random:rows=10,cols=5,nnz_per_row=3,spd=true".parse().unwrap();
    assert_invalid(not_square.generate::<f64>(), "spd=true needs a square matrix");
    assert_invalid(
        "stencil27:2000".parse::<GenSpec>().unwrap().generate::<f64>(),
        "more points than u32 rows",
    );
    assert_invalid(
        "random:rows=100000000,nnz_per_row=50".parse::<GenSpec>().unwrap().generate::<f32>(),
        "generated nonzeros",
    );
}

/// The scale: 10^7..10^8 nonzeros in seconds. Needs about 6 GB and a release build:
/// `cargo test --release --test sparse_formats -- --ignored --nocapture large`.
#[test]
#[ignore = "10^8 nonzeros: run in release, with --ignored"]
fn large_generated_matrices_build_in_seconds() {
    let specs = [
        "random:rows=4194304,nnz_per_row=27",
        "banded:n=4194304,bandwidth=64,nnz_per_row=27",
        "stencil27:160x160x160",
        "fem:80x80x80,dof=3",
        "powerlaw:n=10000000",
        "road:n=20000000",
        "random:rows=1000000,nnz_per_row=27,spd=true",
    ];
    for spec in specs {
        let start = std::time::Instant::now();
        let a: Csr<f64> = spec.parse::<GenSpec>().unwrap().generate().unwrap();
        let seconds = start.elapsed().as_secs_f64();
        println!("{spec}: {} rows, {} nonzeros in {seconds:.2} s", a.rows(), a.nnz());
        assert!(seconds < 30.0, "{spec} took {seconds:.1} s");
    }
}

#[test]
fn irregular_generators_have_their_family_shape() {
    // R-MAT: skewed degrees (the longest row far above the mean), every vertex renumbered.
    let rmat: Csr<f64> = "rmat:scale=14,edge_factor=16".parse::<GenSpec>().unwrap().generate().unwrap();
    assert_valid(&rmat);
    let stats = rmat.row_stats();
    assert_eq!(rmat.rows(), 1 << 14);
    assert!(rmat.nnz() > 12 * (1 << 14) && rmat.nnz() <= 16 * (1 << 14), "duplicates merged: {}", rmat.nnz());
    assert!(stats.max as f64 > 20.0 * stats.mean, "skew: max {} mean {}", stats.max, stats.mean);
    assert!(rmat.row_len(0) < stats.max, "the heaviest vertex is renumbered away from row 0");

    // Web: about half the rows empty, a long tail, columns in range.
    let web: Csr<f64> = generate::web(60_000, 1).unwrap();
    assert_valid(&web);
    let empty = (0..web.rows()).filter(|&r| web.row_len(r) == 0).count();
    assert!((0.45..0.65).contains(&(empty as f64 / web.rows() as f64)), "{empty} empty rows");
    assert!(web.row_stats().max >= 1000, "a long tail: {}", web.row_stats().max);

    // Circuit: short rows plus the dense rows and columns asked for, diagonally dominant.
    let (n, k, len) = (50_000, 4, 3_000);
    let circuit: Csr<f64> = generate::circuit(n, k, len, 1).unwrap();
    assert_valid(&circuit);
    let long_rows = (0..n).filter(|&r| circuit.row_len(r) > len / 2).count();
    assert_eq!(long_rows, k);
    let by_column = circuit.transpose();
    let long_columns = (0..n).filter(|&c| by_column.row_len(c) > len / 2).count();
    assert!(long_columns >= k, "{long_columns} dense columns");
    assert_diagonally_dominant("circuit", &circuit);

    // Delaunay: symmetric, about 6 neighbours a point, dominant (so SPD).
    let mesh: Csr<f64> = generate::delaunay(20_000, 1).unwrap();
    assert_valid(&mesh);
    assert_same(&mesh.transpose(), &mesh, "delaunay is symmetric");
    assert!((6.5..7.0).contains(&mesh.row_stats().mean), "mean row {}", mesh.row_stats().mean);
    for r in 0..mesh.rows() {
        let (cols, values) = mesh.row(r);
        let diagonal = cols.iter().position(|&c| c as usize == r).expect("diagonal");
        assert_eq!(values[diagonal], cols.len() as f64, "1 + degree on the diagonal");
        assert!(values.iter().enumerate().all(|(k, &v)| k == diagonal || v == -1.0));
    }
}

#[test]
fn shuffle_renumbers_rows_and_columns_alike() {
    let a: Csr<f64> = "fem:4x3x2,dof=2".parse::<GenSpec>().unwrap().generate().unwrap();
    let p: Csr<f64> = generate::shuffle(&a, 7).unwrap();
    assert_valid(&p);
    assert_eq!((p.rows(), p.nnz()), (a.rows(), a.nnz()));
    assert_same(&p.transpose(), &p, "a symmetric matrix stays symmetric");
    // The same multiset of rows: the diagonal of each row keeps its value.
    let mut diag_a = a.diagonal();
    let mut diag_p = p.diagonal();
    diag_a.sort_by(f64::total_cmp);
    diag_p.sort_by(f64::total_cmp);
    assert_eq!(diag_a, diag_p);
    assert_ne!(p.col_indices(), a.col_indices(), "renumbered");
    assert_invalid(generate::shuffle(&generate::random_uniform::<f64>(3, 4, 2, 1).unwrap(), 1), "square");
}

#[test]
fn breadth_first_order_brings_a_shuffled_mesh_near_its_diagonal() {
    let a: Csr<f64> = "shuffle:poisson2d:40".parse::<GenSpec>().unwrap().generate().unwrap();
    let order = a.breadth_first_order();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    assert_eq!(sorted, (0..a.rows() as u32).collect::<Vec<_>>(), "a permutation");
    let position = inverse_permutation(&order);
    let (before, after) = (a.mean_diagonal_distance(None), a.mean_diagonal_distance(Some(&position)));
    assert!(before > 0.2 && after * 10.0 < before, "{before} -> {after}");
    // The same distance on the renumbered matrix itself.
    let renumbered = a.permute_symmetric(&order, &position);
    assert!((renumbered.mean_diagonal_distance(None) - after).abs() < 1e-12);
    assert_same(&renumbered.permute_symmetric(&position, &order), &a, "renumbered and back");

    // Two components and a row with no entries: every row once, each component in one piece.
    let b = Csr::new(5, 5, vec![0, 1, 2, 2, 3, 4], vec![4, 3, 1, 0], vec![1.0; 4]).unwrap();
    assert_eq!(b.breadth_first_order(), vec![0, 4, 1, 3, 2]);
    // A star from a leaf: the level after its centre holds the three other leaves.
    let star = Csr::new(5, 5, vec![0, 4, 5, 6, 7, 8], vec![1, 2, 3, 4, 0, 0, 0, 0], vec![1.0; 8]).unwrap();
    assert_eq!(star.breadth_first_order_within(2), None);
    assert_eq!(star.breadth_first_order_within(3), Some(vec![1, 0, 2, 3, 4]));
    // A wide matrix: columns past the last row are not followed.
    let wide = Csr::new(2, 4, vec![0, 2, 3], vec![1, 3, 2], vec![1.0; 3]).unwrap();
    assert_eq!(wide.breadth_first_order(), vec![1, 0]);
    assert_eq!(
        Csr::<f64>::new(0, 0, vec![0], vec![], vec![]).unwrap().breadth_first_order(),
        Vec::<u32>::new()
    );
}
