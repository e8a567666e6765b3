//! Matrix generators: seeded, built straight into CSR in parallel (10^8 nonzeros in seconds).
//!
//! Every generator goes through one builder (`build`): rows are cut into fixed chunks, each
//! drawing from its own `StdRng` seeded by (seed, chunk), so a matrix depends on its seed
//! only, never on the thread count. Random values are drawn from [-1.5, -0.5) U [0.5, 1.5): never zero (so
//! BSR/HLL round trips are exact) and never tiny.

mod corpus;
mod irregular;
mod spec;

pub use corpus::edge_cases;
pub use irregular::{circuit, delaunay, rmat, shuffle, web};
pub use spec::GenSpec;

use std::ops::Range;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

use super::{Csr, fits_u32, split_at_bounds, try_filled};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::memory::Footprint;

/// Rows per random stream.
const ROWS_PER_CHUNK: usize = 4096;
/// Stream ids: row lengths and row contents draw from separate streams, so the lengths can be
/// drawn twice (once to size the arrays, once to fill the row pointers).
const LENGTHS: u64 = 1;
const CONTENTS: u64 = 2;

/// The Tor Vergata report's x: integers 1..=5 (`rand() % 5 + 1`), chosen there to keep
/// rounding small.
pub fn vector_1_to_5<T: Scalar>(len: usize, seed: u64) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..len).map(|_| T::from_f64(rng.random_range(1..=5u32) as f64)).collect()
}

/// `rows x cols` with `nnz_per_row` distinct, uniformly random columns in every row (the
/// reports' random matrices).
pub fn random_uniform<T: Scalar>(rows: usize, cols: usize, nnz_per_row: usize, seed: u64) -> Result<Csr<T>> {
    if rows > 0 && nnz_per_row > cols {
        return Err(Error::InvalidInput(format!(
            "random: {nnz_per_row} nonzeros per row exceed the {cols} columns"
        )));
    }
    fits_u32(cols, "random: columns")?;
    build(
        rows,
        cols,
        seed,
        |_, _| nnz_per_row,
        |_, rng, row_cols, row_values| {
            sample_sorted_distinct(rng, 0..cols as u32, row_cols);
            row_values.iter_mut().for_each(|v| *v = T::from_f64(random_value(rng)));
        },
    )
}

/// Symmetric and strictly diagonally dominant with a positive diagonal, hence symmetric
/// positive definite: random strictly-upper entries (about `(nnz_per_row - 1) / 2` per row),
/// mirrored, plus a diagonal of `1 + sum |off-diagonal|`. Rows average about `nnz_per_row`
/// entries, with more in later rows (they collect the mirrored entries).
pub fn random_spd<T: Scalar>(n: usize, nnz_per_row: usize, seed: u64) -> Result<Csr<T>> {
    fits_u32(n, "random spd: rows")?;
    let per_row_upper = nnz_per_row.saturating_sub(1) / 2;
    let upper: Csr<T> = build(
        n,
        n,
        seed,
        |row, _| per_row_upper.min(n - 1 - row),
        |row, rng, row_cols, row_values| {
            sample_sorted_distinct(rng, row as u32 + 1..n as u32, row_cols);
            row_values.iter_mut().for_each(|v| *v = T::from_f64(random_value(rng)));
        },
    )?;
    let lower = upper.transpose();
    build(
        n,
        n,
        seed,
        |row, _| lower.row_len(row) + 1 + upper.row_len(row),
        |row, _, row_cols, row_values| {
            let (lower_cols, lower_values) = lower.row(row);
            let (upper_cols, upper_values) = upper.row(row);
            let diagonal = lower_cols.len();
            row_cols[..diagonal].copy_from_slice(lower_cols);
            row_values[..diagonal].copy_from_slice(lower_values);
            row_cols[diagonal + 1..].copy_from_slice(upper_cols);
            row_values[diagonal + 1..].copy_from_slice(upper_values);
            row_cols[diagonal] = row as u32;
            row_values[diagonal] = dominant_diagonal(row_values, diagonal);
        },
    )
}

