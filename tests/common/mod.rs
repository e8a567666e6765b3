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

/// The folder of test files: `RGLA_TEST_DATA` (set by the bundle's script, whose checkout may
/// sit elsewhere than where the tests were built), else `tests/data` of this checkout.
pub fn data_dir() -> std::path::PathBuf {
    std::env::var_os("RGLA_TEST_DATA")
        .map(Into::into)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"))
}

/// Every real, integer or pattern Matrix Market file in the test data, as CSR.
pub fn real_matrices<T: host::Scalar>() -> Vec<(String, host::sparse::Csr<T>)> {
    let mut found = Vec::new();
    let mut paths: Vec<_> = std::fs::read_dir(data_dir())
        .expect("tests/data exists")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "mtx"))
        .collect();
    paths.sort();
    for path in paths {
        // Complex files and dense arrays are rejected by the sparse reader: not SpMV inputs.
        if let Ok(mm) = host::mm::read_coo::<T>(&path) {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            found.push((name, mm.coo.to_csr().expect("a valid matrix")));
        }
    }
    assert!(found.len() >= 3, "expected real matrices in {}", data_dir().display());
    found
}
