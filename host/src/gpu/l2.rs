//! Keeping one buffer in L2 while other data streams past it: a persisting access-policy
//! window over L2 set aside for it (Ampere and later). A multicolor SymGS sweep gathers x at
//! random in every color while it streams the matrix through L2 once; in plain LRU order the
//! matrix pushes x out between one color and the next.
//!
//! The set-aside is taken from every other kernel of the context, persisting lines or not: on
//! an H100, 31 MiB of it made the CSR SpMV up to 36% slower, 19 MiB about 2% (PERF.md). So it
//! is at most [`MAX_SET_ASIDE`], and held only while an [`L2SetAside`] lives.

use std::sync::Arc;

use cudarc::driver::sys::{self, CUaccessProperty, CUlimit, CUstreamAttrID};
use cudarc::driver::{CudaContext, CudaSlice};

use super::{Gpu, Launch, Queue};
use crate::Scalar;
use crate::error::{Error, Result};
use crate::kernels::cache as kernels;

/// The most L2 asked to be set aside (the driver rounds it up, to 19 MiB on an H100).
pub const MAX_SET_ASIDE: usize = 16 << 20;

/// L2 set aside for persisting accesses while this lives; the context's earlier set-aside
/// comes back when it is dropped (after the queued work finishes).
pub struct L2SetAside {
    ctx: Arc<CudaContext>,
    previous: usize,
}

impl L2SetAside {
    /// Sets aside enough L2 for `bytes` (at most [`MAX_SET_ASIDE`]) where the context has
    /// less; None where it already has enough or the device sets none aside.
    pub fn reserve(gpu: &Gpu, bytes: usize) -> Result<Option<L2SetAside>> {
        let wanted = bytes.min(MAX_SET_ASIDE).min(gpu.props().max_persisting_l2_bytes);
        let previous = set_aside(gpu.context())?;
        if wanted == 0 || previous >= wanted {
            return Ok(None);
        }
        // SAFETY: raises a limit of the context bound by `set_aside`.
        unsafe { sys::cuCtxSetLimit(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, wanted) }
            .result()
            .map_err(Error::driver("L2 set-aside"))?;
        Ok(Some(L2SetAside { ctx: gpu.context().clone(), previous }))
    }

    /// [`L2SetAside::reserve`] into `slot` where it holds none yet: a smoother's first sweep
    /// takes the set-aside, and takes it again after another holder gave it back.
    pub fn hold(slot: &mut Option<L2SetAside>, gpu: &Gpu, bytes: usize) -> Result<()> {
        if slot.is_none() {
            *slot = Self::reserve(gpu, bytes)?;
        }
        Ok(())
    }

    /// The L2 the GPU's context sets aside now, in bytes.
    pub fn current(gpu: &Gpu) -> Result<usize> {
        set_aside(gpu.context())
    }
}

impl Drop for L2SetAside {
    fn drop(&mut self) {
        // The limit is not ordered with queued work: let it finish first. Errors are the
        // context's own, reported by the next call that checks.
        if self.ctx.bind_to_thread().is_ok() && self.ctx.synchronize().is_ok() {
            // SAFETY: restores a limit of the context bound above.
            let _ = unsafe { sys::cuCtxSetLimit(CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE, self.previous) };
        }
    }
}

/// The context's L2 set-aside in bytes.
fn set_aside(ctx: &Arc<CudaContext>) -> Result<usize> {
    ctx.bind_to_thread().map_err(Error::driver("context binding"))?;
    let mut bytes = 0;
    // SAFETY: reads a limit of the context bound above.
    unsafe { sys::cuCtxGetLimit(&mut bytes, CUlimit::CU_LIMIT_PERSISTING_L2_CACHE_SIZE) }
        .result()
        .map_err(Error::driver("L2 set-aside query"))?;
    Ok(bytes)
}

/// Queues `launches` on `queue` with `buffer` kept in the L2 set aside (an [`L2SetAside`]):
/// its lines persist there while the launches run (a share of them where the buffer is
/// larger) and go back to the normal eviction order after them. Kernels captured into a graph
/// from the queue's stream keep the same window. With no set-aside, just the launches.
pub fn keep_in_l2<T: Scalar, R>(
    queue: Queue,
    buffer: &mut CudaSlice<T>,
    launches: impl FnOnce(&mut CudaSlice<T>) -> Result<R>,
) -> Result<R> {
    let gpu = queue.gpu();
    let bytes = (buffer.len() * size_of::<T>()).min(gpu.props().max_l2_window_bytes);
    let set_aside = set_aside(gpu.context())?;
    if bytes == 0 || set_aside == 0 || buffer.len() > u32::MAX as usize {
        return launches(buffer);
    }
    let base = crate::vendor::device_ptr(gpu, buffer);
    let hit_ratio = (set_aside as f64 / bytes as f64).min(1.0) as f32;
    set_window(queue, base, bytes, hit_ratio)?;
    let launched = launches(buffer);
    set_window(queue, base, 0, 0.0)?;
    let result = launched?;
    let lines = (buffer.len() * size_of::<T>()).div_ceil(128);
    // SAFETY: the buffer holds its length of values.
    unsafe { kernels::release_persisting(queue, Launch::linear(lines, 256), buffer.len() as u32, &*buffer)? };
    Ok(result)
}

/// Sets the window of the launches queued next on the queue's stream: `bytes` from `base`,
/// that share of its lines persisting, the rest streaming; 0 bytes for none.
fn set_window(queue: Queue, base: *mut std::ffi::c_void, bytes: usize, hit_ratio: f32) -> Result<()> {
    // SAFETY: a plain-data union, all zeros a valid value; its window member is set below.
    let mut value: sys::CUstreamAttrValue = unsafe { std::mem::zeroed() };
    value.accessPolicyWindow = sys::CUaccessPolicyWindow {
        base_ptr: base,
        num_bytes: bytes,
        hitRatio: hit_ratio,
        hitProp: CUaccessProperty::CU_ACCESS_PROPERTY_PERSISTING,
        missProp: CUaccessProperty::CU_ACCESS_PROPERTY_STREAMING,
    };
    // SAFETY: a live stream of this context, and a window inside one device buffer.
    unsafe {
        sys::cuStreamSetAttribute(
            queue.stream().cu_stream(),
            CUstreamAttrID::CU_LAUNCH_ATTRIBUTE_ACCESS_POLICY_WINDOW,
            &value,
        )
    }
    .result()
    .map_err(Error::driver("L2 access-policy window"))
}
