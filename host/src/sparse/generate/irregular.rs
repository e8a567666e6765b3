//! The irregular families users bring: R-MAT graphs, web-like graphs, circuit-like matrices,
//! 2-D Delaunay meshes, and any matrix symmetrically renumbered at random. Seeded and parallel
//! like the other generators (row contents are pure functions of the seed and the row, or
//! edges sorted in parallel), and checked against the host's memory before they allocate.

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{RngExt, SeedableRng};
use rayon::prelude::*;

use super::{build, dominant_diagonal, mix, random_value, sample_sorted_distinct};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::memory::Footprint;
use crate::sparse::{Csr, fits_u32, inverse_permutation};

/// Graph500's recursive matrix: `2^scale` vertices, `edge_factor * 2^scale` edges, each edge
/// placed by `scale` choices of a quadrant with probabilities `a`, `b`, `c` and `1 - a - b - c`
/// (Graph500: 0.57, 0.19, 0.19), then every vertex renumbered by one random permutation (so
/// the skew is not sorted into the first rows). Duplicate edges are merged; values random.
pub fn rmat<T: Scalar>(scale: u32, edge_factor: usize, a: f64, b: f64, c: f64, seed: u64) -> Result<Csr<T>> {
    let d = 1.0 - a - b - c;
    if !(a >= 0.0 && b >= 0.0 && c >= 0.0 && d >= 0.0) {
        return Err(Error::InvalidInput(format!(
            "rmat: a, b, c must be probabilities with a + b + c <= 1, got {a}, {b}, {c}"
        )));
    }
    if scale > 31 {
        return Err(Error::InvalidInput(format!("rmat: scale {scale} exceeds u32 rows (at most 31)")));
    }
    let n = 1usize << scale;
    let edges = n.checked_mul(edge_factor).filter(|&m| m <= u32::MAX as usize);
    let edges = edges.ok_or_else(|| {
        Error::InvalidInput(format!("rmat: {edge_factor} x 2^{scale} edges exceed u32 nonzeros"))
    })?;
    Footprint::new(format!("rmat:scale={scale},edge_factor={edge_factor}"))
        .host::<u64>(edges as u128)
        .host::<u32>(n as u128 + edges as u128)
        .host::<T>(edges as u128)
        .check_host()?;
    let perm = permutation(n, mix(seed ^ 0x7e57));
    // Thresholds of the quadrant choice in 1/65536ths: one 64-bit draw serves four levels.
    let cut = |p: f64| (p * 65536.0).round() as u32;
    let (ta, tb, tc) = (cut(a), cut(a + b), cut(a + b + c));
    const EDGES_PER_CHUNK: usize = 1 << 16;
    let mut keys: Vec<u64> = (0..edges.div_ceil(EDGES_PER_CHUNK))
        .into_par_iter()
        .flat_map_iter(|chunk| {
            let mut rng = StdRng::seed_from_u64(mix(seed ^ mix(chunk as u64)));
            let count = EDGES_PER_CHUNK.min(edges - chunk * EDGES_PER_CHUNK);
            let perm = &perm;
            (0..count).map(move |_| {
                let (mut row, mut col) = (0u32, 0u32);
                let mut bits = 0u64;
                for level in 0..scale {
                    if level % 4 == 0 {
                        bits = rng.random();
                    }
                    let r = (bits >> (16 * (level % 4))) as u32 & 0xffff;
                    let (down, right) = if r < ta {
                        (0, 0)
                    } else if r < tb {
                        (0, 1)
                    } else if r < tc {
                        (1, 0)
                    } else {
                        (1, 1)
                    };
                    row = row << 1 | down;
                    col = col << 1 | right;
                }
                (perm[row as usize] as u64) << 32 | perm[col as usize] as u64
            })
        })
        .collect();
    keys.par_sort_unstable();
    keys.dedup();
    from_sorted_keys(n, n, &keys, seed, |_, _, _, rng| T::from_f64(random_value(rng)))
}

