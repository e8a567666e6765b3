//! CPU references: the sequential symmetric Gauss-Seidel sweep, general as in HPCG
//! (`ComputeSYMGS_ref`: A, r, x) and the GPU101 report's variant (the right-hand side of each
//! sweep is x as it stands when that sweep starts), and the input checks every smoother makes.
//!
//! Row i of a sweep: `sum = r[i]; sum -= a_ij x[j] for every stored j (the diagonal too, with
//! the old x[i]); sum += a_ii x[i]; x[i] = sum / a_ii`, with the newest x, products and
//! subtractions rounded separately, in column order.

use crate::Scalar;
use crate::error::{Error, Result};
use crate::sparse::Csr;

/// The direction of a sweep: rows 0..n or n-1..0.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    Forward,
    Backward,
}

/// Checks that SymGS can run on `a` (square, every diagonal entry stored and nonzero, every
/// value finite) and returns its diagonal. The error names the first bad row or value.
pub fn checked_diagonal<T: Scalar>(a: &Csr<T>) -> Result<Vec<T>> {
    if a.rows() != a.cols() {
        return Err(Error::InvalidInput(format!(
            "SymGS needs a square matrix, got {} x {}",
            a.rows(),
            a.cols()
        )));
    }
    let mut diagonal = Vec::with_capacity(a.rows());
    for row in 0..a.rows() {
        let (cols, values) = a.row(row);
        if let Some((&col, &value)) = cols.iter().zip(values).find(|&(_, v)| !v.is_finite()) {
            return Err(Error::InvalidInput(format!(
                "SymGS: the value at row {row}, column {col} (counting from 0) is {value:?}, not a finite number"
            )));
        }
        let d = match cols.binary_search(&(row as u32)) {
            Ok(k) => values[k],
            Err(_) => {
                return Err(Error::InvalidInput(format!(
                    "SymGS: row {row} (counting from 0) has no diagonal entry (every row needs a nonzero a_ii)"
                )));
            }
        };
        if d == T::ZERO {
            return Err(Error::InvalidInput(format!(
                "SymGS: the diagonal entry of row {row} (counting from 0) is zero"
            )));
        }
        diagonal.push(d);
    }
    Ok(diagonal)
}

/// Checks that `v` (named `name` in the error) has `len` values, all finite.
pub fn check_vector<T: Scalar>(name: &str, v: &[T], len: usize) -> Result<()> {
    if v.len() != len {
        return Err(Error::InvalidInput(format!(
            "SymGS: {name} has {} values, the matrix has {len} rows",
            v.len()
        )));
    }
    match v.iter().position(|x| !x.is_finite()) {
        Some(i) => Err(Error::InvalidInput(format!("SymGS: {name}[{i}] is {:?}, not a finite number", v[i]))),
        None => Ok(()),
    }
}

/// The sequential smoother on one matrix, checked once.
pub struct CpuSymgs<'a, T> {
    a: &'a Csr<T>,
    diagonal: Vec<T>,
}

impl<'a, T: Scalar> CpuSymgs<'a, T> {
    /// Checks `a` (see [`checked_diagonal`]).
    pub fn new(a: &'a Csr<T>) -> Result<Self> {
        Ok(CpuSymgs { diagonal: checked_diagonal(a)?, a })
    }

    pub fn diagonal(&self) -> &[T] {
        &self.diagonal
    }

    /// One symmetric sweep on A x = r: forward, then backward, x updated in place.
    pub fn sweep(&self, r: &[T], x: &mut [T]) -> Result<()> {
        self.sweep_in(None, 1, r, x)
    }

    /// `sweeps` symmetric sweeps visiting the rows in `order` (row `order[k]` k-th, then back),
    /// or in A's own order where it is None: the reference of a reordered smoother, such as
    /// multicolor's rows by color ([`crate::symgs::Smoother::row_order`]). The vectors are
    /// checked once, so a sweep that overflows carries on, as a GPU sweep does.
    pub fn sweep_in(&self, order: Option<&[u32]>, sweeps: usize, r: &[T], x: &mut [T]) -> Result<()> {
        self.check_sweep(order, r, x)?;
        self.sweep_rows::<false>(order, sweeps, r, x);
        Ok(())
    }

    /// The relative tolerance of a GPU sweep against these `sweeps` sweeps from `x0` (which
    /// gave `result`): the rounding of the longest row's sum with room for its propagation,
    /// scaled where this input's sweeps amplify rounding: by how far the same sweeps with each
    /// row's sum reversed land from `result`, over the 2 units in the last place a well
    /// conditioned sweep's stay within (a unit or two on most SuiteSparse files; more on
    /// olm500, whose sweeps diverge).
    pub fn tolerance(
        &self,
        order: Option<&[u32]>,
        sweeps: usize,
        r: &[T],
        x0: &[T],
        result: &[T],
    ) -> Result<f64> {
        let mut reversed = x0.to_vec();
        self.check_sweep(order, r, &reversed)?;
        self.sweep_rows::<true>(order, sweeps, r, &mut reversed);
        self.scaled_tolerance(&reversed, result)
    }

