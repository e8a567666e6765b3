//! How the parts of a distributed matrix reach each other: halo exchanges and sums.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::nccl::{self, ReduceOp, result::NcclError};

use super::HaloPlan;
use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, CudaStream, CudaViewMut, Gpu};

/// The communicator of the parts held by one process.
pub enum Comm {
    /// Every part on one GPU: halos move by device copies on one stream.
    Local { stream: Arc<CudaStream> },
    /// NCCL, one communicator (and stream) per held part.
    Nccl { comms: Vec<nccl::Comm>, streams: Vec<Arc<CudaStream>> },
}

fn nccl_error(what: &'static str) -> impl FnOnce(NcclError) -> Error {
    move |e| Error::Library { library: "NCCL", what, message: format!("{:?}", e.0) }
}

/// Errors unless NCCL's library can be loaded (cudarc would panic).
fn check_nccl() -> Result<()> {
    // SAFETY: only tries to dlopen the library.
    if unsafe { nccl::sys::is_culib_present() } {
        return Ok(());
    }
    Err(Error::Library {
        library: "NCCL",
        what: "loading libnccl.so",
        message: "not found on the library path: install NCCL (the pip package nvidia-nccl-cu13 ships \
                  it) and put the directory of libnccl.so on LD_LIBRARY_PATH; bundle/run-*.sh find \
                  it in the Python packages or at NCCL_LIBRARY"
            .into(),
    })
}

impl Comm {
    /// One communicator per GPU of this process.
    pub(super) fn nccl_devices(gpus: &[Arc<Gpu>]) -> Result<Comm> {
        check_nccl()?;
        let mut ordinals: Vec<usize> = gpus.iter().map(|g| g.context().ordinal()).collect();
        ordinals.sort_unstable();
        if ordinals.windows(2).any(|w| w[0] == w[1]) {
            return Err(Error::InvalidInput("NCCL takes one part per GPU: a device is listed twice".into()));
        }
        let streams = new_streams(gpus)?;
        let comms = nccl::Comm::from_devices(streams.clone()).map_err(nccl_error("communicator setup"))?;
        Ok(Comm::Nccl { comms, streams })
    }

    /// This process's communicator, rank `rank` of `world`.
    pub(super) fn nccl_rank(gpu: &Arc<Gpu>, rank: usize, world: usize, id: &NcclId) -> Result<Comm> {
        check_nccl()?;
        let streams = new_streams(std::slice::from_ref(gpu))?;
        let comm = nccl::Comm::from_rank(streams[0].clone(), rank, world, id.0)
            .map_err(nccl_error("communicator setup"))?;
        Ok(Comm::Nccl { comms: vec![comm], streams })
    }

    /// The exchange streams wait for the work queued so far on the held parts' GPUs (`gpus`,
    /// one per held part).
    pub(super) fn wait_for(&self, gpus: &[&Gpu]) -> Result<()> {
        self.join_pairs(gpus, |gpu, stream| stream.join(gpu.stream()))
    }

    /// The held parts' GPUs wait for the exchanges queued so far.
    pub(super) fn release(&self, gpus: &[&Gpu]) -> Result<()> {
        self.join_pairs(gpus, |gpu, stream| gpu.stream().join(stream))
    }

    /// `join` on each (GPU, exchange stream) pair: once for the local parts, which share both.
    fn join_pairs(
        &self,
        gpus: &[&Gpu],
        join: impl Fn(&Gpu, &CudaStream) -> std::result::Result<(), cudarc::driver::DriverError>,
    ) -> Result<()> {
        let pairs: Vec<(&Gpu, &CudaStream)> = match self {
            Comm::Local { stream } => gpus.first().map(|&gpu| (gpu, &**stream)).into_iter().collect(),
            Comm::Nccl { streams, .. } => gpus.iter().zip(streams).map(|(&gpu, s)| (gpu, &**s)).collect(),
        };
        pairs
            .into_iter()
            .try_for_each(|(gpu, stream)| join(gpu, stream).map_err(Error::driver("stream wait")))
    }

    /// Fills each held part's halo from its peers' send buffers, on the exchange streams.
    /// `plans` are the held parts' (rank, plan).
    pub(super) fn exchange<T: Scalar>(
        &self,
        plans: &[(usize, &HaloPlan)],
        sends: &[&CudaSlice<T>],
        halos: &mut [CudaSlice<T>],
    ) -> Result<()> {
        match self {
            Comm::Local { stream } => {
                // Every part is held here, at the index of its rank.
                for (i, (rank, plan)) in plans.iter().enumerate() {
                    for (peer, range) in &plan.receives {
                        let sent =
                            plans[*peer].1.sends.iter().find(|(to, _)| to == rank).map(|(_, r)| r.clone());
                        let sent = sent.ok_or_else(|| {
                            Error::InvalidInput(format!(
                                "part {peer} sends nothing to part {rank}, which expects it"
                            ))
                        })?;
                        stream
                            .memcpy_dtod(&sends[*peer].slice(sent), &mut halos[i].slice_mut(range.clone()))
                            .map_err(Error::driver("halo copy"))?;
                    }
                }
                Ok(())
            }
            Comm::Nccl { comms, .. } => {
                nccl::group_start().map_err(nccl_error("group start"))?;
                for (i, (_, plan)) in plans.iter().enumerate() {
                    for (peer, range) in &plan.sends {
                        comms[i]
                            .send(&sends[i].slice(range.clone()), *peer as i32)
                            .map_err(nccl_error("send"))?;
                    }
                    for (peer, range) in &plan.receives {
                        comms[i]
                            .recv(&mut halos[i].slice_mut(range.clone()), *peer as i32)
                            .map_err(nccl_error("receive"))?;
                    }
                }
                nccl::group_end().map_err(nccl_error("group end")).map(drop)
            }
        }
    }

