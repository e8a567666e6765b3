//! What the device is: the figures a benchmark report's header needs.

use std::sync::Arc;

use cudarc::driver::{CudaContext, sys::CUdevice_attribute as A};
use serde::Serialize;

use crate::error::{Error, Result};

#[derive(Clone, Debug, Serialize)]
pub struct DeviceProps {
    pub name: String,
    pub compute_capability: (i32, i32),
    pub sm_count: u32,
    pub l2_bytes: usize,
    pub memory_bytes: usize,
    pub max_shared_per_block_optin: usize,
    /// The most L2 a context can set aside for persisting accesses, and the largest
    /// access-policy window ([`crate::gpu::keep_in_l2`]); 0 where there is none.
    pub max_persisting_l2_bytes: usize,
    pub max_l2_window_bytes: usize,
    pub clock_mhz: u32,
    pub memory_clock_mhz: u32,
    pub memory_bus_bits: u32,
    /// e.g. "13.0"
    pub driver_version: String,
}

impl DeviceProps {
    pub(crate) fn query(ctx: &Arc<CudaContext>) -> Result<DeviceProps> {
        let attr = |a: A| ctx.attribute(a).map_err(Error::driver("device attribute query"));
        let mut version = 0;
        // SAFETY: writes the driver's version into a local integer.
        unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut version) }
            .result()
            .map_err(Error::driver("driver version query"))?;
        Ok(DeviceProps {
            name: ctx.name().map_err(Error::driver("device name query"))?,
            compute_capability: ctx
                .compute_capability()
                .map_err(Error::driver("compute capability query"))?,
            sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)? as u32,
            l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)? as usize,
            memory_bytes: ctx.total_mem().map_err(Error::driver("memory size query"))?,
            max_shared_per_block_optin: attr(A::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?
                as usize,
            max_persisting_l2_bytes: attr(A::CU_DEVICE_ATTRIBUTE_MAX_PERSISTING_L2_CACHE_SIZE)? as usize,
            max_l2_window_bytes: attr(A::CU_DEVICE_ATTRIBUTE_MAX_ACCESS_POLICY_WINDOW_SIZE)? as usize,
            clock_mhz: (attr(A::CU_DEVICE_ATTRIBUTE_CLOCK_RATE)? / 1000) as u32,
            memory_clock_mhz: (attr(A::CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE)? / 1000) as u32,
            memory_bus_bits: attr(A::CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH)? as u32,
            driver_version: format!("{}.{}", version / 1000, (version % 1000) / 10),
        })
    }
}

impl std::fmt::Display for DeviceProps {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{} (sm_{}{}, {} SMs, {:.0} GiB, L2 {} MiB, {} MHz, driver CUDA {})",
            self.name,
            self.compute_capability.0,
            self.compute_capability.1,
            self.sm_count,
            self.memory_bytes as f64 / (1u64 << 30) as f64,
            self.l2_bytes >> 20,
            self.clock_mhz,
            self.driver_version
        )
    }
}
