//! Sparse matrix formats (f32/f64 values, 32-bit indices) and their conversions:
//! COO -> CSR -> BSR / HLL and back to CSR. Each reports its memory footprint.

pub mod coo;

pub use coo::Coo;
