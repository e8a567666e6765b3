//! Memory checked before work starts: an operation adds up the bytes it will need on the host
//! and on the GPU ([`Footprint`]) and fails at once, with an error naming the bytes needed and
//! available, instead of allocating for minutes and being killed by the operating system.

use crate::error::{Error, Result};
use crate::gpu::Gpu;

/// The memory one operation needs, in bytes (u128: products of user-given sizes cannot
/// overflow it).
#[derive(Clone, Debug)]
pub struct Footprint {
    what: String,
    host: u128,
    device: u128,
}

impl Footprint {
    /// Nothing yet, for the operation `what` (named in the error).
    pub fn new(what: impl Into<String>) -> Footprint {
        Footprint { what: what.into(), host: 0, device: 0 }
    }

    /// Adds `count` values of `T` in host memory.
    pub fn host<T>(mut self, count: u128) -> Footprint {
        self.host = self.host.saturating_add(count.saturating_mul(size_of::<T>() as u128));
        self
    }

    /// Adds `count` values of `T` in device memory.
    pub fn device<T>(mut self, count: u128) -> Footprint {
        self.device = self.device.saturating_add(count.saturating_mul(size_of::<T>() as u128));
        self
    }

    pub fn host_bytes(&self) -> u128 {
        self.host
    }

    pub fn device_bytes(&self) -> u128 {
        self.device
    }

    /// Fails if the host memory needed is more than the host has available now.
    pub fn check_host(&self) -> Result<()> {
        match host_available() {
            Some(available) if self.host > available as u128 => Err(Error::NotEnoughMemory {
                memory: "host",
                what: self.what.clone(),
                needed: self.host,
                available: available as u128,
            }),
            _ => Ok(()),
        }
    }

    /// Fails if the device memory needed is more than `gpu` has free now.
    pub fn check_device(&self, gpu: &Gpu) -> Result<()> {
        let (free, _) = gpu.memory_info()?;
        if self.device > free as u128 {
            return Err(Error::NotEnoughMemory {
                memory: "device",
                what: self.what.clone(),
                needed: self.device,
                available: free as u128,
            });
        }
        Ok(())
    }

    /// Both checks, the host's first.
    pub fn check(&self, gpu: &Gpu) -> Result<()> {
        self.check_host()?;
        self.check_device(gpu)
    }
}

/// Bytes of host memory available for new allocations without swapping (Linux'
/// `MemAvailable`); None where it cannot be read.
pub fn host_available() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_footprint_larger_than_the_machine_is_an_error_naming_both_sizes() {
        let huge = Footprint::new("gemm 200000 x 200000 x 200000").host::<f64>(3 * 200_000u128 * 200_000);
        assert_eq!(huge.host_bytes(), 960_000_000_000);
        if host_available().is_none() {
            eprintln!("SKIPPED: /proc/meminfo is not readable here");
            return;
        }
        let err = huge.check_host().unwrap_err().to_string();
        assert!(err.contains("gemm 200000") && err.contains("960000000000 bytes"), "{err}");
        assert!(err.contains("available"), "{err}");
        Footprint::new("small").host::<u8>(1024).check_host().unwrap();
    }

    #[test]
    fn sizes_saturate_instead_of_overflowing() {
        let f = Footprint::new("x").host::<f64>(u128::MAX / 2).host::<f64>(u128::MAX / 2);
        assert_eq!(f.host_bytes(), u128::MAX);
    }
}