/// Dense `block_size x block_size` blocks at random block positions, `blocks_per_row`
/// distinct ones per block row (the Uruguay report's block-sparse matrices, 8x8 there).
pub fn block_random<T: Scalar>(
    block_rows: usize,
    block_cols: usize,
    block_size: usize,
    blocks_per_row: usize,
    seed: u64,
) -> Result<Csr<T>> {
    let too_big = || Error::InvalidInput("block random: the matrix size overflows".into());
    let rows = block_rows.checked_mul(block_size).ok_or_else(too_big)?;
    let cols = block_cols.checked_mul(block_size).ok_or_else(too_big)?;
    fits_u32(rows, "block random: rows")?;
    fits_u32(cols, "block random: columns")?;
    let pattern: Csr<f32> = random_uniform(block_rows, block_cols, blocks_per_row, mix(seed))
        .map_err(|e| Error::InvalidInput(format!("block random: {e}")))?;
    let b = block_size;
    build(
        rows,
        cols,
        seed,
        |row, _| pattern.row_len(row / b) * b,
        |row, rng, row_cols, row_values| {
            let block_cols_here = pattern.row(row / b).0;
            for (block_slots, &bc) in row_cols.chunks_mut(b).zip(block_cols_here) {
                for (c, slot) in block_slots.iter_mut().enumerate() {
                    *slot = bc * b as u32 + c as u32;
                }
            }
            row_values.iter_mut().for_each(|v| *v = T::from_f64(random_value(rng)));
        },
    )
}

/// The HPCG matrix: 27-point stencil on an `nx x ny x nz` grid, 26 on the diagonal and -1 for
/// each neighbour.
pub fn stencil27<T: Scalar>(nx: usize, ny: usize, nz: usize) -> Result<Csr<T>> {
    let offsets: Vec<[i64; 3]> =
        (-1..=1).flat_map(|dz| (-1..=1).flat_map(move |dy| (-1..=1).map(move |dx| [dx, dy, dz]))).collect();
    grid_stencil([nx, ny, nz], &offsets, 26.0, -1.0)
}

/// 2D Poisson, 5-point stencil on an `nx x ny` grid (4 on the diagonal, -1 neighbours).
pub fn poisson2d<T: Scalar>(nx: usize, ny: usize) -> Result<Csr<T>> {
    grid_stencil([nx, ny, 1], &[[0, -1, 0], [-1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0]], 4.0, -1.0)
}

/// 3D Poisson, 7-point stencil on an `nx x ny x nz` grid (6 on the diagonal, -1 neighbours).
pub fn poisson3d<T: Scalar>(nx: usize, ny: usize, nz: usize) -> Result<Csr<T>> {
    let offsets = [[0, 0, -1], [0, -1, 0], [-1, 0, 0], [0, 0, 0], [1, 0, 0], [0, 1, 0], [0, 0, 1]];
    grid_stencil([nx, ny, nz], &offsets, 6.0, -1.0)
}

/// `n x n`, each row's entries within `bandwidth` of the diagonal: the whole band, or
/// `nnz_per_row` random columns of it. `dominant` puts the diagonal in every row with value
/// `1 + sum |off-diagonal|`.
pub fn banded<T: Scalar>(
    n: usize,
    bandwidth: usize,
    nnz_per_row: Option<usize>,
    dominant: bool,
    seed: u64,
) -> Result<Csr<T>> {
    let per_row = nnz_per_row.unwrap_or(usize::MAX);
    band_rows(n, bandwidth, dominant, seed, |window, _| per_row.min(window))
}

/// Road-network-like: very short rows (2 to 4 entries: the diagonal and 1 to 3 random
/// neighbours within `window` of it), diagonally dominant.
pub fn road<T: Scalar>(n: usize, window: usize, seed: u64) -> Result<Csr<T>> {
    band_rows(n, window, true, seed, |window, rng| rng.random_range(2..=4usize).min(window))
}