    /// The sums of `held` (per held part, a buffer of values queued on its GPU's stream) over
    /// every process, as f64, the same on each; waits for them.
    pub(super) fn sum<T: Scalar>(&self, gpus: &[&Gpu], held: &mut [CudaViewMut<T>]) -> Result<Vec<f64>> {
        match self {
            // In rank order, so a sum is the same run to run.
            Comm::Local { .. } => {
                let mut total = vec![0.0; held.first().map_or(0, |h| h.len())];
                for (gpu, values) in gpus.iter().zip(held.iter()) {
                    total.iter_mut().zip(gpu.download(values)?).for_each(|(t, v)| *t += v.into());
                }
                Ok(total)
            }
            Comm::Nccl { comms, streams } => {
                self.wait_for(gpus)?;
                nccl::group_start().map_err(nccl_error("group start"))?;
                for (comm, values) in comms.iter().zip(held.iter_mut()) {
                    comm.all_reduce_in_place(values, &ReduceOp::Sum).map_err(nccl_error("all-reduce"))?;
                }
                nccl::group_end().map_err(nccl_error("group end"))?;
                // The buffers are the GPUs' own again only once the all-reduce is done.
                self.release(gpus)?;
                let total = streams[0].clone_dtoh(&held[0]).map_err(Error::driver("device-to-host copy"))?;
                Ok(total.into_iter().map(Into::into).collect())
            }
        }
    }
}

impl Comm {
    /// Whether `failed` holds on any rank (every rank calls this together).
    pub(super) fn any_failed(&self, gpus: &[&Gpu], failed: bool) -> Result<bool> {
        if let Comm::Local { .. } = self {
            return Ok(failed); // every part is in this process
        }
        let mut flags = gpus
            .iter()
            .map(|gpu| gpu.upload(&[if failed { 1.0 } else { 0.0 }]))
            .collect::<Result<Vec<_>>>()?;
        let mut flags: Vec<_> = flags.iter_mut().map(|f| f.slice_mut(..)).collect();
        Ok(self.sum(gpus, &mut flags)?[0] > 0.0)
    }
}

/// A stream per GPU for the exchanges, beside the GPU's own.
fn new_streams(gpus: &[Arc<Gpu>]) -> Result<Vec<Arc<CudaStream>>> {
    gpus.iter().map(|g| g.context().new_stream().map_err(Error::driver("stream creation"))).collect()
}

/// The id every process of one NCCL world starts from: rank 0 creates it and shares it (as 256
/// hex digits, in a file or an environment variable), the others read it.
#[derive(Clone, Copy)]
pub struct NcclId(nccl::Id);

impl NcclId {
    pub fn new() -> Result<NcclId> {
        check_nccl()?;
        nccl::Id::new().map(NcclId).map_err(nccl_error("unique id"))
    }

    pub fn to_hex(&self) -> String {
        self.0.internal().iter().map(|&c| format!("{:02x}", c as u8)).collect()
    }

    pub fn from_hex(hex: &str) -> Result<NcclId> {
        let hex = hex.trim();
        let bad = || Error::InvalidInput(format!("an NCCL id is 256 hex digits, got {:?}", hex));
        if hex.len() != 256 || !hex.is_ascii() {
            return Err(bad());
        }
        let mut internal = [0 as std::ffi::c_char; 128];
        for (i, byte) in internal.iter_mut().enumerate() {
            *byte = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).map_err(|_| bad())? as std::ffi::c_char;
        }
        Ok(NcclId(nccl::Id::uninit(internal)))
    }

    /// Rank 0 creates the id and writes it to `path` (atomically, by a rename); the other
    /// ranks wait for the file, up to `timeout`. Use a path no earlier run left behind: a
    /// rank could read a stale id before rank 0 replaces it.
    pub fn share(path: &Path, rank: usize, timeout: Duration) -> Result<NcclId> {
        let io = |e| Error::Io { path: path.display().to_string(), source: e };
        if rank == 0 {
            let id = NcclId::new()?;
            let partial = path.with_extension("partial");
            std::fs::write(&partial, id.to_hex()).map_err(io)?;
            std::fs::rename(&partial, path).map_err(io)?;
            return Ok(id);
        }
        let start = Instant::now();
        loop {
            match std::fs::read_to_string(path) {
                Ok(hex) => return NcclId::from_hex(&hex),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && start.elapsed() < timeout => {
                    std::thread::sleep(Duration::from_millis(20))
                }
                Err(e) => return Err(io(e)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_ids_are_errors() {
        assert!(NcclId::from_hex("12").err().unwrap().to_string().contains("256 hex digits"));
        assert!(NcclId::from_hex(&"zz".repeat(128)).is_err());
        let id = NcclId::from_hex(&"0a".repeat(128)).unwrap();
        assert_eq!(id.to_hex(), "0a".repeat(128));
    }
}
