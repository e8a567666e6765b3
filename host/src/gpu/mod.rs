//! The GPU runtime on cudarc: a [`Gpu`] handle (context, stream, the embedded PTX module),
//! typed device buffers and copies, matrix views, launch shapes and queues (the typed launchers
//! themselves are in [`crate::kernels`]), CUDA-graph replay, CUDA-event timing, device
//! properties, and keeping a buffer in L2 ([`keep_in_l2`]).

mod graph;
mod l2;
mod launch;
mod props;
pub(crate) mod tensor_map;
mod timing;
mod view;

pub use cudarc::driver::{
    CudaEvent, CudaSlice, CudaStream, CudaView, CudaViewMut, DevicePtr, DevicePtrMut, DeviceRepr, LaunchArgs,
    ValidAsZeroBits,
};
pub use graph::GraphReplay;
pub use l2::{L2SetAside, MAX_SET_ASIDE, keep_in_l2};
pub use launch::{Kernel, Launch};
pub use props::DeviceProps;
pub use timing::{HOLD_NS, Timing};
pub use view::{MatrixView, MatrixViewMut};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use cudarc::driver::{CudaContext, CudaModule, DriverError, sys};
use cudarc::nvrtc::Ptx;

use crate::error::{Error, Result};

/// The PTX modules of the `kernels` crate built by `host/build.rs`, one per architecture.
pub mod ptx {
    include!(concat!(env!("OUT_DIR"), "/ptx_modules.rs"));

    /// The newest module a GPU of compute capability `major.minor` can run: (architecture,
    /// name, PTX). An arch-specific module (sm_90a) runs on its own architecture only.
    pub fn for_device(major: i32, minor: i32) -> Option<(u32, &'static str, &'static str)> {
        let device = (major * 10 + minor) as u32;
        let runs = |(arch, name, _): &&(u32, &str, &str)| {
            *arch <= device && (!name.ends_with('a') || *arch == device)
        };
        MODULES.iter().rev().find(runs).copied()
    }
}

/// One GPU with its context, one stream that every operation is queued on, and the module of
/// our kernels. Operations on one `Gpu` run in order.
pub struct Gpu {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    module: Arc<CudaModule>,
    kernels: Mutex<HashMap<&'static str, Kernel>>,
    last_kernel: Mutex<&'static str>,
    props: DeviceProps,
    ptx_arch: u32,
    ptx_name: &'static str,
    /// Tensor maps already in device memory, by their words ([`tensor_map::on_device`]).
    tensor_maps: Mutex<HashMap<Vec<u64>, Arc<CudaSlice<u64>>>>,
    /// [`Gpu::side_stream`], made at its first use.
    side_stream: OnceLock<Arc<CudaStream>>,
}

impl Gpu {
    /// The first GPU (device 0).
    pub fn new() -> Result<Gpu> {
        Gpu::with_ordinal(0)
    }

    /// The GPU with the given index; errors say whether the driver or the device is missing.
    pub fn with_ordinal(ordinal: usize) -> Result<Gpu> {
        let count = device_count()?;
        if ordinal >= count {
            return Err(Error::NoDevice(format!("device {ordinal} asked for, {count} present")));
        }
        let ctx = CudaContext::new(ordinal).map_err(|e| Error::NoDevice(e.to_string()))?;
        // SAFETY: all work goes through one stream, so cudarc's cross-stream event tracking
        // is not needed; turning it off saves two events per allocation.
        unsafe { ctx.disable_event_tracking() };
        if ctx.has_async_alloc() {
            pool_attribute(
                &ctx,
                sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                Some(POOL_KEEPS),
            )?;
        }
        let stream = ctx.default_stream();
        let props = DeviceProps::query(&ctx)?;
        let (major, minor) = props.compute_capability;
        let oldest = ptx::MODULES[0].0;
        let (ptx_arch, ptx_name, ptx) = ptx::for_device(major, minor).ok_or_else(|| {
            Error::NoDevice(format!(
                "{} is sm_{major}{minor}, older than the oldest PTX built (sm_{oldest})",
                props.name
            ))
        })?;
        let module =
            ctx.load_module(Ptx::from_src(ptx)).map_err(Error::driver("module load of the embedded PTX"))?;
        Ok(Gpu {
            ctx,
            stream,
            module,
            kernels: Mutex::new(HashMap::new()),
            last_kernel: Mutex::new("(none)"),
            props,
            ptx_arch,
            ptx_name,
            tensor_maps: Mutex::new(HashMap::new()),
            side_stream: OnceLock::new(),
        })
    }