/// `n x n` with power-law (Pareto) row lengths, `min_nnz / u^(1/alpha)` for u uniform in
/// (0, 1], capped at `max_nnz` and `n`: most rows hold a handful, a few hold thousands
/// (alpha 1.5, min 2, n = 10^6: a mean near 5.6, longest rows of 10^4 to 10^5). Columns are
/// uniformly random: a load-balance stress (and a worst case for HLL and BSR padding).
pub fn power_law<T: Scalar>(
    n: usize,
    min_nnz: usize,
    max_nnz: usize,
    alpha: f64,
    seed: u64,
) -> Result<Csr<T>> {
    if !(alpha > 0.0 && alpha.is_finite()) {
        return Err(Error::InvalidInput(format!("power law: alpha must be positive, got {alpha}")));
    }
    fits_u32(n, "power law: rows")?;
    let cap = max_nnz.min(n);
    let row_len = |_row: usize, rng: &mut StdRng| {
        let u = 1.0 - rng.random::<f64>(); // (0, 1]
        ((min_nnz as f64 * u.powf(-1.0 / alpha)) as usize).min(cap)
    };
    build(n, n, seed, row_len, |_, rng, row_cols, row_values| {
        sample_sorted_distinct(rng, 0..n as u32, row_cols);
        row_values.iter_mut().for_each(|v| *v = T::from_f64(random_value(rng)));
    })
}

/// FEM-like: `dof x dof` dense blocks coupling each node of an `nx x ny x nz` grid with its 27
/// neighbours (like trilinear hexahedral elements with `dof` unknowns per node: 3 for
/// elasticity). Symmetric, diagonally dominant, positive definite.
pub fn fem<T: Scalar>(nx: usize, ny: usize, nz: usize, dof: usize, seed: u64) -> Result<Csr<T>> {
    if dof == 0 {
        return Err(Error::InvalidInput("fem: dof must be at least 1".into()));
    }
    let grid = Grid::new([nx, ny, nz])?;
    let rows = grid.points.checked_mul(dof).filter(|&rows| rows <= u32::MAX as usize);
    let rows = rows.ok_or_else(|| {
        Error::InvalidInput(format!("fem: {nx}x{ny}x{nz} nodes x {dof} dof exceed u32 rows"))
    })?;
    let offsets: Vec<[i64; 3]> =
        (-1..=1).flat_map(|dz| (-1..=1).flat_map(move |dy| (-1..=1).map(move |dx| [dx, dy, dz]))).collect();
    let row_len = |row: usize, _: &mut StdRng| grid.neighbours(row / dof, &offsets).count() * dof;
    build(rows, rows, seed, row_len, |row, _, row_cols, row_values| {
        let columns =
            grid.neighbours(row / dof, &offsets).flat_map(|node| (0..dof).map(move |d| node * dof + d));
        let mut diagonal = 0;
        for (k, col) in columns.enumerate() {
            row_cols[k] = col as u32;
            row_values[k] = T::from_f64(symmetric_value(seed, row, col));
            if col == row {
                diagonal = k;
            }
        }
        row_values[diagonal] = dominant_diagonal(row_values, diagonal);
    })
}