    /// [`CpuSymgs::tolerance`] for a sweep of the report's variant from `x0` (which gave
    /// `result`).
    pub fn tolerance_report_variant(&self, x0: &[T], result: &[T]) -> Result<f64> {
        check_vector("x", x0, self.a.rows())?;
        let mut reversed = x0.to_vec();
        self.report_variant_rows::<true>(&mut reversed);
        self.scaled_tolerance(&reversed, result)
    }

    /// The rounding of the longest row's sum, scaled by how far `reversed` (the same sweeps
    /// with each row's sum reversed) lands from `result` over 2 units in the last place.
    fn scaled_tolerance(&self, reversed: &[T], result: &[T]) -> Result<f64> {
        let spread = crate::verify::compare(reversed, result, 0.0);
        if spread.non_finite > 0 || spread.reference_non_finite > 0 {
            return Err(Error::Verification(
                "SymGS: the CPU sweep overflows in this precision on this input: nothing to compare with"
                    .into(),
            ));
        }
        let row_rounding = 4.0 * T::tolerance(self.a.row_stats().max);
        Ok(row_rounding * (spread.relative_error / (2.0 * T::EPSILON)).max(1.0))
    }

    /// The GPU101 report's sweep: the right-hand side of each half-sweep is x as it stands
    /// when that half-sweep starts (the report's `sum = x[i]`).
    pub fn sweep_report_variant(&self, x: &mut [T]) -> Result<()> {
        check_vector("x", x, self.a.rows())?;
        self.report_variant_rows::<false>(x);
        Ok(())
    }

    /// One direction of the sweep (lengths are the caller's to check).
    pub fn half_sweep(&self, direction: Direction, r: &[T], x: &mut [T]) {
        self.half_sweep_rows::<false>(direction, r, x);
    }

    /// The report's variant, each row's sum `REVERSED` or not.
    fn report_variant_rows<const REVERSED: bool>(&self, x: &mut [T]) {
        for direction in [Direction::Forward, Direction::Backward] {
            let rhs = x.to_vec();
            self.half_sweep_rows::<REVERSED>(direction, &rhs, x);
        }
    }

    /// One direction of the sweep, each row's sum `REVERSED` or not.
    fn half_sweep_rows<const REVERSED: bool>(&self, direction: Direction, r: &[T], x: &mut [T]) {
        let n = self.a.rows();
        match direction {
            Direction::Forward => (0..n).for_each(|i| self.relax::<REVERSED>(i, r, x)),
            Direction::Backward => (0..n).rev().for_each(|i| self.relax::<REVERSED>(i, r, x)),
        }
    }

    /// Checks the vectors, and that `order` holds each row once.
    fn check_sweep(&self, order: Option<&[u32]>, r: &[T], x: &[T]) -> Result<()> {
        let n = self.a.rows();
        check_vector("r", r, n)?;
        check_vector("x", x, n)?;
        if let Some(order) = order {
            let mut seen = vec![false; n];
            if order.len() != n
                || !order.iter().all(|&i| (i as usize) < n && !std::mem::replace(&mut seen[i as usize], true))
            {
                return Err(Error::InvalidInput(format!(
                    "SymGS: a row order must hold each of the {n} rows once ({} entries given)",
                    order.len()
                )));
            }
        }
        Ok(())
    }

    /// `sweeps` symmetric sweeps in `order` (A's where None), each row's sum `REVERSED` or not.
    fn sweep_rows<const REVERSED: bool>(&self, order: Option<&[u32]>, sweeps: usize, r: &[T], x: &mut [T]) {
        let n = self.a.rows();
        let row = |k: usize| order.map_or(k, |order| order[k] as usize);
        for _ in 0..sweeps {
            (0..n).for_each(|k| self.relax::<REVERSED>(row(k), r, x));
            (0..n).rev().for_each(|k| self.relax::<REVERSED>(row(k), r, x));
        }
    }

    /// Row i's update, with the newest x: its sum in column order, or `REVERSED` (the
    /// reference's own sweeps never are: a constant, so they pay nothing for it).
    fn relax<const REVERSED: bool>(&self, i: usize, r: &[T], x: &mut [T]) {
        let (cols, values) = self.a.row(i);
        let terms = cols.iter().zip(values);
        let subtract = |sum: T, (&j, &a_ij): (&u32, &T)| sum - a_ij * x[j as usize];
        let sum = if REVERSED { terms.rev().fold(r[i], subtract) } else { terms.fold(r[i], subtract) };
        x[i] = (sum + x[i] * self.diagonal[i]) / self.diagonal[i];
    }
}

/// One symmetric sweep of A x = r on the CPU (checks everything first).
pub fn symgs<T: Scalar>(a: &Csr<T>, r: &[T], x: &mut [T]) -> Result<()> {
    CpuSymgs::new(a)?.sweep(r, x)
}

/// One sweep of the GPU101 report's variant on the CPU (checks everything first).
pub fn symgs_report_variant<T: Scalar>(a: &Csr<T>, x: &mut [T]) -> Result<()> {
    CpuSymgs::new(a)?.sweep_report_variant(x)
}

