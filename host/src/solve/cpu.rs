//! CPU solvers: the Milan report's serial elimination (the reference the report's GPU code is
//! checked against) and a blocked LU with partial pivoting (rayon panels, `matrixmultiply`
//! trailing updates), whose factors solve any number of right-hand sides.

use rayon::prelude::*;

use super::{check_system, singular};
use crate::Scalar;
use crate::dense::DenseMatrix;
use crate::error::Result;

/// The Milan report's algorithm: Gaussian elimination with partial pivoting on the augmented
/// n x (n + 1) matrix [A | b], one column at a time (pivot search, row swap, elimination
/// below the diagonal), then back substitution.
pub fn solve_serial<T: Scalar>(a: &DenseMatrix<T>, b: &[T]) -> Result<Vec<T>> {
    let tolerance = check_system(a, b, 1)?;
    let n = a.rows;
    let width = n + 1;
    let mut m = vec![T::ZERO; n * width];
    for (i, row) in m.chunks_mut(width).enumerate() {
        row[..n].copy_from_slice(&a.data[i * n..(i + 1) * n]);
        row[n] = b[i];
    }
    for col in 0..n {
        // Pivoting: the first largest |m[row][col]| over the rows from col down.
        let mut p = col;
        for row in col + 1..n {
            if m[row * width + col].abs() > m[p * width + col].abs() {
                p = row;
            }
        }
        let pivot = m[p * width + col];
        let usable = pivot.abs().into() > tolerance; // false for NaN too
        if !usable {
            return Err(singular(col, tolerance));
        }
        if p != col {
            for j in 0..width {
                m.swap(col * width + j, p * width + j);
            }
        }
        // Elimination: every row below subtracts its multiple of the pivot row.
        let (upper, lower) = m.split_at_mut((col + 1) * width);
        let pivot_row = &upper[col * width..];
        for row in lower.chunks_mut(width) {
            let coef = row[col] / pivot;
            for j in col + 1..width {
                row[j] = row[j] - pivot_row[j] * coef;
            }
        }
    }
    // Back substitution, from the last row up.
    let mut x = vec![T::ZERO; n];
    for i in (0..n).rev() {
        let row = &m[i * width..(i + 1) * width];
        let sum = (i + 1..n).fold(row[n], |sum, j| sum - row[j] * x[j]);
        x[i] = sum / row[i];
    }
    Ok(x)
}

/// P A = L U: L unit lower (below the diagonal of `lu`) and U (on and above it), row-major;
/// row i was swapped with row `pivots[i]` at step i (LAPACK's ipiv, 0-based).
#[derive(Clone, Debug)]
pub struct LuFactors<T> {
    pub n: usize,
    pub lu: Vec<T>,
    pub pivots: Vec<usize>,
}

/// Panel width of the blocked factorisation.
const NB: usize = 64;

/// Factors A (square, finite) by a blocked right-looking LU with partial pivoting; a column
/// without a usable pivot is an error naming it.
pub fn factor<T: Scalar>(a: &DenseMatrix<T>) -> Result<LuFactors<T>> {
    let tolerance = check_system(a, &vec![T::ZERO; a.rows], 1)?;
    let n = a.rows;
    let mut lu = a.data.clone();
    let mut pivots = vec![0; n];
    for k0 in (0..n).step_by(NB) {
        let width = NB.min(n - k0);
        factor_panel(n, &mut lu, k0, width, &mut pivots, tolerance)?;
        let rest = n - k0 - width;
        if rest > 0 {
            solve_block_row(n, &mut lu, k0, width);
            update_trailing(n, &mut lu, k0, width);
        }
    }
    Ok(LuFactors { n, lu, pivots })
}

