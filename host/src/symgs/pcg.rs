//! Conjugate gradients preconditioned by one symmetric Gauss-Seidel sweep from x = 0 (HPCG's
//! solver, without the multigrid), driven from the host: SpMV (the adaptive CSR kernel), dot
//! products, axpy and xpay on the GPU, the scalars on the host. Stops when
//! ||r|| / ||b|| <= tolerance or after `max_iterations`. The same loop on the CPU
//! ([`pcg_cpu`]) gives the reference iteration counts and times.

use std::time::Instant;

use super::Smoother;
use super::cpu::{CpuSymgs, check_vector};
use crate::Scalar;
use crate::blas1::{Dot, axpy, axpy_cpu, dot_cpu, xpay, xpay_cpu};
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, Gpu};
use crate::sparse::Csr;
use crate::spmv::BlockWarps;
use crate::spmv::cpu::csr_serial;
use crate::spmv::csr::{CsrKernel, DeviceCsr, spmv};

/// When to stop.
#[derive(Clone, Copy, Debug)]
pub struct PcgOptions {
    /// On ||r|| / ||b||.
    pub tolerance: f64,
    pub max_iterations: usize,
}

impl Default for PcgOptions {
    fn default() -> Self {
        PcgOptions { tolerance: 1e-8, max_iterations: 1000 }
    }
}

/// How a solve went.
#[derive(Clone, Copy, Debug)]
pub struct PcgReport {
    pub iterations: usize,
    /// ||b - A x|| / ||b|| as the recurrence tracks it, at the end.
    pub relative_residual: f64,
    pub converged: bool,
    /// Wall time of the whole solve (setup of r included), milliseconds.
    pub time_ms: f64,
}

