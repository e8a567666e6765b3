//! CPU SpMV: every kernel, on every format conversion, preserves y = A x, in f32 and f64, on
//! the edge-case corpus and on generated matrices (compared with serial CSR through
//! `verify::compare`); serial CSR itself against an independent f64 product.

mod common;

use rgla::sparse::generate::{self, GenSpec, edge_cases};
use rgla::sparse::{Csr, HllLayout};
use rgla::spmv::cpu;
use rgla::verify::{Tolerance, compare};
use rgla::{Error, Scalar};

/// GPU101's element-wise threshold, reported next to the relative error.
const THRESHOLD: f64 = 1e-3;
const BLOCK_SIZES: [usize; 5] = [1, 2, 3, 8, 32];
const HACK_SIZES: [usize; 4] = [1, 5, 32, 64];
const LAYOUTS: [HllLayout; 2] = [HllLayout::RowMajor, HllLayout::ColumnMajor];
/// Block sizes that would store more slots than this are skipped: on random columns every
/// entry fills a block of its own.
const MAX_BSR_SLOTS: usize = 4_000_000;

const GENERATED: [&str; 10] = [
    "stencil27:12x10x9",
    "poisson2d:40x30",
    "poisson3d:11",
    "random:rows=3000,cols=2000,nnz_per_row=27,seed=2",
    "random:rows=2000,nnz_per_row=15,spd=true",
    "block:block_rows=50,block_cols=40,block_size=8,blocks_per_row=4",
    "banded:n=5000,bandwidth=40,nnz_per_row=27,dominant=true",
    "powerlaw:n=20000,seed=3",
    "road:n=10000",
    "fem:6x5x4,dof=3",
];

fn test_matrices<T: Scalar>() -> Vec<(String, Csr<T>)> {
    let generated =
        GENERATED.iter().map(|spec| (spec.to_string(), spec.parse::<GenSpec>().unwrap().generate().unwrap()));
    edge_cases().into_iter().chain(generated).collect()
}

/// Runs `kernel` into a y poisoned with NaN, so every entry must be written.
fn run<T: Scalar>(rows: usize, kernel: impl FnOnce(&mut [T]) -> rgla::Result<()>) -> Vec<T> {
    let mut y = vec![T::from_f64(f64::NAN); rows];
    kernel(&mut y).unwrap();
    y
}

fn every_kernel_matches_serial_csr<T: Scalar + Tolerance>() {
    for (name, a) in test_matrices::<T>() {
        let x = generate::vector_1_to_5::<T>(a.cols(), 11);
        let reference = run(a.rows(), |y| cpu::csr_serial(&a, &x, y));
        let tolerance = T::tolerance(a.row_stats().max);
        let check = |kernel: String, y: Vec<T>| {
            let what = format!("{name}, {}: {kernel}", T::NAME);
            compare(&y, &reference, THRESHOLD).check(&what, tolerance).unwrap();
        };

        let rayon = run(a.rows(), |y| cpu::csr_rayon(&a, &x, y));
        assert_eq!(
            rayon, reference,
            "{name}: rayon CSR runs the serial per-row routine, so it agrees to the bit"
        );
        check("csr_rayon".into(), rayon);
        for block_size in BLOCK_SIZES.into_iter().filter(|b| a.nnz() * b * b <= MAX_BSR_SLOTS) {
            let bsr = a.to_bsr(block_size).unwrap();
            check(
                format!("bsr_serial, {block_size}x{block_size}"),
                run(a.rows(), |y| cpu::bsr_serial(&bsr, &x, y)),
            );
            check(
                format!("bsr_rayon, {block_size}x{block_size}"),
                run(a.rows(), |y| cpu::bsr_rayon(&bsr, &x, y)),
            );
        }
        for hack_size in HACK_SIZES {
            for layout in LAYOUTS {
                let hll = a.to_hll(hack_size, layout).unwrap();
                let variant = format!("hack {hack_size}, {layout:?}");
                check(format!("hll_serial, {variant}"), run(a.rows(), |y| cpu::hll_serial(&hll, &x, y)));
                check(format!("hll_rayon, {variant}"), run(a.rows(), |y| cpu::hll_rayon(&hll, &x, y)));
            }
        }
    }
}

#[test]
fn every_kernel_matches_serial_csr_f64() {
    every_kernel_matches_serial_csr::<f64>();
}

#[test]
fn every_kernel_matches_serial_csr_f32() {
    every_kernel_matches_serial_csr::<f32>();
}