/// Builds a `rows x cols` CSR matrix in parallel: `row_len(row, rng)` says how many entries
/// row `row` has and `fill_row(row, rng, cols, values)` writes them (columns strictly
/// increasing). The total is checked against `u32::MAX` before anything is allocated.
fn build<T: Scalar>(
    rows: usize,
    cols: usize,
    seed: u64,
    row_len: impl Fn(usize, &mut StdRng) -> usize + Sync,
    fill_row: impl Fn(usize, &mut StdRng, &mut [u32], &mut [T]) + Sync,
) -> Result<Csr<T>> {
    let row_len = &row_len;
    fits_u32(rows, "generated rows")?;
    fits_u32(cols, "generated columns")?;
    let chunks = rows.div_ceil(ROWS_PER_CHUNK);
    let chunk_rows = |chunk: usize| chunk * ROWS_PER_CHUNK..((chunk + 1) * ROWS_PER_CHUNK).min(rows);
    let chunk_lengths = |chunk: usize| {
        let mut rng = chunk_rng(seed, LENGTHS, chunk);
        chunk_rows(chunk).map(move |row| row_len(row, &mut rng))
    };

    // Sizes first: entries per chunk, prefix-summed into where each chunk starts.
    // (Saturating: absurd sizes must reach the u32 check, not overflow.)
    let chunk_nnz: Vec<usize> = (0..chunks)
        .into_par_iter()
        .map(|chunk| chunk_lengths(chunk).fold(0, usize::saturating_add))
        .collect();
    let mut nnz_bounds = vec![0usize];
    for &nnz in &chunk_nnz {
        nnz_bounds.push(nnz_bounds.last().unwrap().saturating_add(nnz));
    }
    let nnz = fits_u32(*nnz_bounds.last().unwrap(), "generated nonzeros")? as usize;
    Footprint::new(format!("a generated {rows} x {cols} matrix with {nnz} nonzeros"))
        .host::<u32>((rows + 1 + nnz) as u128)
        .host::<T>(nnz as u128)
        .check_host()?;

    let mut row_ptr = try_filled(rows + 1, 0u32, "generated row pointers")?;
    let row_bounds: Vec<usize> = (0..=chunks).map(|chunk| (chunk * ROWS_PER_CHUNK).min(rows)).collect();
    split_at_bounds(&mut row_ptr[1..], &row_bounds).into_par_iter().enumerate().for_each(|(chunk, ends)| {
        let mut end = nnz_bounds[chunk];
        for (slot, len) in ends.iter_mut().zip(chunk_lengths(chunk)) {
            end += len;
            *slot = end as u32;
        }
    });

    let mut col_indices = try_filled(nnz, 0u32, "generated column indices")?;
    let mut values = try_filled(nnz, T::ZERO, "generated values")?;
    let col_pieces = split_at_bounds(&mut col_indices, &nnz_bounds);
    let value_pieces = split_at_bounds(&mut values, &nnz_bounds);
    col_pieces.into_par_iter().zip(value_pieces).enumerate().for_each(
        |(chunk, (chunk_cols, chunk_values))| {
            let mut rng = chunk_rng(seed, CONTENTS, chunk);
            let base = nnz_bounds[chunk];
            for row in chunk_rows(chunk) {
                let range = row_ptr[row] as usize - base..row_ptr[row + 1] as usize - base;
                fill_row(row, &mut rng, &mut chunk_cols[range.clone()], &mut chunk_values[range]);
            }
        },
    );
    Ok(Csr::from_parts_unchecked(rows, cols, row_ptr, col_indices, values))
}

/// Rows of an `n x n` band of half-width `bandwidth`: `row_len(window, rng)` (at most `window`,
/// the band's width in that row) random columns of the band, the diagonal among them when
/// `dominant` (then with value `1 + sum |off-diagonal|`).
fn band_rows<T: Scalar>(
    n: usize,
    bandwidth: usize,
    dominant: bool,
    seed: u64,
    row_len: impl Fn(usize, &mut StdRng) -> usize + Sync,
) -> Result<Csr<T>> {
    fits_u32(n, "banded: rows")?;
    let window =
        |row: usize| row.saturating_sub(bandwidth)..(row.saturating_add(bandwidth).saturating_add(1)).min(n);
    build(
        n,
        n,
        seed,
        |row, rng| row_len(window(row).len(), rng).max(dominant as usize),
        |row, rng, row_cols, row_values| {
            let band = window(row);
            if !dominant {
                sample_sorted_distinct(rng, band.start as u32..band.end as u32, row_cols);
                row_values.iter_mut().for_each(|v| *v = T::from_f64(random_value(rng)));
                return;
            }
            // Off-diagonal columns drawn from the band without the diagonal, then shifted past it.
            let off_diagonal = row_cols.len() - 1;
            sample_sorted_distinct(
                rng,
                band.start as u32..band.end as u32 - 1,
                &mut row_cols[..off_diagonal],
            );
            let diagonal = row_cols[..off_diagonal].partition_point(|&c| (c as usize) < row);
            row_cols[diagonal..].rotate_right(1);
            row_cols[diagonal] = row as u32;
            for c in &mut row_cols[diagonal + 1..] {
                *c += 1;
            }
            row_values.iter_mut().for_each(|v| *v = T::from_f64(random_value(rng)));
            row_values[diagonal] = dominant_diagonal(row_values, diagonal);
        },
    )
}

/// A box of grid points, numbered x fastest: point (x, y, z) is row `x + nx * (y + ny * z)`.
struct Grid {
    dims: [usize; 3],
    points: usize,
}