/// `x . y` on the GPU, as f64 for the host's scalar arithmetic.
fn dot64<T: Scalar>(dot: &mut Dot<T>, gpu: &Gpu, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<f64> {
    Ok(dot.run(gpu, x, y)?.into())
}

/// The error for p.Ap <= 0 or r.z <= 0: A (or the preconditioner) is not SPD.
fn breakdown(what: &str, value: f64, iteration: usize) -> Error {
    Error::InvalidInput(format!(
        "PCG: {what} = {value:e} at iteration {iteration}: the matrix (or the preconditioned one) is not symmetric positive definite"
    ))
}

/// Solves A x = b on the GPU from the x given. `smoother` preconditions with one sweep from
/// zero (None: plain CG); it must be built on the same matrix as `a`.
pub fn pcg_gpu<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    mut smoother: Option<&mut (dyn Smoother<T> + '_)>,
    b: &CudaSlice<T>,
    x: &mut CudaSlice<T>,
    options: PcgOptions,
) -> Result<PcgReport> {
    let n = a.rows;
    if a.cols != n || b.len() != n || x.len() != n {
        return Err(Error::InvalidInput(format!(
            "PCG needs a square matrix and b, x of its size: {} x {}, b {}, x {}",
            a.rows,
            a.cols,
            b.len(),
            x.len()
        )));
    }
    let start = Instant::now();
    let warps = BlockWarps::DEFAULT;
    let mut dot = Dot::new(gpu)?;
    let (mut r, mut z, mut p, mut ap) =
        (gpu.zeros::<T>(n)?, gpu.zeros::<T>(n)?, gpu.zeros::<T>(n)?, gpu.zeros::<T>(n)?);
    // r = b - A x
    spmv(gpu, a, CsrKernel::Adaptive, warps, x, &mut ap)?;
    gpu.copy(b, &mut r)?;
    axpy(gpu, T::from_f64(-1.0), &ap, &mut r)?;
    let norm_b = dot64(&mut dot, gpu, b, b)?.sqrt();
    let scale = if norm_b > 0.0 { norm_b } else { 1.0 };
    let mut residual = dot64(&mut dot, gpu, &r, &r)?.sqrt() / scale;
    let mut precondition = |gpu: &Gpu, r: &CudaSlice<T>, z: &mut CudaSlice<T>| -> Result<()> {
        match smoother.as_deref_mut() {
            Some(m) => {
                gpu.memset_zeros(z)?;
                m.sweep(gpu, r, z)
            }
            None => gpu.copy(r, z),
        }
    };
    precondition(gpu, &r, &mut z)?;
    gpu.copy(&z, &mut p)?;
    let mut rz = dot64(&mut dot, gpu, &r, &z)?;
    let mut iterations = 0;
    while residual > options.tolerance && iterations < options.max_iterations {
        iterations += 1;
        spmv(gpu, a, CsrKernel::Adaptive, warps, &p, &mut ap)?;
        let pap = dot64(&mut dot, gpu, &p, &ap)?;
        if !pap.is_finite() || pap <= 0.0 {
            return Err(breakdown("p.Ap", pap, iterations));
        }
        let alpha = rz / pap;
        axpy(gpu, T::from_f64(alpha), &p, x)?;
        axpy(gpu, T::from_f64(-alpha), &ap, &mut r)?;
        residual = dot64(&mut dot, gpu, &r, &r)?.sqrt() / scale;
        if residual <= options.tolerance {
            break;
        }
        precondition(gpu, &r, &mut z)?;
        let rz_next = dot64(&mut dot, gpu, &r, &z)?;
        if !rz_next.is_finite() || rz_next <= 0.0 {
            return Err(breakdown("r.z", rz_next, iterations));
        }
        xpay(gpu, &z, T::from_f64(rz_next / rz), &mut p)?;
        rz = rz_next;
    }
    gpu.synchronize()?;
    Ok(PcgReport {
        iterations,
        relative_residual: residual,
        converged: residual <= options.tolerance,
        time_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

/// The same solve on the CPU, preconditioned by the sequential sweep when `precondition`.
pub fn pcg_cpu<T: Scalar>(
    a: &Csr<T>,
    precondition: bool,
    b: &[T],
    x: &mut [T],
    options: PcgOptions,
) -> Result<PcgReport> {
    let n = a.rows();
    let smoother = CpuSymgs::new(a)?;
    check_vector("b", b, n)?;
    check_vector("x", x, n)?;
    let start = Instant::now();
    let mut ap = vec![T::ZERO; n];
    csr_serial(a, x, &mut ap)?;
    let mut r = b.to_vec();
    axpy_cpu(T::from_f64(-1.0), &ap, &mut r);
    let norm_b = dot_cpu(b, b).sqrt();
    let scale = if norm_b > 0.0 { norm_b } else { 1.0 };
    let mut residual = dot_cpu(&r, &r).sqrt() / scale;
    let apply = |r: &[T], z: &mut Vec<T>| -> Result<()> {
        if precondition {
            z.iter_mut().for_each(|v| *v = T::ZERO);
            smoother.sweep(r, z)
        } else {
            z.copy_from_slice(r);
            Ok(())
        }
    };
    let mut z = vec![T::ZERO; n];
    apply(&r, &mut z)?;
    let mut p = z.clone();
    let mut rz = dot_cpu(&r, &z);
    let mut iterations = 0;
    while residual > options.tolerance && iterations < options.max_iterations {
        iterations += 1;
        csr_serial(a, &p, &mut ap)?;
        let pap = dot_cpu(&p, &ap);
        if !pap.is_finite() || pap <= 0.0 {
            return Err(breakdown("p.Ap", pap, iterations));
        }
        let alpha = rz / pap;
        axpy_cpu(T::from_f64(alpha), &p, x);
        axpy_cpu(T::from_f64(-alpha), &ap, &mut r);
        residual = dot_cpu(&r, &r).sqrt() / scale;
        if residual <= options.tolerance {
            break;
        }
        apply(&r, &mut z)?;
        let rz_next = dot_cpu(&r, &z);
        if !rz_next.is_finite() || rz_next <= 0.0 {
            return Err(breakdown("r.z", rz_next, iterations));
        }
        xpay_cpu(&z, T::from_f64(rz_next / rz), &mut p);
        rz = rz_next;
    }
    Ok(PcgReport {
        iterations,
        relative_residual: residual,
        converged: residual <= options.tolerance,
        time_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}
