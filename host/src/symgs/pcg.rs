//! Conjugate gradients preconditioned by one symmetric Gauss-Seidel sweep from x = 0 (HPCG's
//! solver, without the multigrid), driven from the host: SpMV (the adaptive CSR kernel), dot
//! products and the vector updates on the GPU, the scalars on the host. Stops when
//! ||b - A x|| / ||b|| <= tolerance, checked on the true residual once the recurrence's says
//! so (where the true one is larger, CG starts again from it); or after `max_iterations`; or
//! when starting again did not halve the true residual (`converged` is then false). The same
//! loop on the CPU ([`pcg_cpu`]) gives the reference iteration counts and times.

use std::time::Instant;

use super::Smoother;
use super::cpu::{CpuSymgs, check_vector};
use crate::Scalar;
use crate::blas1::{CgStep, Dot, axpy, axpy_cpu, cg_step, cg_step_cpu, dot_cpu};
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
    /// ||b - A x|| / ||b|| at the end, computed from x (not the recurrence's, which drifts).
    pub relative_residual: f64,
    pub converged: bool,
    /// Wall time of the whole solve (setup of r included), milliseconds.
    pub time_ms: f64,
}

/// The error for p.Ap <= 0 or r.z <= 0: A (or the preconditioner) is not SPD.
fn breakdown(what: &str, value: f64, iteration: usize) -> Error {
    Error::InvalidInput(format!(
        "PCG: {what} = {value:e} at iteration {iteration}: the matrix (or the preconditioned one) is not symmetric positive definite"
    ))
}

/// What conjugate gradients does with vectors of one kind (host vectors, one GPU's, a
/// distributed one's), so that one loop ([`conjugate_gradients`]) serves them all.
pub(crate) trait CgSpace {
    type Vector;
    fn zeros(&self) -> Result<Self::Vector>;
    fn copy(&self, src: &Self::Vector, dst: &mut Self::Vector) -> Result<()>;
    /// y = A x.
    fn spmv(&mut self, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// The products `x . y` of `pairs`, reduced together (on several GPUs, in one sum).
    fn dots<const N: usize>(&mut self, pairs: [(&Self::Vector, &Self::Vector); N]) -> Result<[f64; N]>;
    /// y = a x + y.
    fn axpy(&self, a: f64, x: &Self::Vector, y: &mut Self::Vector) -> Result<()>;
    /// p = u + beta p, s = w + beta s, then x += alpha p and r -= alpha s.
    fn step(
        &self,
        alpha: f64,
        beta: f64,
        u: &Self::Vector,
        w: &Self::Vector,
        step: CgStep<'_, Self::Vector>,
    ) -> Result<()>;
    /// z = M^-1 r (one sweep from zero, or a copy without a preconditioner).
    fn precondition(&mut self, r: &Self::Vector, z: &mut Self::Vector) -> Result<()>;
    /// Waits for queued work.
    fn finish(&self) -> Result<()>;
}

/// r = b - A x (w its scratch).
fn residual_into<S: CgSpace>(
    space: &mut S,
    b: &S::Vector,
    x: &S::Vector,
    r: &mut S::Vector,
    w: &mut S::Vector,
) -> Result<()> {
    space.spmv(x, w)?;
    space.copy(b, r)?;
    space.axpy(-1.0, w, r)
}

/// Preconditioned CG on A x = b from the x given, in any [`CgSpace`].
pub(crate) fn conjugate_gradients<S: CgSpace>(
    space: &mut S,
    b: &S::Vector,
    x: &mut S::Vector,
    options: PcgOptions,
) -> Result<PcgReport> {
    let start = Instant::now();
    let (mut r, mut u, mut w) = (space.zeros()?, space.zeros()?, space.zeros()?);
    let (mut p, mut s) = (space.zeros()?, space.zeros()?);
    let [bb] = space.dots([(b, b)])?;
    let scale = if bb > 0.0 { bb.sqrt() } else { 1.0 };
    residual_into(space, b, x, &mut r, &mut w)?;
    // Chronopoulos and Gear's form: s = A p follows its own recurrence (s = w + beta s, with w
    // = A u the product of the preconditioned residual u), so that the three products an
    // iteration needs are reduced together: one wait (one all-reduce on several GPUs) per
    // iteration instead of two. The residual test comes after the next u and w: one sweep and
    // one SpMV more in all.
    let (mut alpha, mut ru) = (0.0, 0.0);
    let mut iterations = 0;
    // CG starts from r (beta = 0): at first, and from a replaced residual.
    let mut restart = true;
    // The true relative residual where r was last replaced by it.
    let mut replaced: Option<f64> = None;
    let residual = loop {
        space.precondition(&r, &mut u)?;
        space.spmv(&u, &mut w)?;
        let [rr, ru_next, wu] = space.dots([(&r, &r), (&r, &u), (&w, &u)])?;
        if rr.sqrt() / scale <= options.tolerance || iterations == options.max_iterations {
            // The recurrences drift from b - A x (in f32, by orders of magnitude on badly
            // conditioned matrices): the true residual decides. Where it is too large, r is
            // replaced by it and CG starts again, unless it has not halved since the last time.
            residual_into(space, b, x, &mut r, &mut w)?;
            let [rr] = space.dots([(&r, &r)])?;
            let residual = rr.sqrt() / scale;
            let stalled = replaced.is_some_and(|last| residual > 0.5 * last);
            if residual <= options.tolerance || iterations == options.max_iterations || stalled {
                break residual;
            }
            (replaced, restart) = (Some(residual), true);
            continue;
        }
        iterations += 1;
        if !ru_next.is_finite() || ru_next <= 0.0 {
            return Err(breakdown("r.z", ru_next, iterations));
        }
        let beta = if restart { 0.0 } else { ru_next / ru };
        // p.Ap through the recurrences (equal in exact arithmetic).
        let pap = if restart { wu } else { wu - beta * ru_next / alpha };
        if !pap.is_finite() || pap <= 0.0 {
            return Err(breakdown("p.Ap", pap, iterations));
        }
        (alpha, ru, restart) = (ru_next / pap, ru_next, false);
        space.step(alpha, beta, &u, &w, CgStep { p: &mut p, s: &mut s, x: &mut *x, r: &mut r })?;
    };
    space.finish()?;
    Ok(PcgReport {
        iterations,
        relative_residual: residual,
        converged: residual <= options.tolerance,
        time_ms: start.elapsed().as_secs_f64() * 1e3,
    })
}

/// One GPU's vectors: A's adaptive SpMV and the smoother given.
struct GpuSpace<'a, 's, T> {
    gpu: &'a Gpu,
    a: &'a DeviceCsr<T>,
    smoother: Option<&'a mut (dyn Smoother<T> + 's)>,
    dot: Dot<T>,
}