    pub fn props(&self) -> &DeviceProps {
        &self.props
    }

    /// The architecture of the loaded PTX module (80 for sm_80, 90 for sm_90 and sm_90a).
    pub fn ptx_arch(&self) -> u32 {
        self.ptx_arch
    }

    /// The loaded PTX module's target: "sm_80", "sm_90" or "sm_90a" (Hopper's arch-specific
    /// instructions, such as the warpgroup MMA).
    pub fn ptx_name(&self) -> &'static str {
        self.ptx_name
    }

    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.stream
    }

    /// A kernel of the embedded module by name (looked up once, then cached).
    pub fn kernel(&self, name: &'static str) -> Result<Kernel> {
        let mut kernels = self.kernels.lock().unwrap();
        if let Some(k) = kernels.get(name) {
            return Ok(k.clone());
        }
        let function = self.module.load_function(name).map_err(|e| match e.0 {
            sys::CUresult::CUDA_ERROR_NOT_FOUND => Error::KernelNotFound(name.to_string()),
            _ => Error::Driver { what: "kernel lookup", source: e },
        })?;
        let k = Kernel::new(name, function);
        kernels.insert(name, k.clone());
        Ok(k)
    }

    /// Device buffer of `len` zeros.
    pub fn zeros<T: DeviceRepr + ValidAsZeroBits>(&self, len: usize) -> Result<CudaSlice<T>> {
        if len == 0 {
            return self.empty();
        }
        self.check_fits::<T>(len)?;
        self.stream.alloc_zeros(len).map_err(|e| self.alloc_error::<T>(len, e))
    }

    /// Device buffer of `len` values left as the allocator hands them over, for a workspace
    /// that kernels write in full before anything reads it (a split GEMM's partial tiles): no
    /// pass of zeros first.
    pub fn scratch<T: crate::Scalar>(&self, len: usize) -> Result<CudaSlice<T>> {
        if len == 0 {
            return self.empty();
        }
        self.check_fits::<T>(len)?;
        // SAFETY: every bit pattern is a valid f32 or f64, and the memory is the buffer's alone.
        unsafe { self.stream.alloc(len) }.map_err(|e| self.alloc_error::<T>(len, e))
    }

    /// Copies `data` to a new device buffer.
    pub fn upload<T: DeviceRepr>(&self, data: &[T]) -> Result<CudaSlice<T>> {
        if data.is_empty() {
            return self.empty();
        }
        self.check_fits::<T>(data.len())?;
        self.stream.clone_htod(data).map_err(|e| self.alloc_error::<T>(data.len(), e))
    }

    /// Copies `data` into an existing device buffer of the same length.
    pub fn upload_into<T: DeviceRepr>(&self, data: &[T], dst: &mut CudaSlice<T>) -> Result<()> {
        if data.len() != dst.len() {
            return Err(Error::InvalidInput(format!(
                "copy of {} elements into a device buffer of {}",
                data.len(),
                dst.len()
            )));
        }
        self.stream.memcpy_htod(data, dst).map_err(Error::driver("host-to-device copy"))
    }

    /// Copies `src` into `dst` (same length) on the device.
    pub fn copy<T: DeviceRepr>(&self, src: &CudaSlice<T>, dst: &mut CudaSlice<T>) -> Result<()> {
        if src.len() != dst.len() {
            return Err(Error::InvalidInput(format!("copy of {} elements into {}", src.len(), dst.len())));
        }
        self.stream.memcpy_dtod(src, dst).map_err(Error::driver("device-to-device copy"))
    }

    /// Sets every element of `buf` to zero (bitwise).
    pub fn memset_zeros<T: DeviceRepr + ValidAsZeroBits>(
        &self,
        buf: &mut impl DevicePtrMut<T>,
    ) -> Result<()> {
        if buf.is_empty() {
            return Ok(());
        }
        self.stream.memset_zeros(buf).map_err(Error::driver("memset"))
    }

    /// Copies a device buffer back (waits for the queued work first).
    pub fn download<T: DeviceRepr + Default + Clone>(&self, src: &impl DevicePtr<T>) -> Result<Vec<T>> {
        if src.is_empty() {
            self.synchronize()?;
            return Ok(Vec::new());
        }
        self.stream.clone_dtoh(src).map_err(|e| self.device_error(e))
    }

    /// A zero-length buffer (kernels never dereference it).
    fn empty<T>(&self) -> Result<CudaSlice<T>> {
        self.stream.null().map_err(Error::driver("empty allocation"))
    }

    /// Device buffer filled with `value` (outputs are poisoned with NaN before a checked run).
    pub fn filled<T: DeviceRepr + Clone>(&self, len: usize, value: T) -> Result<CudaSlice<T>> {
        self.upload(&vec![value; len])
    }

    /// A new stream of the highest priority: the GPU starts its blocks before the waiting
    /// blocks of other streams (work on the critical path beside a long kernel).
    pub fn urgent_stream(&self) -> Result<Arc<CudaStream>> {
        let (_, highest) = cudarc::driver::result::stream::get_priority_range()
            .map_err(Error::driver("stream priority range"))?;
        self.ctx.new_stream_with_priority(highest).map_err(Error::driver("stream creation"))
    }

    /// One stream of the highest priority, kept for the GPU's life, for work an operation
    /// queues beside the GPU's own stream (which it joins before it returns): the GPU starts
    /// that work's blocks before the waiting blocks of its own stream.
    pub fn side_stream(&self) -> Result<&Arc<CudaStream>> {
        if let Some(stream) = self.side_stream.get() {
            return Ok(stream);
        }
        let stream = self.urgent_stream()?;
        Ok(self.side_stream.get_or_init(|| stream))
    }

    /// Queues launches on `stream` instead of the GPU's own (e.g. a stream being captured into
    /// a [`GraphReplay`]): pass the result where a launcher takes a queue.
    pub fn on<'a>(&'a self, stream: &'a Arc<CudaStream>) -> Queue<'a> {
        Queue { gpu: self, stream }
    }

    /// Waits for all queued work; an error names the last kernel launched.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(|e| self.device_error(e))
    }

    /// Device memory (free, total) in bytes; free counts what the memory pool keeps for reuse.
    pub fn memory_info(&self) -> Result<(usize, usize)> {
        let (free, total) = self.ctx.mem_get_info().map_err(Error::driver("memory query"))?;
        if !self.ctx.has_async_alloc() {
            return Ok((free, total));
        }
        use sys::CUmemPool_attribute::{
            CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, CU_MEMPOOL_ATTR_USED_MEM_CURRENT,
        };
        let reserved = pool_attribute(&self.ctx, CU_MEMPOOL_ATTR_RESERVED_MEM_CURRENT, None)?;
        let used = pool_attribute(&self.ctx, CU_MEMPOOL_ATTR_USED_MEM_CURRENT, None)?;
        Ok((free + reserved.saturating_sub(used) as usize, total))
    }

    fn device_error(&self, source: DriverError) -> Error {
        Error::Device { kernel: self.last_kernel.lock().unwrap().to_string(), source }
    }

    fn check_fits<T>(&self, len: usize) -> Result<()> {
        let asked = len.checked_mul(size_of::<T>()).ok_or_else(|| {
            Error::InvalidInput(format!("a buffer of {len} elements overflows the address space"))
        })?;
        let (free, total) = self.memory_info()?;
        if asked > free {
            return Err(Error::OutOfMemory { asked, free, total });
        }
        Ok(())
    }

    fn alloc_error<T>(&self, len: usize, source: DriverError) -> Error {
        if source.0 == sys::CUresult::CUDA_ERROR_OUT_OF_MEMORY {
            let (free, total) = self.memory_info().unwrap_or((0, 0));
            return Error::OutOfMemory { asked: len * size_of::<T>(), free, total };
        }
        Error::Driver { what: "device allocation or copy", source }
    }
}

