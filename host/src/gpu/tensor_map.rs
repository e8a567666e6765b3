//! Tensor maps for the tensor memory accelerator (`kernels/src/device/tma.rs`): a matrix's
//! address, shape and stride, and the box one copy reads, in the driver's encoding.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, sys};

use super::{MatrixView, Queue};
use crate::Scalar;
use crate::error::{Error, Result};

/// The 16 words of a tensor map over the row-major f32 block `matrix`, read in boxes of
/// `box_rows` rows of 32 floats (one row of the 128-byte swizzle); zeros where a box reaches
/// past the block. The driver wants the block to start on a 16-byte boundary and its rows to be
/// a multiple of 16 bytes apart ([`swizzle_fits`]).
pub(crate) fn swizzled_f32(matrix: &MatrixView<'_, f32>, box_rows: u32) -> Result<[u64; 16]> {
    encode(matrix, (32, box_rows), Swizzle::Rows128)
}

/// How the copy engine lays a box out in shared memory.
#[derive(Clone, Copy)]
pub(crate) enum Swizzle {
    /// Row after row as in the matrix.
    None,
    /// Rows of 128 bytes, 16-byte chunk c of row r at chunk c ^ (r % 8).
    Rows128,
}

/// The 16 words of a tensor map over the row-major block `matrix`, read in boxes of
/// `box_cols` x `box_rows` elements laid out as `swizzle` says; zeros where a box reaches past
/// the block. The block must start on a 16-byte boundary with rows a multiple of 16 bytes apart
/// ([`swizzle_fits`]).
pub(crate) fn encode<T: Scalar>(
    matrix: &MatrixView<'_, T>,
    (box_cols, box_rows): (u32, u32),
    swizzle: Swizzle,
) -> Result<[u64; 16]> {
    let (ptr, rows, cols, ld) = checked_parts(matrix)?;
    let row_stride = ld as u64 * size_of::<T>() as u64;
    encode_dims::<T>(ptr, &[cols as u64, rows as u64], &[row_stride], &[box_cols, box_rows], swizzle)
}

/// A tensor map over the row-major block `matrix` seen as groups of `group` columns: three
/// dimensions (a column in its group, the row, the group), read in boxes of `groups` groups of
/// `box_rows` rows, which land group after group. The engine does not stop a group at the
/// block's last column: the caller makes sure that memory is there (whole groups, or rows
/// padded to whole groups).
pub(crate) fn encode_column_groups<T: Scalar>(
    matrix: &MatrixView<'_, T>,
    group: u32,
    (groups, box_rows): (u32, u32),
) -> Result<[u64; 16]> {
    let (ptr, rows, cols, ld) = checked_parts(matrix)?;
    let size = size_of::<T>() as u64;
    let dims = [group as u64, rows as u64, cols.div_ceil(group as usize) as u64];
    let strides = [ld as u64 * size, group as u64 * size];
    encode_dims::<T>(ptr, &dims, &strides, &[group, box_rows, groups], Swizzle::None)
}

/// `matrix`'s start, rows, columns and row stride, where the copy engine can read it.
fn checked_parts<T: Scalar>(matrix: &MatrixView<'_, T>) -> Result<(*const T, usize, usize, usize)> {
    let abi::Strided { ptr, ld } = matrix.strided();
    let (rows, cols) = (matrix.rows(), matrix.cols());
    if !swizzle_fits(matrix) || rows == 0 || cols == 0 {
        return Err(Error::InvalidInput(format!(
            "a tensor map of a {rows} x {cols} {} block at {ptr:?} with rows {ld} apart (the copy engine needs a 16-byte aligned start and row stride)",
            T::NAME
        )));
    }
    Ok((ptr, rows, cols, ld as usize))
}

/// The driver's encoding of a tensor map at `ptr`: `dims` innermost first, the byte strides of
/// every dimension but the first, the box.
fn encode_dims<T: Scalar>(
    ptr: *const T,
    dims: &[u64],
    strides: &[u64],
    boxes: &[u32],
    swizzle: Swizzle,
) -> Result<[u64; 16]> {
    let address = ptr as u64;
    let element_strides = [1u32; 5];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    use sys::*;
    let data_type = if size_of::<T>() == 8 {
        CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT64
    } else {
        CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32
    };
    let swizzle = match swizzle {
        Swizzle::None => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_NONE,
        Swizzle::Rows128 => CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
    };
    // SAFETY: every pointer is to a live local array of the rank's length (the strides one
    // shorter); the driver only encodes, it does not touch the matrix.
    unsafe {
        cuTensorMapEncodeTiled(
            &mut map,
            data_type,
            dims.len() as u32,
            address as *mut std::ffi::c_void,
            dims.as_ptr(),
            strides.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            swizzle,
            // (256-byte promotion was slower where rows do not start 256-byte aligned: PERF.md.)
            CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
            CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
        )
    }
    .result()
    .map_err(Error::driver("tensor map encoding"))?;
    Ok(map.opaque)
}

/// Whether the copy engine can read `matrix` (its start and its row stride 16-byte aligned).
pub(crate) fn swizzle_fits<T>(matrix: &MatrixView<'_, T>) -> bool {
    let abi::Strided { ptr, ld } = matrix.strided();
    (ptr as usize).is_multiple_of(16) && (ld as usize * size_of::<T>()).is_multiple_of(16)
}

/// Sets of tensor maps kept on the device at most (beyond, the cache starts again). The LU's
/// trailing updates take two sets per block column: 128 at n = 16384.
const CACHED_MAPS: usize = 1024;

/// `maps` (whole tensor maps, 16 words each) in device memory, where a kernel reads them.
/// Uploaded once and kept: a map holds only an address, a shape and a box, so the same words
/// describe the same copies whatever buffer now lies there, and a GEMM called again on the same
/// buffers queues no copy and no allocation (a large part of a call at n = 4096: PERF.md).
/// They are uploaded and freed on the GPU's own stream, so `queue`, where the kernel that reads
/// them goes, must be that stream.
pub(crate) fn on_device(queue: Queue, maps: &[u64]) -> Result<Arc<CudaSlice<u64>>> {
    let gpu = queue.gpu();
    if !Arc::ptr_eq(queue.stream(), gpu.stream()) {
        return Err(Error::InvalidInput(
            "the wgmma kernels run on the GPU's own stream, where their tensor maps are kept".into(),
        ));
    }
    let mut cache = gpu.tensor_maps.lock().unwrap();
    if let Some(device) = cache.get(maps) {
        return Ok(device.clone());
    }
    if cache.len() >= CACHED_MAPS {
        // (Freed in stream order: after every kernel already queued that reads them.)
        cache.clear();
    }
    let device = Arc::new(gpu.upload(maps)?);
    cache.insert(maps.to_vec(), device.clone());
    Ok(device)
}
