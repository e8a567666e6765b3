//! A dense matrix stored row-major: element (i, j) at `data[i * cols + j]`.

use crate::Scalar;
use crate::error::{Error, Result};
use crate::sparse::Coo;

#[derive(Clone, Debug, PartialEq)]
pub struct DenseMatrix<T> {
    pub rows: usize,
    pub cols: usize,
    /// `rows * cols` values, row after row.
    pub data: Vec<T>,
}

impl<T: Scalar> DenseMatrix<T> {
    /// A `rows x cols` matrix over `data` (row-major); `data` must hold `rows * cols` values.
    pub fn new(rows: usize, cols: usize, data: Vec<T>) -> Result<DenseMatrix<T>> {
        if rows.checked_mul(cols) != Some(data.len()) {
            return Err(Error::InvalidInput(format!(
                "a {rows} x {cols} dense matrix needs {} values, got {}",
                rows.saturating_mul(cols),
                data.len()
            )));
        }
        Ok(DenseMatrix { rows, cols, data })
    }

    /// A `rows x cols` matrix of zeros.
    ///
    /// # Panics
    /// If `rows * cols` overflows `usize`.
    pub fn zeros(rows: usize, cols: usize) -> DenseMatrix<T> {
        let len = rows.checked_mul(cols).expect("dense matrix size overflows usize");
        DenseMatrix { rows, cols, data: vec![T::ZERO; len] }
    }

    /// The dense form of `coo`, its duplicates summed (checked first: [`Coo::check`]).
    pub fn from_coo(coo: &Coo<T>) -> Result<DenseMatrix<T>> {
        coo.check()?;
        if coo.rows.checked_mul(coo.cols).is_none() {
            return Err(Error::InvalidInput(format!(
                "a {} x {} dense matrix overflows usize",
                coo.rows, coo.cols
            )));
        }
        let mut dense = DenseMatrix::zeros(coo.rows, coo.cols);
        for ((&r, &c), &v) in coo.row_indices.iter().zip(&coo.col_indices).zip(&coo.values) {
            let at = dense.offset(r as usize, c as usize);
            dense.data[at] = dense.data[at] + v;
        }
        Ok(dense)
    }

    /// Element (row, col).
    ///
    /// # Panics
    /// If (row, col) is outside the matrix.
    pub fn get(&self, row: usize, col: usize) -> T {
        self.data[self.offset(row, col)]
    }

    /// Sets element (row, col).
    ///
    /// # Panics
    /// If (row, col) is outside the matrix.
    pub fn set(&mut self, row: usize, col: usize, value: T) {
        let offset = self.offset(row, col);
        self.data[offset] = value;
    }

    fn offset(&self, row: usize, col: usize) -> usize {
        assert!(
            row < self.rows && col < self.cols,
            "({row}, {col}) is outside the {} x {} matrix",
            self.rows,
            self.cols
        );
        row * self.cols + col
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_major_layout() {
        let mut a = DenseMatrix::<f64>::zeros(2, 3);
        a.set(1, 2, 5.0);
        assert_eq!(a.get(1, 2), 5.0);
        assert_eq!(a.data[5], 5.0);
        let b = DenseMatrix::new(2, 3, vec![0.0, 0.0, 0.0, 0.0, 0.0, 5.0]).unwrap();
        assert_eq!(a, b);
        assert!(DenseMatrix::new(2, 3, vec![1.0f32; 5]).is_err());
    }

    #[test]
    fn from_coo_sums_duplicates() {
        let coo = Coo::from_triplets(2, 2, vec![0, 1, 0], vec![1, 0, 1], vec![1.0, 2.0, 3.0]).unwrap();
        assert_eq!(DenseMatrix::from_coo(&coo).unwrap().data, vec![0.0, 4.0, 2.0, 0.0]);
    }

    #[test]
    #[should_panic(expected = "outside")]
    fn get_outside_panics() {
        DenseMatrix::<f32>::zeros(2, 2).get(2, 0);
    }
}