/// Web-graph-like: out-degrees with a Zipf tail (about half the rows empty, most of the rest
/// short, a few up to 20 000 entries) and columns mixing local links (near the row) with links
/// to popular pages (a skewed choice among a few, scattered over the columns). Values random.
pub fn web<T: Scalar>(n: usize, seed: u64) -> Result<Csr<T>> {
    fits_u32(n, "web: rows")?;
    let popular = permutation(n, mix(seed ^ 0x3eb));
    let row = |row: usize| -> Vec<u32> {
        let mut rng = StdRng::seed_from_u64(mix(seed ^ mix(row as u64)));
        if rng.random::<f64>() < 0.55 {
            return Vec::new();
        }
        let u = 1.0 - rng.random::<f64>(); // (0, 1]
        let degree = ((2.0 * u.powf(-1.0 / 1.2)) as usize).clamp(1, 20_000.min(n));
        let mut cols: Vec<u32> = (0..degree)
            .map(|_| {
                if rng.random::<bool>() {
                    // A local link: an offset with a long tail, either side of the row.
                    let offset = 1 + (rng.random::<f64>().powi(3) * 2000.0) as i64;
                    let offset = if rng.random::<bool>() { offset } else { -offset };
                    (row as i64 + offset).clamp(0, n as i64 - 1) as u32
                } else {
                    // A popular page: a power-law choice of rank, scattered by a permutation.
                    popular[(n as f64 * rng.random::<f64>().powi(4)) as usize]
                }
            })
            .collect();
        cols.sort_unstable();
        cols.dedup();
        cols
    };
    from_rows(n, seed, row, false)
}

/// Circuit-like: each row its diagonal and 1 to 3 entries within 8 of it (a netlist's local
/// couplings), plus `dense_rows` rows of `dense_len` random columns and `dense_rows` columns
/// with entries in `dense_len` random rows (power and ground nets). Diagonally dominant.
pub fn circuit<T: Scalar>(n: usize, dense_rows: usize, dense_len: usize, seed: u64) -> Result<Csr<T>> {
    fits_u32(n, "circuit: rows")?;
    if dense_rows > n || dense_len > n {
        return Err(Error::InvalidInput(format!(
            "circuit: {dense_rows} dense rows of {dense_len} entries do not fit {n} rows"
        )));
    }
    let mut rng = StdRng::seed_from_u64(mix(seed ^ 0xc1c));
    let mut sample = |count: usize| {
        let mut out = vec![0u32; count];
        sample_sorted_distinct(&mut rng, 0..n as u32, &mut out);
        out
    };
    let (dense_row_set, dense_cols) = (sample(dense_rows), sample(dense_rows));
    // (row, column) of every dense column's entries, sorted by row.
    let mut column_entries: Vec<(u32, u32)> =
        dense_cols.iter().flat_map(|&c| sample(dense_len).into_iter().map(move |r| (r, c))).collect();
    column_entries.sort_unstable();
    let row = |row: usize| -> Vec<u32> {
        let mut rng = StdRng::seed_from_u64(mix(seed ^ mix(row as u64)));
        let mut cols = vec![row as u32];
        for _ in 0..rng.random_range(1..=3) {
            let offset = rng.random_range(1..=8i64) * if rng.random::<bool>() { 1 } else { -1 };
            cols.push((row as i64 + offset).clamp(0, n as i64 - 1) as u32);
        }
        if dense_row_set.binary_search(&(row as u32)).is_ok() {
            let mut dense = vec![0u32; dense_len];
            sample_sorted_distinct(&mut rng, 0..n as u32, &mut dense);
            cols.extend(dense);
        }
        let first = column_entries.partition_point(|&(r, _)| (r as usize) < row);
        cols.extend(column_entries[first..].iter().take_while(|&&(r, _)| r as usize == row).map(|&(_, c)| c));
        cols.sort_unstable();
        cols.dedup();
        cols
    };
    from_rows(n, seed, row, true)
}

/// The graph Laplacian of the Delaunay triangulation of `n` uniformly random points of the
/// unit square, plus the identity (so symmetric positive definite: -1 for each mesh edge,
/// 1 + degree on the diagonal). Points are numbered along a Z-order curve, as a mesher's
/// output has some locality; `shuffle:delaunay:..` removes it.
pub fn delaunay<T: Scalar>(n: usize, seed: u64) -> Result<Csr<T>> {
    fits_u32(n, "delaunay: points")?;
    // About 6 neighbours per point: 7 entries a row, edges gathered as sorted keys first.
    Footprint::new(format!("delaunay:n={n}"))
        .host::<u64>(14 * n as u128)
        .host::<f64>(8 * n as u128)
        .check_host()?;
    let mut rng = StdRng::seed_from_u64(mix(seed ^ 0xde1));
    let mut points: Vec<(u64, delaunator::Point)> = (0..n)
        .map(|_| {
            let (x, y): (f64, f64) = (rng.random(), rng.random());
            (z_order(x, y), delaunator::Point { x, y })
        })
        .collect();
    points.par_sort_unstable_by_key(|&(z, _)| z);
    let points: Vec<delaunator::Point> = points.into_iter().map(|(_, p)| p).collect();
    let mesh = delaunator::triangulate(&points);
    let mut keys: Vec<u64> = mesh
        .triangles
        .par_chunks(3)
        .flat_map_iter(|t| {
            let (a, b, c) = (t[0] as u64, t[1] as u64, t[2] as u64);
            [a << 32 | b, b << 32 | a, b << 32 | c, c << 32 | b, c << 32 | a, a << 32 | c]
        })
        .chain((0..n as u64).into_par_iter().map(|i| i << 32 | i))
        .collect();
    keys.par_sort_unstable();
    keys.dedup();
    // The row's length is 1 + its degree: the diagonal.
    from_sorted_keys(n, n, &keys, seed, |row, col, len, _| {
        T::from_f64(if row == col as usize { len as f64 } else { -1.0 })
    })
}