/// Bytes of freed device memory the GPU's memory pool keeps for reuse, rather than handing them
/// back to the driver at every synchronisation (its default): temporaries of repeated calls,
/// such as the GEMM's aligned copies, then cost no new mapping (PERF.md).
const POOL_KEEPS: u64 = 1 << 30;

/// Sets (`Some`) or reads a 64-bit attribute of the device's default memory pool, the one
/// cudarc's stream-ordered allocations draw from.
fn pool_attribute(ctx: &CudaContext, attribute: sys::CUmemPool_attribute, set: Option<u64>) -> Result<u64> {
    let mut pool = std::ptr::null_mut();
    let mut value = set.unwrap_or(0);
    // SAFETY: the pool handle is written by the driver for this context's device; every
    // attribute passed here is a 64-bit value, read or written through `value`.
    unsafe {
        sys::cuDeviceGetDefaultMemPool(&mut pool, ctx.cu_device())
            .result()
            .map_err(Error::driver("memory pool"))?;
        let at = (&raw mut value).cast();
        let result = if set.is_some() {
            sys::cuMemPoolSetAttribute(pool, attribute, at)
        } else {
            sys::cuMemPoolGetAttribute(pool, attribute, at)
        };
        result.result().map_err(Error::driver("memory pool attribute"))?;
    }
    Ok(value)
}

