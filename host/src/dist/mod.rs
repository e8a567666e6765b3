//! Sparse products and solves spread over several GPUs, or over several parts of one GPU.
//!
//! A square CSR matrix is cut into row blocks of about equal work ([`Partition`]); each part
//! holds its rows as a local block (its own columns) and a boundary (columns of other parts),
//! and receives the remote x entries it needs, its halo, through a [`Comm`]:
//!
//! - [`Comm::Local`]: every part on one GPU, halos moved by device copies. It runs the same
//!   partitioning, plans and kernels as several GPUs do, so the tests check them on one.
//! - [`Comm::Nccl`]: NCCL, one communicator per part, one part per GPU: one GPU per process
//!   ([`DistCsr::on_rank`], the NCCL id shared through a file, so the same code runs past one
//!   host), per thread of one process ([`run_on_gpus`]), or every GPU from one thread
//!   ([`DistCsr::on_gpus`]: the simplest to call, but one thread's launches then serialize).
//!   Between processes on one host, run with `NCCL_CUMEM_ENABLE=0`: with NCCL's cuMem buffers
//!   each of its calls was slower, and a CG iteration 2.5x longer.
//!
//! [`DistCsr::spmv`] gathers what each part sends, starts the exchange on a second stream, runs
//! the local product meanwhile, then adds the boundary rows' products once the halo is in.
//! [`pcg`] is conjugate gradients on it: dot products summed over the parts, and one SymGS
//! sweep per part on its local block (block Jacobi between parts, as HPCG does).

pub mod comm;
pub mod partition;
pub mod pcg;

pub use comm::{Comm, NcclId};
pub use partition::{HaloPlan, Part, Partition};

use std::ops::Range;
use std::sync::Arc;

use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, CudaViewMut, Gpu, Launch};
use crate::kernels::{blas1, dist as kernels};
use crate::sparse::Csr;
use crate::spmv::BlockWarps;
use crate::spmv::csr::{CsrKernel, DeviceCsr, spmv};

/// Runs `work` on the first `gpus` GPUs, a thread each (the fastest way to drive several GPUs
/// from one process): thread `r` holds part `r` of `a` on GPU `r`, NCCL between them exactly
/// as between processes, and passes it to `work`. The results come back by rank. As with
/// MPI, an error on one rank in the middle of a collective leaves the others waiting in it:
/// steps that can fail on some ranks only go through [`DistCsr::agree`].
pub fn run_on_gpus<T: Scalar, R: Send>(
    a: &Csr<T>,
    gpus: usize,
    work: impl Fn(&mut DistCsr<T>) -> Result<R> + Sync,
) -> Result<Vec<R>> {
    let present = crate::gpu::device_count()?;
    if gpus == 0 || gpus > present {
        return Err(Error::InvalidInput(format!("{gpus} GPUs asked for, this machine has {present}")));
    }
    let partition = Partition::balanced(a, gpus)?;
    let halos = partition::halo_columns(a, &partition);
    // Every GPU opened before any thread waits on the others in NCCL's setup.
    let opened = (0..gpus).map(|rank| Gpu::with_ordinal(rank).map(Arc::new)).collect::<Result<Vec<_>>>()?;
    let id = NcclId::new()?;
    let (partition, halos, work) = (&partition, &halos, &work);
    std::thread::scope(|scope| {
        let threads: Vec<_> = opened
            .into_iter()
            .enumerate()
            .map(|(rank, gpu)| {
                scope.spawn(move || {
                    let mut d = DistCsr::rank_part(gpu, a, partition.clone(), halos, rank, &id)?;
                    work(&mut d)
                })
            })
            .collect();
        threads.into_iter().map(|t| t.join().expect("a GPU's thread panicked")).collect()
    })
}

/// The held parts on their GPUs, and a halo buffer for each.
type Uploaded<T> = (Vec<DevicePart<T>>, Vec<CudaSlice<T>>);

fn upload<T: Scalar>(held: &[Part<T>], gpus: Vec<Arc<Gpu>>) -> Result<Uploaded<T>> {
    let mut parts = Vec::with_capacity(held.len());
    let mut halos = Vec::with_capacity(held.len());
    for (part, gpu) in held.iter().zip(gpus) {
        halos.push(gpu.zeros(part.halo_columns.len())?);
        parts.push(DevicePart::upload(gpu, part)?);
    }
    Ok((parts, halos))
}

/// A part of a distributed matrix on its GPU.
pub struct DevicePart<T> {
    pub rank: usize,
    pub gpu: Arc<Gpu>,
    /// The global rows it owns.
    pub rows: Range<usize>,
    /// Its rows restricted to its own columns (what its smoother runs on).
    pub local: DeviceCsr<T>,
    boundary_rows: CudaSlice<u32>,
    boundary_row_ptr: CudaSlice<u32>,
    boundary_col_idx: CudaSlice<u32>,
    boundary_values: CudaSlice<T>,
    plan: HaloPlan,
    send_rows: CudaSlice<u32>,
    /// What it sends, gathered.
    send: CudaSlice<T>,
}

