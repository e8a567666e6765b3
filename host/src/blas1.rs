//! Vector operations: `axpy` (y = a x + y), the end-to-end example of a kernel with its CPU
//! reference and host driver, and what PCG needs besides: its step (`cg_step`) and dot
//! products.

use crate::Scalar;
use crate::error::{Error, Result};
use crate::gpu::{CudaSlice, CudaViewMut, Gpu, Launch};
use crate::kernels::blas1 as kernels;

/// CPU reference: `y[i] = a * x[i] + y[i]` (fused, as on the GPU).
pub fn axpy_cpu<T: Scalar>(a: T, x: &[T], y: &mut [T]) {
    assert_eq!(x.len(), y.len(), "axpy: x and y differ in length");
    for (yi, &xi) in y.iter_mut().zip(x) {
        *yi = a.mul_add(xi, *yi);
    }
}

/// `y = a x + y` on the GPU.
pub fn axpy<T: Scalar>(gpu: &Gpu, a: T, x: &CudaSlice<T>, y: &mut CudaSlice<T>) -> Result<()> {
    let n = checked_len("axpy", x, y)?;
    // SAFETY: x and y hold the n elements the grid-stride loop reads and writes.
    unsafe { kernels::axpy(gpu, grid_stride(gpu, n), n, a, x, y) }
}

/// The vectors one step of conjugate gradients in Chronopoulos and Gear's form updates: the
/// search direction p, its product s = A p, the solution x and the residual r.
pub struct CgStep<'a, V: ?Sized> {
    pub p: &'a mut V,
    pub s: &'a mut V,
    pub x: &'a mut V,
    pub r: &'a mut V,
}

/// CPU reference of [`cg_step`], fused as on the GPU.
pub fn cg_step_cpu<T: Scalar>(alpha: T, beta: T, u: &[T], w: &[T], step: CgStep<'_, [T]>) {
    let n = u.len();
    assert!(
        [w.len(), step.p.len(), step.s.len(), step.x.len(), step.r.len()].iter().all(|&len| len == n),
        "cg_step: the vectors differ in length"
    );
    let minus_alpha = T::ZERO - alpha;
    for i in 0..n {
        step.p[i] = beta.mul_add(step.p[i], u[i]);
        step.s[i] = beta.mul_add(step.s[i], w[i]);
        step.x[i] = alpha.mul_add(step.p[i], step.x[i]);
        step.r[i] = minus_alpha.mul_add(step.s[i], step.r[i]);
    }
}

/// CPU reference: `sum x[i] y[i]`, accumulated in f64 (the GPU's order differs, so results
/// agree to rounding, not to the bit).
pub fn dot_cpu<T: Scalar>(x: &[T], y: &[T]) -> f64 {
    assert_eq!(x.len(), y.len(), "dot: x and y differ in length");
    x.iter().zip(y).map(|(&a, &b)| a.into() * b.into()).sum()
}

/// The element count as the kernels' u32, or an error naming the operation.
fn checked_len<T>(what: &str, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<u32> {
    if x.len() != y.len() {
        return Err(Error::InvalidInput(format!("{what}: x has {} elements, y {}", x.len(), y.len())));
    }
    u32::try_from(x.len())
        .map_err(|_| Error::InvalidInput(format!("{what}: {} elements exceed the u32 index range", x.len())))
}

/// Blocks of 256 threads for a grid-stride kernel over `n` elements: enough to fill the GPU.
fn grid_stride_blocks(gpu: &Gpu, n: u32) -> usize {
    (n as usize).div_ceil(256).clamp(1, gpu.props().sm_count as usize * 8)
}

fn grid_stride(gpu: &Gpu, n: u32) -> Launch {
    Launch::linear(grid_stride_blocks(gpu, n) * 256, 256)
}

/// One step of conjugate gradients in Chronopoulos and Gear's form on the GPU: `p = u + beta
/// p`, `s = w + beta s`, then `x += alpha p` and `r -= alpha s`, in one pass.
pub fn cg_step<T: Scalar>(
    gpu: &Gpu,
    alpha: T,
    beta: T,
    u: &CudaSlice<T>,
    w: &CudaSlice<T>,
    step: CgStep<'_, CudaSlice<T>>,
) -> Result<()> {
    let n = checked_len("cg_step", u, w)?;
    for v in [&*step.p, &*step.s, &*step.x, &*step.r] {
        checked_len("cg_step", u, v)?;
    }
    if n == 0 {
        return Ok(());
    }
    // SAFETY: the six vectors hold the n elements the grid-stride loop reads and writes.
    unsafe {
        kernels::cg_step(gpu, grid_stride(gpu, n), n, alpha, beta, u, w, step.p, step.s, step.x, step.r)
    }
}

/// Dot products on the GPU, with their scratch buffers allocated once: a grid-stride pass
/// leaves one partial sum per block, one block adds them up in a fixed order (so a result is
/// reproducible run to run). Up to [`Dot::AT_ONCE`] products queue together, their values side
/// by side, so that several GPUs sum them in one all-reduce.
pub struct Dot<T> {
    partials: CudaSlice<T>,
    results: CudaSlice<T>,
}

impl<T: Scalar> Dot<T> {
    /// The most products [`Dot::queue`] takes at once.
    pub const AT_ONCE: usize = 3;

    pub fn new(gpu: &Gpu) -> Result<Self> {
        Ok(Dot {
            partials: gpu.zeros(gpu.props().sm_count as usize * 8)?,
            results: gpu.zeros(Self::AT_ONCE)?,
        })
    }

    /// `x . y`, waiting for it.
    pub fn run(&mut self, gpu: &Gpu, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<T> {
        let result = self.queue(gpu, &[(x, y)])?;
        Ok(gpu.download(&result)?[0])
    }

    /// Queues the products `x . y` of `pairs` without waiting: their values are left, in
    /// order, in the buffer returned (to be summed over GPUs before they are read).
    pub fn queue(
        &mut self,
        gpu: &Gpu,
        pairs: &[(&CudaSlice<T>, &CudaSlice<T>)],
    ) -> Result<CudaViewMut<'_, T>> {
        if pairs.len() > Self::AT_ONCE {
            return Err(Error::InvalidInput(format!(
                "{} dot products queued at once, at most {}",
                pairs.len(),
                Self::AT_ONCE
            )));
        }
        for (i, &(x, y)) in pairs.iter().enumerate() {
            let n = checked_len("dot", x, y)?;
            let mut result = self.results.slice_mut(i..i + 1);
            if n == 0 {
                gpu.memset_zeros(&mut result)?;
                continue;
            }
            let blocks = grid_stride_blocks(gpu, n).min(self.partials.len());
            let count = blocks as u32;
            let scratch = abi::block_reduction_bytes(size_of::<T>());
            // SAFETY: x, y of n elements and one partial per block; then one block sums them
            // into one value; both with the shared scratch the block reduction needs.
            unsafe {
                let partials = Launch::linear(blocks * 256, 256).shared(scratch);
                kernels::dot_partials(gpu, partials, n, x, y, &mut self.partials)?;
                kernels::sum_partials(
                    gpu,
                    Launch::linear(256, 256).shared(scratch),
                    count,
                    &self.partials,
                    &mut result,
                )?;
            }
        }
        Ok(self.results.slice_mut(..pairs.len()))
    }
}

/// `x . y` on the GPU (allocates its scratch; use [`Dot`] in loops).
pub fn dot<T: Scalar>(gpu: &Gpu, x: &CudaSlice<T>, y: &CudaSlice<T>) -> Result<T> {
    Dot::new(gpu)?.run(gpu, x, y)
}
