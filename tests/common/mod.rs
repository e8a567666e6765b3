//! Shared by the integration tests.
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU ..."]`: `cargo test` lists them as ignored
//! (skipped, by name) on a machine without one, and the bundle's script runs them with
//! `--include-ignored` on a GPU machine, where a missing GPU is a failure, never a pass.
#![allow(dead_code)]

use host::Gpu;
use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// The GPU, or a panic that says why there is none.
pub fn gpu() -> Gpu {
    Gpu::new().unwrap_or_else(|e| panic!("this GPU test needs a CUDA GPU: {e}"))
}

/// `len` random values in [-1, 1) from a fixed seed.
pub fn random_vec<T: host::Scalar>(len: usize, seed: u64) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..len).map(|_| T::from_f64(rng.random_range(-1.0..1.0))).collect()
}