/// Factors columns k0..k0 + width over rows k0..n. The panel is copied into a column-major
/// buffer first, so the pivot search and the column updates run over contiguous memory; the
/// row swaps are then applied to the rest of the rows (LAPACK's laswp).
fn factor_panel<T: Scalar>(
    n: usize,
    lu: &mut [T],
    k0: usize,
    width: usize,
    pivots: &mut [usize],
    tolerance: f64,
) -> Result<()> {
    let rows = n - k0;
    let mut panel = vec![T::ZERO; rows * width];
    for (r, row) in lu[k0 * n..].chunks(n).enumerate() {
        for (c, &v) in row[k0..k0 + width].iter().enumerate() {
            panel[c * rows + r] = v;
        }
    }
    for c in 0..width {
        let column = &panel[c * rows..(c + 1) * rows];
        let mut p = c;
        for r in c + 1..rows {
            if column[r].abs() > column[p].abs() {
                p = r;
            }
        }
        let pivot = column[p];
        let usable = pivot.abs().into() > tolerance; // false for NaN too
        if !usable {
            return Err(singular(k0 + c, tolerance));
        }
        pivots[k0 + c] = k0 + p;
        if p != c {
            panel.chunks_mut(rows).for_each(|column| column.swap(c, p));
        }
        // Multipliers, then the rank-1 update of the columns to the right.
        let (done, right) = panel.split_at_mut((c + 1) * rows);
        let multipliers = &mut done[c * rows..];
        multipliers[c + 1..].iter_mut().for_each(|l| *l = *l / pivot);
        let multipliers = &multipliers[c + 1..];
        let update = |column: &mut [T]| {
            let u = column[c];
            for (x, &l) in column[c + 1..].iter_mut().zip(multipliers) {
                *x = (T::ZERO - l).mul_add(u, *x);
            }
        };
        if (rows - c) * (width - c) >= 1 << 15 {
            right.par_chunks_mut(rows).for_each(update);
        } else {
            right.chunks_mut(rows).for_each(update);
        }
    }
    // The panel back in place, and its row swaps applied to the columns outside it.
    for (r, row) in lu[k0 * n..].chunks_mut(n).enumerate() {
        for (c, v) in row[k0..k0 + width].iter_mut().enumerate() {
            *v = panel[c * rows + r];
        }
    }
    for c in k0..k0 + width {
        let p = pivots[c];
        if p != c {
            let (upper, lower) = lu.split_at_mut(p * n);
            let (row, other) = (&mut upper[c * n..(c + 1) * n], &mut lower[..n]);
            row[..k0].swap_with_slice(&mut other[..k0]);
            row[k0 + width..].swap_with_slice(&mut other[k0 + width..]);
        }
    }
    Ok(())
}

/// U12 = L11^-1 A12 for the block row right of the panel: row r subtracts its multiples of
/// the rows above it, in parallel over slices of 256 columns.
fn solve_block_row<T: Scalar>(n: usize, lu: &mut [T], k0: usize, width: usize) {
    const COLS: usize = 256;
    let first = k0 + width;
    let rows = &mut lu[k0 * n..(k0 + width) * n];
    // Each task owns the columns first + c0..first + c0 + COLS of the width rows.
    let base = SyncPtr(rows.as_mut_ptr());
    (first..n).step_by(COLS).collect::<Vec<_>>().into_par_iter().for_each(|c0| {
        let c1 = (c0 + COLS).min(n);
        let at = |r: usize, c: usize| base.at(r * n + c);
        for r in 1..width {
            for s in 0..r {
                // SAFETY: row r and row s are distinct rows of the block; this task alone
                // writes columns c0..c1, and the L entries (columns k0..first) are only read.
                unsafe {
                    let l = *at(r, k0 + s);
                    for c in c0..c1 {
                        *at(r, c) = (T::ZERO - l).mul_add(*at(s, c), *at(r, c));
                    }
                }
            }
        }
    });
}

/// A22 -= L21 U12 by `matrixmultiply`'s blocked multithreaded GEMM, in place.
fn update_trailing<T: Scalar>(n: usize, lu: &mut [T], k0: usize, width: usize) {
    let first = k0 + width;
    let rest = n - first;
    let base = lu.as_mut_ptr();
    // SAFETY: A = L21 (rows first.., columns k0..first), B = U12 (rows k0..first, columns
    // first..) and C = A22 (rows and columns first..) are disjoint blocks of `lu`, read and
    // written through raw pointers only; strides are the row length n.
    unsafe {
        let (a, b, c) = (base.add(first * n + k0), base.add(k0 * n + first), base.add(first * n + first));
        let s = n as isize;
        if T::NAME == "f64" {
            // T is f64 here, so the casts are identities.
            matrixmultiply::dgemm(
                rest,
                width,
                rest,
                -1.0,
                a.cast(),
                s,
                1,
                b.cast(),
                s,
                1,
                1.0,
                c.cast(),
                s,
                1,
            );
        } else {
            matrixmultiply::sgemm(
                rest,
                width,
                rest,
                -1.0,
                a.cast(),
                s,
                1,
                b.cast(),
                s,
                1,
                1.0,
                c.cast(),
                s,
                1,
            );
        }
    }
}