impl<T: Scalar> CgSpace for GpuSpace<'_, '_, T> {
    type Vector = CudaSlice<T>;
    fn zeros(&self) -> Result<CudaSlice<T>> {
        self.gpu.zeros(self.a.rows)
    }
    fn copy(&self, src: &CudaSlice<T>, dst: &mut CudaSlice<T>) -> Result<()> {
        self.gpu.copy(src, dst)
    }
    fn spmv(&mut self, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        spmv(self.gpu, self.a, CsrKernel::Adaptive, BlockWarps::DEFAULT, x, y)
    }
    fn dots<const N: usize>(&mut self, pairs: [(&CudaSlice<T>, &CudaSlice<T>); N]) -> Result<[f64; N]> {
        let values = self.gpu.download(&self.dot.queue(self.gpu, &pairs)?)?;
        Ok(std::array::from_fn(|k| values[k].into()))
    }
    fn axpy(&self, a: f64, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
        axpy(self.gpu, T::from_f64(a), x, y)
    }
    fn step(
        &self,
        alpha: f64,
        beta: f64,
        u: &CudaSlice<T>,
        w: &CudaSlice<T>,
        step: CgStep<'_, CudaSlice<T>>,
    ) -> Result<()> {
        cg_step(self.gpu, T::from_f64(alpha), T::from_f64(beta), u, w, step)
    }
    fn precondition(&mut self, r: &CudaSlice<T>, z: &mut CudaSlice<T>) -> Result<()> {
        match self.smoother.as_deref_mut() {
            Some(m) => m.sweep_from_zero(self.gpu, r, z),
            None => self.gpu.copy(r, z),
        }
    }
    fn finish(&self) -> Result<()> {
        self.gpu.synchronize()
    }
}

/// Solves A x = b on the GPU from the x given. `smoother` preconditions with one sweep from
/// zero (None: plain CG); it is built on A, or on a matrix of A's size that approximates it
/// (block Jacobi: A's diagonal blocks).
pub fn pcg_gpu<T: Scalar>(
    gpu: &Gpu,
    a: &DeviceCsr<T>,
    smoother: Option<&mut (dyn Smoother<T> + '_)>,
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
    let mut space = GpuSpace { gpu, a, smoother, dot: Dot::new(gpu)? };
    conjugate_gradients(&mut space, b, x, options)
}

/// Host vectors: the serial SpMV and, when `smoother` is given, the sequential sweep.
struct CpuSpace<'a, T> {
    a: &'a Csr<T>,
    smoother: Option<CpuSymgs<'a, T>>,
}

impl<T: Scalar> CgSpace for CpuSpace<'_, T> {
    type Vector = Vec<T>;
    fn zeros(&self) -> Result<Vec<T>> {
        Ok(vec![T::ZERO; self.a.rows()])
    }
    fn copy(&self, src: &Vec<T>, dst: &mut Vec<T>) -> Result<()> {
        dst.copy_from_slice(src);
        Ok(())
    }
    fn spmv(&mut self, x: &Vec<T>, y: &mut Vec<T>) -> Result<()> {
        csr_serial(self.a, x, y)
    }
    fn dots<const N: usize>(&mut self, pairs: [(&Vec<T>, &Vec<T>); N]) -> Result<[f64; N]> {
        Ok(pairs.map(|(x, y)| dot_cpu(x, y)))
    }
    fn axpy(&self, a: f64, x: &Vec<T>, y: &mut Vec<T>) -> Result<()> {
        axpy_cpu(T::from_f64(a), x, y);
        Ok(())
    }
    fn step(&self, alpha: f64, beta: f64, u: &Vec<T>, w: &Vec<T>, step: CgStep<'_, Vec<T>>) -> Result<()> {
        let CgStep { p, s, x, r } = step;
        let step =
            CgStep { p: p.as_mut_slice(), s: s.as_mut_slice(), x: x.as_mut_slice(), r: r.as_mut_slice() };
        cg_step_cpu(T::from_f64(alpha), T::from_f64(beta), u, w, step);
        Ok(())
    }
    fn precondition(&mut self, r: &Vec<T>, z: &mut Vec<T>) -> Result<()> {
        match &self.smoother {
            Some(m) => {
                z.iter_mut().for_each(|v| *v = T::ZERO);
                m.sweep(r, z)
            }
            None => self.copy(r, z),
        }
    }
    fn finish(&self) -> Result<()> {
        Ok(())
    }
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
    let mut space = CpuSpace { a, smoother: precondition.then_some(smoother) };
    let mut solution = x.to_vec();
    let report = conjugate_gradients(&mut space, &b.to_vec(), &mut solution, options)?;
    x.copy_from_slice(&solution);
    Ok(report)
}