impl<T: Scalar> DevicePart<T> {
    fn upload(gpu: Arc<Gpu>, part: &Part<T>) -> Result<DevicePart<T>> {
        let boundary = &part.boundary;
        Ok(DevicePart {
            rank: part.rank,
            local: DeviceCsr::upload(&gpu, &part.local)?,
            rows: part.rows.clone(),
            boundary_rows: gpu.upload(&part.boundary_rows)?,
            boundary_row_ptr: gpu.upload(boundary.row_ptr())?,
            boundary_col_idx: gpu.upload(boundary.col_indices())?,
            boundary_values: gpu.upload(boundary.values())?,
            plan: part.plan.clone(),
            send_rows: gpu.upload(&part.plan.send_rows)?,
            send: gpu.zeros(part.plan.send_rows.len())?,
            gpu,
        })
    }

    /// Which parts it exchanges with.
    pub fn plan(&self) -> &HaloPlan {
        &self.plan
    }
}

/// A vector distributed as the matrix's rows: one device buffer per part held here.
pub struct DistVector<T> {
    pub parts: Vec<CudaSlice<T>>,
}

/// A square matrix cut into row blocks, the parts this process holds on their GPUs, and how
/// they reach the others.
pub struct DistCsr<T> {
    /// Rows (and columns) of the whole matrix.
    pub rows: usize,
    pub partition: Partition,
    /// The parts held here, by ascending rank.
    pub parts: Vec<DevicePart<T>>,
    /// Each held part's halo: the remote x entries of the current product.
    halos: Vec<CudaSlice<T>>,
    comm: Comm,
}

impl<T: Scalar> DistCsr<T> {
    /// `a` cut into `parts` parts, all on `gpu`, exchanging halos by device copies.
    pub fn local(gpu: Arc<Gpu>, a: &Csr<T>, parts: usize) -> Result<DistCsr<T>> {
        let partition = Partition::balanced(a, parts)?;
        let held = partition::split(a, &partition);
        let stream = gpu.context().new_stream().map_err(Error::driver("stream creation"))?;
        let (parts, halos) = upload(&held, vec![gpu; parts])?;
        Ok(DistCsr { rows: a.rows(), partition, parts, halos, comm: Comm::Local { stream } })
    }

    /// `a` cut into one part per GPU of `gpus` (one process, NCCL between them).
    pub fn on_gpus(gpus: Vec<Arc<Gpu>>, a: &Csr<T>) -> Result<DistCsr<T>> {
        let partition = Partition::balanced(a, gpus.len())?;
        let held = partition::split(a, &partition);
        let comm = Comm::nccl_devices(&gpus)?;
        let (parts, halos) = upload(&held, gpus)?;
        DistCsr { rows: a.rows(), partition, parts, halos, comm }.connect()
    }

    /// Part `rank` of `a` cut into `world` parts, on `gpu`, for one process (or thread) per
    /// GPU: every rank passes the same matrix and the same `id` (see [`NcclId`]), and they
    /// all call this at the same time (NCCL's setup waits for the whole world).
    pub fn on_rank(gpu: Arc<Gpu>, a: &Csr<T>, rank: usize, world: usize, id: &NcclId) -> Result<DistCsr<T>> {
        let partition = Partition::balanced(a, world)?;
        let halos = partition::halo_columns(a, &partition);
        DistCsr::rank_part(gpu, a, partition, &halos, rank, id)
    }

    /// [`DistCsr::on_rank`] with the partition and every part's halo already found.
    fn rank_part(
        gpu: Arc<Gpu>,
        a: &Csr<T>,
        partition: Partition,
        halos: &[Vec<u32>],
        rank: usize,
        id: &NcclId,
    ) -> Result<DistCsr<T>> {
        let world = partition.parts();
        if rank >= world {
            return Err(Error::InvalidInput(format!("rank {rank} of a world of {world}")));
        }
        // The communicator first: an upload failing on one rank then stops every rank.
        let comm = Comm::nccl_rank(&gpu, rank, world, id)?;
        let uploaded = upload(&[Part::new(a, &partition, halos, rank)], vec![gpu.clone()]);
        let failed_elsewhere = comm.any_failed(&[&gpu], uploaded.is_err())?;
        let (parts, halos) = uploaded?;
        if failed_elsewhere {
            return Err(Error::PeerFailed("uploading its part".into()));
        }
        DistCsr { rows: a.rows(), partition, parts, halos, comm }.connect()
    }

    /// A step that may fail on some ranks only (building a smoother, say), agreed on: every
    /// rank calls this after the step, and where it failed on any rank it fails on all (the
    /// failed ones with their own error), so that no rank waits forever on a failed one.
    pub fn agree<R>(&self, step: Result<R>) -> Result<R> {
        let failed_elsewhere = self.comm.any_failed(&self.gpus(), step.is_err())?;
        match step {
            Ok(_) if failed_elsewhere => Err(Error::PeerFailed("the same step".into())),
            step => step,
        }
    }