/// A pointer that rayon tasks may share; each task writes a disjoint part.
#[derive(Clone, Copy)]
struct SyncPtr<T>(*mut T);
// SAFETY: the users write disjoint elements (documented at each use).
unsafe impl<T> Send for SyncPtr<T> {}
unsafe impl<T> Sync for SyncPtr<T> {}
impl<T> SyncPtr<T> {
    fn at(self, offset: usize) -> *mut T {
        self.0.wrapping_add(offset)
    }
}

impl<T: Scalar> LuFactors<T> {
    /// Solves A X = B for `nrhs` right-hand sides (B n x nrhs, row-major): the row swaps,
    /// forward substitution with L, back substitution with U (LAPACK's getrs).
    pub fn solve(&self, b: &[T], nrhs: usize) -> Vec<T> {
        let n = self.n;
        assert_eq!(b.len(), n * nrhs, "right-hand side of the wrong length");
        let mut x = b.to_vec();
        for (i, &p) in self.pivots.iter().enumerate() {
            if p != i {
                for r in 0..nrhs {
                    x.swap(i * nrhs + r, p * nrhs + r);
                }
            }
        }
        for i in 0..n {
            let row = &self.lu[i * n..(i + 1) * n];
            for r in 0..nrhs {
                let sum =
                    (0..i).fold(x[i * nrhs + r], |sum, s| (T::ZERO - row[s]).mul_add(x[s * nrhs + r], sum));
                x[i * nrhs + r] = sum;
            }
        }
        for i in (0..n).rev() {
            let row = &self.lu[i * n..(i + 1) * n];
            for r in 0..nrhs {
                let sum = (i + 1..n)
                    .fold(x[i * nrhs + r], |sum, s| (T::ZERO - row[s]).mul_add(x[s * nrhs + r], sum));
                x[i * nrhs + r] = sum / row[i];
            }
        }
        x
    }
}

/// Solves A X = B (B n x nrhs, row-major) with the blocked LU.
pub fn solve<T: Scalar>(a: &DenseMatrix<T>, b: &[T], nrhs: usize) -> Result<Vec<T>> {
    check_system(a, b, nrhs)?;
    Ok(factor(a)?.solve(b, nrhs))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The report's example: x + y + z = 5, 2x + 3y + 5z = 8, 4x + 5z = 2 (x, y, z = 3, 4, -2).
    fn report_example() -> (DenseMatrix<f64>, Vec<f64>) {
        (
            DenseMatrix::new(3, 3, vec![1.0, 1.0, 1.0, 2.0, 3.0, 5.0, 4.0, 0.0, 5.0]).unwrap(),
            vec![5.0, 8.0, 2.0],
        )
    }

    #[test]
    fn report_example_solves() {
        let (a, b) = report_example();
        for x in [solve_serial(&a, &b).unwrap(), solve(&a, &b, 1).unwrap()] {
            for (got, want) in x.iter().zip([3.0, 4.0, -2.0]) {
                assert!((got - want).abs() < 1e-14, "{x:?}");
            }
        }
    }

    #[test]
    fn factors_reproduce_the_matrix() {
        let n = 130; // three panels, the last one narrow
        let (a, _, _) = super::super::manufactured_system::<f64>(n, 1, 9).unwrap();
        let f = factor(&a).unwrap();
        // P A: apply the swaps in order; L U: multiply the factors.
        let mut pa = a.data.clone();
        for (i, &p) in f.pivots.iter().enumerate() {
            for j in 0..n {
                pa.swap(i * n + j, p * n + j);
            }
        }
        for i in 0..n {
            for j in 0..n {
                let lu: f64 = (0..=i.min(j))
                    .map(|s| if s == i { f.lu[i * n + j] } else { f.lu[i * n + s] * f.lu[s * n + j] })
                    .sum();
                assert!((lu - pa[i * n + j]).abs() < 1e-12, "({i}, {j}): {lu} vs {}", pa[i * n + j]);
            }
        }
    }
}
