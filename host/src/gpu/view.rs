//! Blocks of row-major matrices in device memory, for kernels that work on a sub-block
//! (`abi::Strided` on the device side): a view checks once that its block lies inside its
//! buffer, and mutable views split into disjoint blocks the way slices do.

use std::marker::PhantomData;

use cudarc::driver::{CudaSlice, DevicePtr};

use crate::Scalar;
use crate::error::{Error, Result};

/// A `rows x cols` block of a row-major matrix whose rows are `ld` elements apart, read-only.
#[derive(Clone, Copy, Debug)]
pub struct MatrixView<'a, T> {
    block: Block,
    _buffer: PhantomData<&'a T>,
}

/// As [`MatrixView`], for a block a kernel writes. Splits into disjoint views.
#[derive(Debug)]
pub struct MatrixViewMut<'a, T> {
    block: Block,
    _buffer: PhantomData<&'a mut T>,
}

/// The device address of the first element, the shape and the leading dimension.
#[derive(Clone, Copy, Debug)]
struct Block {
    ptr: u64,
    rows: usize,
    cols: usize,
    ld: usize,
}

impl Block {
    /// The block at `offset` of `buffer`, checked: it lies inside the buffer, and its elements
    /// are numbered below 2^32 from its first (kernels index blocks with u32).
    fn new<T>(buffer: &CudaSlice<T>, offset: usize, rows: usize, cols: usize, ld: usize) -> Result<Block> {
        // Elements from the first to one past the last.
        let span = match rows == 0 || cols == 0 {
            true => Some(0),
            false => (rows - 1).checked_mul(ld).and_then(|s| s.checked_add(cols)),
        };
        let end = span.and_then(|s| s.checked_add(offset));
        let rows_overlap = rows > 1 && cols > ld;
        if rows_overlap || end.is_none_or(|e| e > buffer.len()) {
            return Err(Error::InvalidInput(format!(
                "a {rows} x {cols} block at offset {offset} with leading dimension {ld} does not fit a buffer of {} elements",
                buffer.len()
            )));
        }
        if span.is_none_or(|s| s > u32::MAX as usize) || ld > u32::MAX as usize {
            return Err(Error::InvalidInput(format!(
                "a {rows} x {cols} block with leading dimension {ld} spans more than 2^32 elements"
            )));
        }
        let (base, _sync) = buffer.device_ptr(buffer.stream());
        Ok(Block { ptr: base + (offset * size_of::<T>()) as u64, rows, cols, ld })
    }

    /// The `rows x cols` sub-block at (`row`, `col`), elements of `T`.
    fn at<T>(self, row: usize, col: usize, rows: usize, cols: usize) -> Block {
        Block { ptr: self.ptr + ((row * self.ld + col) * size_of::<T>()) as u64, rows, cols, ld: self.ld }
    }
}

impl<'a, T> MatrixView<'a, T> {
    /// The `rows x cols` block at `offset` of `buffer`, rows `ld` apart.
    pub fn new(buffer: &'a CudaSlice<T>, offset: usize, rows: usize, cols: usize, ld: usize) -> Result<Self> {
        Ok(MatrixView { block: Block::new(buffer, offset, rows, cols, ld)?, _buffer: PhantomData })
    }

    /// The whole buffer as a `rows x cols` matrix.
    pub fn full(buffer: &'a CudaSlice<T>, rows: usize, cols: usize) -> Result<Self> {
        Self::new(buffer, 0, rows, cols, cols)
    }

    pub fn rows(&self) -> usize {
        self.block.rows
    }

    pub fn cols(&self) -> usize {
        self.block.cols
    }

    /// The same view with elements of `U`, when `U` is `T` (for generic code that calls a
    /// kernel built for one type).
    pub(crate) fn of_type<U: Scalar>(self) -> Option<MatrixView<'a, U>>
    where
        T: Scalar,
    {
        (T::NAME == U::NAME).then_some(MatrixView { block: self.block, _buffer: PhantomData })
    }

    /// Columns `..col` and `col..` (`col` at most the columns).
    pub fn split_cols(self, col: usize) -> (Self, Self) {
        let Block { rows, cols, .. } = self.block;
        let col = col.min(cols);
        let view = |block| MatrixView { block, _buffer: PhantomData };
        (view(self.block.at::<T>(0, 0, rows, col)), view(self.block.at::<T>(0, col, rows, cols - col)))
    }

    /// The device-side description of the block.
    pub(crate) fn strided(&self) -> abi::Strided<T> {
        abi::Strided { ptr: self.block.ptr as *const T, ld: self.block.ld as u32 }
    }
}

impl<'a, T> MatrixViewMut<'a, T> {
    /// The `rows x cols` block at `offset` of `buffer`, rows `ld` apart.
    pub fn new(
        buffer: &'a mut CudaSlice<T>,
        offset: usize,
        rows: usize,
        cols: usize,
        ld: usize,
    ) -> Result<Self> {
        Ok(Self::of(Block::new(buffer, offset, rows, cols, ld)?))
    }

    /// The whole buffer as a `rows x cols` matrix.
    pub fn full(buffer: &'a mut CudaSlice<T>, rows: usize, cols: usize) -> Result<Self> {
        Self::new(buffer, 0, rows, cols, cols)
    }

    pub fn rows(&self) -> usize {
        self.block.rows
    }

    pub fn cols(&self) -> usize {
        self.block.cols
    }

    /// Rows `..row` and `row..` (`row` at most the rows).
    pub fn split_rows(self, row: usize) -> (Self, Self) {
        let Block { rows, cols, .. } = self.block;
        let row = row.min(rows);
        (
            Self::of(self.block.at::<T>(0, 0, row, cols)),
            Self::of(self.block.at::<T>(row, 0, rows - row, cols)),
        )
    }

    /// Columns `..col` and `col..` (`col` at most the columns): disjoint, though their rows
    /// interleave in memory.
    pub fn split_cols(self, col: usize) -> (Self, Self) {
        let Block { rows, cols, .. } = self.block;
        let col = col.min(cols);
        (
            Self::of(self.block.at::<T>(0, 0, rows, col)),
            Self::of(self.block.at::<T>(0, col, rows, cols - col)),
        )
    }

    /// The block, read-only, for the rest of its lifetime.
    pub fn into_view(self) -> MatrixView<'a, T> {
        MatrixView { block: self.block, _buffer: PhantomData }
    }

    /// As [`MatrixView::of_type`].
    pub(crate) fn of_type<U: Scalar>(self) -> Option<MatrixViewMut<'a, U>>
    where
        T: Scalar,
    {
        (T::NAME == U::NAME).then_some(MatrixViewMut::of(self.block))
    }

    fn of(block: Block) -> Self {
        MatrixViewMut { block, _buffer: PhantomData }
    }

    /// The device-side description of the block.
    pub(crate) fn strided_mut(&self) -> abi::StridedMut<T> {
        abi::StridedMut { ptr: self.block.ptr as *mut T, ld: self.block.ld as u32 }
    }
}