/// ||r - A x||_2, accumulated in f64: how the smoothers are compared by residual reduction.
pub fn residual_norm<T: Scalar>(a: &Csr<T>, r: &[T], x: &[T]) -> f64 {
    (0..a.rows())
        .map(|i| {
            let (cols, values) = a.row(i);
            let ax: f64 = cols.iter().zip(values).map(|(&j, &v)| v.into() * x[j as usize].into()).sum();
            let d = r[i].into() - ax;
            d * d
        })
        // From +0, not `sum`'s -0: an empty matrix's residual prints as 0, not -0.
        .fold(0.0, |sum, d2| sum + d2)
        .sqrt()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// [[4, -1, 0], [-1, 4, -1], [0, -1, 4]] by hand.
    fn tridiagonal() -> Csr<f64> {
        Csr::new(
            3,
            3,
            vec![0, 2, 5, 7],
            vec![0, 1, 0, 1, 2, 1, 2],
            vec![4.0, -1.0, -1.0, 4.0, -1.0, -1.0, 4.0],
        )
        .unwrap()
    }

    #[test]
    fn one_sweep_by_hand() {
        let a = tridiagonal();
        let r = [3.0, 2.0, 3.0];
        let mut x = [0.0; 3];
        symgs(&a, &r, &mut x).unwrap();
        // Forward: x0 = 3/4, x1 = (2 + 3/4)/4 = 11/16, x2 = (3 + 11/16)/4 = 59/64.
        // Backward: x2 = (3 + 11/16)/4 = 59/64, x1 = (2 + 3/4 + 59/64)/4 = 235/256,
        // x0 = (3 + 235/256)/4 = 1003/1024.
        assert_eq!(x, [1003.0 / 1024.0, 235.0 / 256.0, 59.0 / 64.0]);
    }

    #[test]
    fn report_variant_uses_x_as_right_hand_side() {
        let a = tridiagonal();
        let mut x = [4.0, 4.0, 4.0];
        let mut expect = x;
        symgs_report_variant(&a, &mut x).unwrap();
        // The same as two general half-sweeps, each with r = x at its start.
        let smoother = CpuSymgs::new(&a).unwrap();
        let r = expect;
        smoother.half_sweep(Direction::Forward, &r, &mut expect);
        let r = expect;
        smoother.half_sweep(Direction::Backward, &r, &mut expect);
        assert_eq!(x, expect);
    }

    #[test]
    fn residual_norm_of_an_empty_matrix_is_positive_zero() {
        let a = Csr::<f64>::new(0, 0, vec![0], vec![], vec![]).unwrap();
        let norm = residual_norm(&a, &[], &[]);
        assert!(norm == 0.0 && norm.is_sign_positive(), "{norm}");
        assert_eq!(residual_norm(&tridiagonal(), &[3.0, 2.0, 3.0], &[0.0; 3]), 22.0f64.sqrt());
    }

    /// The tolerance (of sweeps and of the report's variant) is a row's rounding where
    /// Gauss-Seidel converges, and grows with the spread of a reversed summation order where it
    /// diverges (1 on the diagonal, -3 beside it, 3 on the next diagonal).
    #[test]
    fn the_tolerance_grows_where_the_sweep_diverges() {
        let banded = |diagonal: f64, next: [f64; 2], n: usize| {
            let mut coo = crate::sparse::Coo::new(n, n);
            for i in 0..n as u32 {
                coo.push(i, i, diagonal);
                for (k, &value) in next.iter().enumerate() {
                    let j = i + k as u32 + 1;
                    if (j as usize) < n {
                        coo.push(i, j, value);
                        coo.push(j, i, value);
                    }
                }
            }
            coo.to_csr().unwrap()
        };
        // The tolerances of two sweeps and of the report's variant over a row's rounding.
        let scales = |a: &Csr<f64>| {
            let cpu = CpuSymgs::new(a).unwrap();
            let r: Vec<f64> = (0..a.rows()).map(|i| (i as f64 * 0.7).sin()).collect();
            let x0: Vec<f64> = (0..a.rows()).map(|i| (i as f64 * 1.3).cos()).collect();
            let (mut x, mut report) = (x0.clone(), x0.clone());
            cpu.sweep_in(None, 2, &r, &mut x).unwrap();
            cpu.sweep_report_variant(&mut report).unwrap();
            let row_rounding = 4.0 * <f64 as crate::verify::Tolerance>::tolerance(5);
            [
                cpu.tolerance(None, 2, &r, &x0, &x).unwrap(),
                cpu.tolerance_report_variant(&x0, &report).unwrap(),
            ]
            .map(|tolerance| tolerance / row_rounding)
        };
        assert_eq!(scales(&banded(8.0, [-1.0, 1.0], 60)), [1.0, 1.0]);
        let diverging = scales(&banded(1.0, [-3.0, 3.0], 60));
        assert!(diverging.iter().all(|&scale| scale > 4.0), "{diverging:?}");
    }
}