impl Grid {
    fn new(dims: [usize; 3]) -> Result<Grid> {
        let points =
            dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d)).filter(|&p| p <= u32::MAX as usize);
        let points = points.ok_or_else(|| {
            Error::InvalidInput(format!(
                "grid {}x{}x{} has more points than u32 rows",
                dims[0], dims[1], dims[2]
            ))
        })?;
        Ok(Grid { dims, points })
    }

    /// Neighbours of `point` at the given offsets that fall inside the grid, in the order of
    /// `offsets` (increasing when `offsets` is sorted by z, then y, then x).
    fn neighbours<'a>(&self, point: usize, offsets: &'a [[i64; 3]]) -> impl Iterator<Item = usize> + 'a {
        let [nx, ny, nz] = self.dims.map(|d| d as i64);
        let (x, y, z) = ((point as i64) % nx, (point as i64 / nx) % ny, point as i64 / (nx * ny));
        offsets.iter().filter_map(move |&[dx, dy, dz]| {
            let (x, y, z) = (x + dx, y + dy, z + dz);
            let inside = (0..nx).contains(&x) && (0..ny).contains(&y) && (0..nz).contains(&z);
            inside.then(|| (x + nx * (y + ny * z)) as usize)
        })
    }
}

/// A constant stencil on a grid: `center` on the diagonal, `neighbour` elsewhere.
fn grid_stencil<T: Scalar>(
    dims: [usize; 3],
    offsets: &[[i64; 3]],
    center: f64,
    neighbour: f64,
) -> Result<Csr<T>> {
    let grid = Grid::new(dims)?;
    let row_len = |row: usize, _: &mut StdRng| grid.neighbours(row, offsets).count();
    build(grid.points, grid.points, 0, row_len, |row, _, row_cols, row_values| {
        for ((slot, value), col) in
            row_cols.iter_mut().zip(row_values.iter_mut()).zip(grid.neighbours(row, offsets))
        {
            *slot = col as u32;
            *value = T::from_f64(if col == row { center } else { neighbour });
        }
    })
}

/// Fills `out` with distinct values of `range`, sorted. Needs `out.len() <= range.len()`.
fn sample_sorted_distinct(rng: &mut StdRng, range: Range<u32>, out: &mut [u32]) {
    let (wanted, available) = (out.len(), range.len());
    debug_assert!(wanted <= available);
    if wanted * 2 >= available {
        // Dense: selection sampling (Knuth's algorithm S) walks the range once, in order.
        let mut chosen = 0;
        for (seen, value) in range.enumerate() {
            if chosen == wanted {
                break;
            }
            if rng.random_range(0..available - seen) < wanted - chosen {
                out[chosen] = value;
                chosen += 1;
            }
        }
        return;
    }
    // Sparse: draw, sort, drop duplicates, draw again for the slots they freed.
    let mut distinct = 0;
    while distinct < wanted {
        out[distinct..].iter_mut().for_each(|c| *c = rng.random_range(range.clone()));
        out.sort_unstable();
        distinct = 1;
        for i in 1..wanted {
            if out[i] != out[distinct - 1] {
                out[distinct] = out[i];
                distinct += 1;
            }
        }
    }
}

/// Uniform in [-1.5, -0.5) U [0.5, 1.5).
fn random_value(rng: &mut StdRng) -> f64 {
    let u: f64 = rng.random_range(-1.0..1.0);
    if u < 0.0 { u - 0.5 } else { u + 0.5 }
}

/// A value in [-1.5, -0.5) U [0.5, 1.5) that depends on the unordered pair (i, j) only, so that
/// matrices built row by row come out symmetric.
fn symmetric_value(seed: u64, i: usize, j: usize) -> f64 {
    let (lo, hi) = (i.min(j) as u64, i.max(j) as u64);
    let bits = mix(seed ^ mix(lo ^ mix(hi)));
    let u = (bits >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
    if u < 0.0 { u - 0.5 } else { u + 0.5 }
}

/// `1 + sum |values[k]|` over the row's entries other than `diagonal`.
fn dominant_diagonal<T: Scalar>(row_values: &[T], diagonal: usize) -> T {
    let off_diagonal: f64 =
        row_values.iter().enumerate().filter(|&(k, _)| k != diagonal).map(|(_, &v)| v.abs().into()).sum();
    T::from_f64(1.0 + off_diagonal)
}

fn chunk_rng(seed: u64, stream: u64, chunk: usize) -> StdRng {
    StdRng::seed_from_u64(mix(seed ^ mix(stream ^ mix(chunk as u64))))
}

/// SplitMix64's finaliser: nearby inputs give unrelated outputs.
fn mix(mut z: u64) -> u64 {
    z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