/// Where a launch is queued: a GPU and one of its streams. A `&Gpu` converts into its own
/// stream's queue, so launchers take either.
#[derive(Clone, Copy)]
pub struct Queue<'a> {
    gpu: &'a Gpu,
    stream: &'a Arc<CudaStream>,
}

impl<'a> From<&'a Gpu> for Queue<'a> {
    fn from(gpu: &'a Gpu) -> Self {
        Queue { gpu, stream: &gpu.stream }
    }
}

impl<'a> Queue<'a> {
    pub fn gpu(&self) -> &'a Gpu {
        self.gpu
    }

    pub fn stream(&self) -> &'a Arc<CudaStream> {
        self.stream
    }

    /// Queues a kernel launch (what the typed launchers of [`crate::kernels`] call).
    ///
    /// # Safety
    /// `args` pushes exactly the arguments the kernel declares, in order and with matching
    /// types, and every buffer is as large as the kernel will index for this launch.
    pub(crate) unsafe fn launch<'b>(
        &self,
        kernel: &'b Kernel,
        launch: Launch,
        args: impl FnOnce(&mut LaunchArgs<'b>),
    ) -> Result<()>
    where
        'a: 'b,
    {
        let config = launch.validate(kernel, &self.gpu.props)?;
        let mut builder = self.stream.launch_builder(&kernel.function);
        args(&mut builder);
        *self.gpu.last_kernel.lock().unwrap() = kernel.name;
        // SAFETY: the caller's contract above.
        let launched = if launch.all_resident {
            unsafe { builder.launch_cooperative(config) }
        } else {
            unsafe { builder.launch(config) }
        };
        launched.map(drop).map_err(|source| Error::Launch { kernel: kernel.name.to_string(), source })
    }
}

/// The buffer as an f64 buffer, when `T` is f64: for the f64-only kernels and solvers behind a
/// generic call.
pub fn as_f64<T: 'static>(buffer: &CudaSlice<T>) -> Option<&CudaSlice<f64>> {
    (buffer as &dyn std::any::Any).downcast_ref()
}

/// As [`as_f64`], for a buffer written to.
pub fn as_f64_mut<T: 'static>(buffer: &mut CudaSlice<T>) -> Option<&mut CudaSlice<f64>> {
    (buffer as &mut dyn std::any::Any).downcast_mut()
}

/// As [`as_f64`], for f32.
pub fn as_f32<T: 'static>(buffer: &CudaSlice<T>) -> Option<&CudaSlice<f32>> {
    (buffer as &dyn std::any::Any).downcast_ref()
}

/// As [`as_f64_mut`], for f32.
pub fn as_f32_mut<T: 'static>(buffer: &mut CudaSlice<T>) -> Option<&mut CudaSlice<f32>> {
    (buffer as &mut dyn std::any::Any).downcast_mut()
}

/// How many GPUs the driver sees.
pub fn device_count() -> Result<usize> {
    if !driver_present() {
        return Err(Error::NoDriver);
    }
    CudaContext::device_count().map(|n| n as usize).map_err(|e| Error::NoDevice(e.to_string()))
}

/// Whether the CUDA driver library can be loaded (checked before cudarc, which would panic).
pub fn driver_present() -> bool {
    // SAFETY: only tries to dlopen the driver library.
    unsafe { sys::is_culib_present() }
}

#[cfg(test)]
mod tests {
    use super::ptx::{MODULES, for_device};

    #[test]
    fn an_arch_specific_module_runs_on_its_own_architecture_only() {
        let name = |major, minor| for_device(major, minor).map(|(_, name, _)| name);
        assert_eq!(name(7, 5), None);
        assert_eq!(name(8, 6), Some("sm_80"));
        if MODULES.iter().any(|(_, name, _)| *name == "sm_90a") {
            assert_eq!(name(9, 0), Some("sm_90a"));
        }
        assert_ne!(name(10, 0), Some("sm_90a"));
        assert_ne!(name(12, 0), Some("sm_90a"));
    }
}
