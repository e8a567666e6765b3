//! Tensor maps for the tensor memory accelerator (`kernels/src/device/tma.rs`): a matrix's
//! address, shape and stride, and the box one copy reads, in the driver's encoding.

use std::sync::Arc;

use cudarc::driver::{CudaSlice, sys};

use super::{MatrixView, Queue};
use crate::error::{Error, Result};

/// The 16 words of a tensor map over the row-major f32 block `matrix`, read in boxes of
/// `box_rows` rows of 32 floats (one row of the 128-byte swizzle); zeros where a box reaches
/// past the block. The driver wants the block to start on a 16-byte boundary and its rows to be
/// a multiple of 16 bytes apart ([`swizzle_fits`]).
pub(crate) fn swizzled_f32(matrix: &MatrixView<'_, f32>, box_rows: u32) -> Result<[u64; 16]> {
    let abi::Strided { ptr, ld } = matrix.strided();
    let (rows, cols) = (matrix.rows(), matrix.cols());
    if !swizzle_fits(matrix) || rows == 0 || cols == 0 {
        return Err(Error::InvalidInput(format!(
            "a tensor map of a {rows} x {cols} f32 block at {ptr:?} with rows {ld} apart (the copy engine needs a 16-byte aligned start and row stride)"
        )));
    }
    let address = ptr as u64;
    let dims = [cols as u64, rows as u64];
    let row_stride = [ld as u64 * size_of::<f32>() as u64];
    let boxes = [32, box_rows];
    let element_strides = [1u32, 1];
    let mut map = sys::CUtensorMap { opaque: [0; 16] };
    use sys::*;
    // SAFETY: every pointer is to a live local array of the rank's length (the strides one
    // shorter); the driver only encodes, it does not touch the matrix.
    unsafe {
        cuTensorMapEncodeTiled(
            &mut map,
            CUtensorMapDataType::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
            2,
            address as *mut std::ffi::c_void,
            dims.as_ptr(),
            row_stride.as_ptr(),
            boxes.as_ptr(),
            element_strides.as_ptr(),
            CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
            CUtensorMapSwizzle::CU_TENSOR_MAP_SWIZZLE_128B,
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
pub(crate) fn swizzle_fits(matrix: &MatrixView<'_, f32>) -> bool {
    let abi::Strided { ptr, ld } = matrix.strided();
    (ptr as usize).is_multiple_of(16) && ld.is_multiple_of(4)
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