    /// The GPU of each held part.
    fn gpus(&self) -> Vec<&Gpu> {
        self.parts.iter().map(|p| &*p.gpu).collect()
    }

    /// The parts of a global vector that this process holds.
    pub fn scatter(&self, global: &[T]) -> Result<DistVector<T>> {
        if global.len() != self.rows {
            return Err(Error::InvalidInput(format!(
                "a vector of {} values for a matrix of {} rows",
                global.len(),
                self.rows
            )));
        }
        let parts =
            self.parts.iter().map(|p| p.gpu.upload(&global[p.rows.clone()])).collect::<Result<_>>()?;
        Ok(DistVector { parts })
    }

    /// Zeros in every held part.
    pub fn zeros(&self) -> Result<DistVector<T>> {
        let parts = self.parts.iter().map(|p| p.gpu.zeros(p.rows.len())).collect::<Result<_>>()?;
        Ok(DistVector { parts })
    }

    /// The held parts' values, by ascending row (the whole vector where this process holds
    /// every part).
    pub fn gather(&self, v: &DistVector<T>) -> Result<Vec<T>> {
        let mut out = Vec::new();
        for (p, values) in self.parts.iter().zip(&v.parts) {
            out.extend(p.gpu.download(values)?);
        }
        Ok(out)
    }

    /// Checks that `v` is laid out as this matrix's held parts.
    pub(crate) fn check_vector(&self, what: &str, v: &DistVector<T>) -> Result<()> {
        let fits = v.parts.len() == self.parts.len()
            && self.parts.iter().zip(&v.parts).all(|(p, values)| values.len() == p.rows.len());
        if !fits {
            return Err(Error::InvalidInput(format!("{what} is not distributed as the matrix's rows")));
        }
        Ok(())
    }

    /// Starts the exchange of the gathered send buffers into the halos, on the exchange
    /// streams (after the work queued so far on the GPUs).
    fn start_exchange(&mut self) -> Result<()> {
        self.comm.wait_for(&self.gpus())?;
        let sends: Vec<&CudaSlice<T>> = self.parts.iter().map(|p| &p.send).collect();
        let plans: Vec<(usize, &HaloPlan)> = self.parts.iter().map(|p| (p.rank, &p.plan)).collect();
        self.comm.exchange(&plans, &sends, &mut self.halos)
    }

    /// One exchange and one sum, waited for: NCCL connects peers at their first send/receive
    /// and all-reduce (milliseconds each), which then falls in the setup, not in a solve.
    fn connect(mut self) -> Result<DistCsr<T>> {
        self.start_exchange()?;
        let gpus = self.gpus();
        self.comm.release(&gpus)?;
        self.comm.any_failed(&gpus, false)?;
        Ok(self)
    }

    /// `y = A x`: gathers what each part sends; exchanges halos on the communication streams
    /// while the local products run; then adds the boundary rows' products.
    pub fn spmv(&mut self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.check_vector("x", x)?;
        self.check_vector("y", y)?;
        for (i, p) in self.parts.iter_mut().enumerate() {
            let count = p.send.len();
            if count > 0 {
                // SAFETY: send_rows and send hold `count` entries; the rows index this part's x.
                unsafe {
                    let launch = Launch::linear(count, 256);
                    blas1::gather(&*p.gpu, launch, count as u32, &p.send_rows, &x.parts[i], &mut p.send)?;
                }
            }
        }
        self.start_exchange()?;
        for (i, p) in self.parts.iter().enumerate() {
            spmv(&p.gpu, &p.local, CsrKernel::Adaptive, BlockWarps::DEFAULT, &x.parts[i], &mut y.parts[i])?;
        }
        self.comm.release(&self.gpus())?;
        for (i, p) in self.parts.iter().enumerate() {
            let count = p.boundary_rows.len();
            if count > 0 {
                // SAFETY: the boundary's count rows (row_ptr of count + 1) index the halo and
                // this part's y (the plan built with it).
                unsafe {
                    kernels::boundary_add(
                        &*p.gpu,
                        Launch::linear(count, 128),
                        count as u32,
                        &p.boundary_rows,
                        &p.boundary_row_ptr,
                        &p.boundary_col_idx,
                        &p.boundary_values,
                        &self.halos[i],
                        &mut y.parts[i],
                    )?;
                }
            }
        }
        Ok(())
    }

    /// The sums over every part (held here or not) of a buffer of values per held part, each
    /// queued on its part's GPU (e.g. by [`crate::blas1::Dot::queue`]); waits.
    pub fn sum(&self, held: &mut [CudaViewMut<T>]) -> Result<Vec<f64>> {
        self.comm.sum(&self.gpus(), held)
    }

    /// Waits for the queued work of every held part.
    pub fn synchronize(&self) -> Result<()> {
        self.parts.iter().try_for_each(|p| p.gpu.synchronize())
    }
}