#[test]
fn serial_csr_matches_hand_computation() {
    // [[1 0 2], [0 3 0]] x [1 2 3] = [7 6]
    let a =
        rgla::sparse::Coo::from_triplets(2, 3, vec![0, 0, 1], vec![0, 2, 1], vec![1.0, 2.0, 3.0]).unwrap();
    let y = run(2, |y| cpu::csr_serial(&a.to_csr().unwrap(), &[1.0, 2.0, 3.0], y));
    assert_eq!(y, [7.0, 6.0]);
}

#[test]
fn serial_csr_matches_an_independent_f64_product() {
    // y accumulated triplet by triplet from the COO form, in f64.
    for (name, a) in test_matrices::<f64>() {
        let x = generate::vector_1_to_5::<f64>(a.cols(), 5);
        let coo = a.to_coo();
        let mut expected = vec![0.0f64; a.rows()];
        for ((&r, &c), &v) in coo.row_indices.iter().zip(&coo.col_indices).zip(&coo.values) {
            expected[r as usize] += v * x[c as usize];
        }
        let y = run(a.rows(), |y| cpu::csr_serial(&a, &x, y));
        compare(&y, &expected, THRESHOLD).check(&name, f64::tolerance(a.row_stats().max)).unwrap();
    }
}

#[test]
fn f32_products_stay_within_f32_accuracy_of_f64() {
    for (name, a) in test_matrices::<f64>() {
        let x = generate::vector_1_to_5::<f64>(a.cols(), 5);
        let y64 = run(a.rows(), |y| cpu::csr_serial(&a, &x, y));
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let y32 = run(a.rows(), |y| cpu::csr_rayon(&a.to_f32(), &x32, y));
        compare(&y32, &y64, THRESHOLD)
            .check(&format!("{name}, f32 against f64"), f32::tolerance(a.row_stats().max))
            .unwrap();
    }
}

#[test]
fn wrong_vector_lengths_are_errors_naming_the_kernel() {
    let a: Csr<f64> = generate::random_uniform(3, 4, 2, 1).unwrap();
    let (bsr, hll) = (a.to_bsr(2).unwrap(), a.to_hll(2, HllLayout::ColumnMajor).unwrap());
    let (x_short, x_ok, mut y_ok, mut y_long) = (vec![1.0; 3], vec![1.0; 4], vec![0.0; 3], vec![0.0; 5]);
    let results = [
        ("csr_serial", cpu::csr_serial(&a, &x_short, &mut y_ok)),
        ("csr_rayon", cpu::csr_rayon(&a, &x_ok, &mut y_long)),
        ("bsr_serial", cpu::bsr_serial(&bsr, &x_short, &mut y_ok)),
        ("bsr_rayon", cpu::bsr_rayon(&bsr, &x_ok, &mut y_long)),
        ("hll_serial", cpu::hll_serial(&hll, &x_short, &mut y_ok)),
        ("hll_rayon", cpu::hll_rayon(&hll, &x_ok, &mut y_long)),
    ];
    for (kernel, result) in results {
        match result {
            Err(Error::InvalidInput(message)) => {
                assert!(message.starts_with(kernel), "{message}");
                assert!(message.contains("the matrix is 3 x 4, so x needs 4 entries and y 3"), "{message}");
            }
            other => panic!("{kernel}: expected InvalidInput, got {other:?}"),
        }
    }
}

#[test]
fn real_matrices_keep_y_equal_a_x_through_every_format() {
    for (name, a) in common::real_matrices::<f64>() {
        let x = generate::vector_1_to_5::<f64>(a.cols(), 3);
        let reference = run(a.rows(), |y| cpu::csr_serial(&a, &x, y));
        let tolerance = f64::tolerance(a.row_stats().max);
        let check = |kernel: &str, y: Vec<f64>| {
            compare(&y, &reference, THRESHOLD).check(&format!("{name}: {kernel}"), tolerance).unwrap()
        };
        check("csr_rayon", run(a.rows(), |y| cpu::csr_rayon(&a, &x, y)));
        for block_size in BLOCK_SIZES {
            let bsr = a.to_bsr(block_size).unwrap();
            assert!(bsr.to_csr() == a.without_zeros(), "{name}: CSR -> BSR {block_size} -> CSR");
            check(&format!("bsr_rayon {block_size}"), run(a.rows(), |y| cpu::bsr_rayon(&bsr, &x, y)));
        }
        for layout in LAYOUTS {
            let hll = a.to_hll(32, layout).unwrap();
            assert!(hll.to_csr() == a.without_zeros(), "{name}: CSR -> HLL {layout:?} -> CSR");
            check(&format!("hll_rayon {layout:?}"), run(a.rows(), |y| cpu::hll_rayon(&hll, &x, y)));
            check(&format!("hll_serial {layout:?}"), run(a.rows(), |y| cpu::hll_serial(&hll, &x, y)));
        }
    }
}
