//! Small matrices with the shapes kernels get wrong, shared by the CPU and GPU tests.

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

use super::random_value;
use crate::Scalar;
use crate::sparse::{Coo, Csr};

/// Named edge cases: no rows, no columns, 1x1, all-empty, a single row or column, empty rows
/// (and long runs of them), one row far longer than a warp, hack or block, tall and wide
/// shapes, sizes that are no multiple of 2, 8 or 32, summed duplicates, a dense block. Values
/// are never zero.
pub fn edge_cases<T: Scalar>() -> Vec<(String, Csr<T>)> {
    let mut rng = StdRng::seed_from_u64(7);
    let mut cases = Vec::new();
    let mut add =
        |name: &str, coo: Coo<T>| cases.push((name.to_string(), coo.to_csr().expect("a valid edge case")));

    add("0x0", Coo::new(0, 0));
    add("0x5 (no rows)", Coo::new(0, 5));
    add("5x0 (no columns)", Coo::new(5, 0));
    add("1x1 empty", Coo::new(1, 1));
    add("1x1", random_coo(&mut rng, 1, 1, 1.0, |_| true));
    add("7x5 all empty", Coo::new(7, 5));
    add("1x100 one row", random_coo(&mut rng, 1, 100, 0.6, |_| true));
    add("45x1 one column", random_coo(&mut rng, 45, 1, 0.7, |_| true));
    add("50x50 every third row empty", random_coo(&mut rng, 50, 50, 0.2, |row| row % 3 != 0));
    add("100x7 tall", random_coo(&mut rng, 100, 7, 0.3, |_| true));
    add("7x100 wide", random_coo(&mut rng, 7, 100, 0.3, |_| true));
    add("37x53 odd sizes", random_coo(&mut rng, 37, 53, 0.1, |_| true));
    add("33x33 dense", random_coo(&mut rng, 33, 33, 1.0, |_| true));

    // One row of 250 entries among rows of at most 3.
    let mut long_row = random_coo(&mut rng, 70, 300, 0.005, |row| row != 33);
    for col in 0..250 {
        long_row.push(33, col, T::from_f64(random_value(&mut rng)));
    }
    add("70x300 one very long row", long_row);

    // One row holding most of the nonzeros (it spans many merge-path tiles), the rest short.
    let mut most_in_one = random_coo(&mut rng, 2000, 3000, 0.0005, |row| row != 1500);
    for col in 0..2900 {
        most_in_one.push(1500, col, T::from_f64(random_value(&mut rng)));
    }
    add("2000x3000 one row holding most nonzeros", most_in_one);

    // A single dense column: every row couples to column 0 (a ground net).
    let mut dense_column = random_coo(&mut rng, 1500, 1500, 0.002, |_| true);
    for row in 0..1500 {
        dense_column.push(row, 0, T::from_f64(random_value(&mut rng)));
    }
    add("1500x1500 one dense column", dense_column);

    // Runs of empty rows before, between and after the others (many merge-path tiles of them).
    add(
        "3000x500 empty runs",
        random_coo(&mut rng, 3000, 500, 0.02, |row| (1000..1700).contains(&row) || row == 2100),
    );

    // Rows of 64 entries whose ends fall on every bound of the nonzero-split chunks (8192
    // nonzeros, whole chunks in f32 and f64), every fifth row empty, empty rows after the last.
    let mut whole_chunks = Coo::new(180, 100);
    for row in (0..160u32).filter(|row| row % 5 != 4) {
        for col in 0..64 {
            whole_chunks.push(row, (row + col) % 100, T::from_f64(random_value(&mut rng)));
        }
    }
    add("180x100 rows ending on chunk bounds", whole_chunks);

    // Each entry given in up to three pieces, out of order: conversion must sum them.
    let mut duplicates = Coo::new(20, 20);
    for entry in 0..60u32 {
        let (row, col) = (entry * 7 % 20, entry * 13 % 20);
        for _ in 0..rng.random_range(1..=3) {
            duplicates.push(row, col, T::from_f64(random_value(&mut rng)));
        }
    }
    add("20x20 duplicates summed", duplicates);
    cases
}

/// Each entry of the rows that `keep_row` keeps is stored with probability `density`.
fn random_coo<T: Scalar>(
    rng: &mut StdRng,
    rows: usize,
    cols: usize,
    density: f64,
    keep_row: impl Fn(usize) -> bool,
) -> Coo<T> {
    let mut coo = Coo::new(rows, cols);
    for row in (0..rows).filter(|&row| keep_row(row)) {
        for col in 0..cols {
            if rng.random_bool(density) {
                coo.push(row as u32, col as u32, T::from_f64(random_value(rng)));
            }
        }
    }
    coo
}