/// P A P^T for a random permutation P (seeded): the same matrix with its rows and columns
/// renumbered alike, as a mesh or graph often arrives in an order without locality.
pub fn shuffle<T: Scalar>(a: &Csr<T>, seed: u64) -> Result<Csr<T>> {
    if a.rows() != a.cols() {
        return Err(Error::InvalidInput(format!(
            "shuffle: a symmetric renumbering needs a square matrix, got {} x {}",
            a.rows(),
            a.cols()
        )));
    }
    let new_of_old = permutation(a.rows(), mix(seed ^ 0x5ff));
    Ok(a.permute_symmetric(&inverse_permutation(&new_of_old), &new_of_old))
}

/// An `n x n` matrix whose row r holds the columns `row(r)` (sorted, distinct; called twice
/// per row, so a pure function of r), random values, and with `dominant` a diagonal of
/// `1 + sum |off-diagonal|` (every row must then hold its diagonal).
fn from_rows<T: Scalar>(
    n: usize,
    seed: u64,
    row: impl Fn(usize) -> Vec<u32> + Sync,
    dominant: bool,
) -> Result<Csr<T>> {
    build(
        n,
        n,
        seed,
        |r, _| row(r).len(),
        |r, rng, row_cols, row_values| {
            row_cols.copy_from_slice(&row(r));
            row_values.iter_mut().for_each(|v| *v = T::from_f64(random_value(rng)));
            if dominant {
                let diagonal = row_cols.binary_search(&(r as u32)).expect("every row holds its diagonal");
                row_values[diagonal] = dominant_diagonal(row_values, diagonal);
            }
        },
    )
}

/// A CSR matrix from `keys` (`row << 32 | col`, sorted, distinct), values from
/// `value(row, col, row_len, rng)`.
fn from_sorted_keys<T: Scalar>(
    rows: usize,
    cols: usize,
    keys: &[u64],
    seed: u64,
    value: impl Fn(usize, u32, usize, &mut StdRng) -> T + Sync,
) -> Result<Csr<T>> {
    let mut row_start = vec![0usize; rows + 1];
    for &key in keys {
        row_start[(key >> 32) as usize + 1] += 1;
    }
    for row in 0..rows {
        row_start[row + 1] += row_start[row];
    }
    build(
        rows,
        cols,
        seed,
        |row, _| row_start[row + 1] - row_start[row],
        |row, rng, row_cols, row_values| {
            let row_keys = &keys[row_start[row]..row_start[row + 1]];
            for ((slot, v), &key) in row_cols.iter_mut().zip(row_values.iter_mut()).zip(row_keys) {
                *slot = key as u32;
                *v = value(row, key as u32, row_keys.len(), rng);
            }
        },
    )
}

/// A random permutation of 0..n.
fn permutation(n: usize, seed: u64) -> Vec<u32> {
    let mut perm: Vec<u32> = (0..n as u32).collect();
    perm.shuffle(&mut StdRng::seed_from_u64(seed));
    perm
}

/// The Z-order (Morton) key of a point of the unit square, 32 bits a coordinate.
fn z_order(x: f64, y: f64) -> u64 {
    let spread = |v: f64| {
        let mut v = (v * u32::MAX as f64) as u64;
        v = (v | v << 16) & 0x0000_ffff_0000_ffff;
        v = (v | v << 8) & 0x00ff_00ff_00ff_00ff;
        v = (v | v << 4) & 0x0f0f_0f0f_0f0f_0f0f;
        v = (v | v << 2) & 0x3333_3333_3333_3333;
        (v | v << 1) & 0x5555_5555_5555_5555
    };
    spread(x) | spread(y) << 1
}
