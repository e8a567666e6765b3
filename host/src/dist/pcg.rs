//! Conjugate gradients on a distributed matrix: the loop of [`crate::symgs::pcg`], its dot
//! products summed over the parts, preconditioned by one SymGS sweep per part on its local
//! block (block Jacobi between parts: no communication in the preconditioner, as in HPCG).

use super::{DistCsr, DistVector};
use crate::Scalar;
use crate::blas1::{CgStep, Dot, axpy, cg_step};
use crate::error::{Error, Result};
use crate::symgs::Smoother;
use crate::symgs::pcg::{CgSpace, PcgOptions, PcgReport, conjugate_gradients};

/// A smoother per held part, each built on that part's local block (`Part::local`) on its GPU.
pub type PartSmoothers<'s, T> = Vec<Box<dyn Smoother<T> + 's>>;

struct DistSpace<'a, 's, T> {
    a: &'a mut DistCsr<T>,
    smoothers: Option<&'a mut PartSmoothers<'s, T>>,
    dots: Vec<Dot<T>>,
}

impl<T: Scalar> DistSpace<'_, '_, T> {
    /// Runs `f` on each held part's GPU and buffers.
    fn each<F>(&self, x: &DistVector<T>, y: &mut DistVector<T>, mut f: F) -> Result<()>
    where
        F: FnMut(&crate::Gpu, &crate::gpu::CudaSlice<T>, &mut crate::gpu::CudaSlice<T>) -> Result<()>,
    {
        for ((p, x), y) in self.a.parts.iter().zip(&x.parts).zip(&mut y.parts) {
            f(&p.gpu, x, y)?;
        }
        Ok(())
    }
}

impl<T: Scalar> CgSpace for DistSpace<'_, '_, T> {
    type Vector = DistVector<T>;
    fn zeros(&self) -> Result<DistVector<T>> {
        self.a.agree(self.a.zeros())
    }
    fn copy(&self, src: &DistVector<T>, dst: &mut DistVector<T>) -> Result<()> {
        self.each(src, dst, |gpu, x, y| if x.is_empty() { Ok(()) } else { gpu.copy(x, y) })
    }
    fn spmv(&mut self, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.a.spmv(x, y)
    }
    fn dots<const N: usize>(&mut self, pairs: [(&DistVector<T>, &DistVector<T>); N]) -> Result<[f64; N]> {
        let mut held = Vec::with_capacity(self.dots.len());
        for (i, (p, dot)) in self.a.parts.iter().zip(&mut self.dots).enumerate() {
            held.push(dot.queue(&p.gpu, &pairs.map(|(x, y)| (&x.parts[i], &y.parts[i])))?);
        }
        let sums = self.a.sum(&mut held)?;
        Ok(std::array::from_fn(|k| sums[k]))
    }
    fn axpy(&self, a: f64, x: &DistVector<T>, y: &mut DistVector<T>) -> Result<()> {
        self.each(x, y, |gpu, x, y| if x.is_empty() { Ok(()) } else { axpy(gpu, T::from_f64(a), x, y) })
    }
    fn step(
        &self,
        alpha: f64,
        beta: f64,
        u: &DistVector<T>,
        w: &DistVector<T>,
        step: CgStep<'_, DistVector<T>>,
    ) -> Result<()> {
        let (alpha, beta) = (T::from_f64(alpha), T::from_f64(beta));
        let CgStep { p, s, x, r } = step;
        for (i, part) in self.a.parts.iter().enumerate() {
            let step =
                CgStep { p: &mut p.parts[i], s: &mut s.parts[i], x: &mut x.parts[i], r: &mut r.parts[i] };
            cg_step(&part.gpu, alpha, beta, &u.parts[i], &w.parts[i], step)?;
        }
        Ok(())
    }
    fn precondition(&mut self, r: &DistVector<T>, z: &mut DistVector<T>) -> Result<()> {
        let Some(smoothers) = self.smoothers.as_deref_mut() else {
            return self.copy(r, z);
        };
        for (((p, m), r), z) in self.a.parts.iter().zip(smoothers.iter_mut()).zip(&r.parts).zip(&mut z.parts)
        {
            if !z.is_empty() {
                m.sweep_from_zero(&p.gpu, r, z)?;
            }
        }
        Ok(())
    }
    fn finish(&self) -> Result<()> {
        self.a.synchronize()
    }
}

/// Solves A x = b from the x given; `smoothers` (one per held part, on its local block)
/// precondition, None runs plain CG. Every process of the world calls it together.
pub fn pcg<T: Scalar>(
    a: &mut DistCsr<T>,
    smoothers: Option<&mut PartSmoothers<'_, T>>,
    b: &DistVector<T>,
    x: &mut DistVector<T>,
    options: PcgOptions,
) -> Result<PcgReport> {
    a.check_vector("b", b)?;
    a.check_vector("x", x)?;
    if let Some(m) = &smoothers
        && m.len() != a.parts.len()
    {
        return Err(Error::InvalidInput(format!(
            "{} smoothers for {} parts: one per part, on its local block",
            m.len(),
            a.parts.len()
        )));
    }
    let dots = a.agree(a.parts.iter().map(|p| Dot::new(&p.gpu)).collect())?;
    conjugate_gradients(&mut DistSpace { a, smoothers, dots }, b, x, options)
}
