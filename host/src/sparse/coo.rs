//! Coordinate format: the form readers and generators produce.

/// A sparse matrix as (row, col, value) triplets, in any order, duplicates allowed until
/// converted (conversion to CSR sums them).
#[derive(Clone, Debug, PartialEq)]
pub struct Coo<T> {
    pub rows: usize,
    pub cols: usize,
    pub row_indices: Vec<u32>,
    pub col_indices: Vec<u32>,
    pub values: Vec<T>,
}

impl<T> Coo<T> {
    /// An empty `rows x cols` matrix.
    pub fn new(rows: usize, cols: usize) -> Coo<T> {
        Coo { rows, cols, row_indices: Vec::new(), col_indices: Vec::new(), values: Vec::new() }
    }

    /// Entries stored (duplicates counted).
    pub fn nnz(&self) -> usize {
        self.values.len()
    }
}
