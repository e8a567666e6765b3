//! Shared by the integration tests.
//!
//! GPU tests are `#[ignore = "needs a CUDA GPU ..."]`: `cargo test` lists them as ignored
//! (skipped, by name) on a machine without one, and the bundle's script runs them with
//! `--include-ignored` on a GPU machine, where a missing GPU is a failure, never a pass.
#![allow(dead_code)]

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};
use rgla::Gpu;

/// The GPU, or a panic that says why there is none.
pub fn gpu() -> Gpu {
    Gpu::new().unwrap_or_else(|e| panic!("this GPU test needs a CUDA GPU: {e}"))
}

/// The GPU, if it runs the sm_90 PTX (Hopper-only kernels); otherwise None, and the test
/// `what` is reported as skipped.
pub fn sm90_gpu(what: &str) -> Option<Gpu> {
    let gpu = gpu();
    if gpu.ptx_arch() < 90 {
        eprintln!("SKIPPED {what}: needs sm_90, this GPU runs the sm_{} PTX", gpu.ptx_arch());
        return None;
    }
    Some(gpu)
}

/// `len` random values in [-1, 1) from a fixed seed.
pub fn random_vec<T: rgla::Scalar>(len: usize, seed: u64) -> Vec<T> {
    let mut rng = StdRng::seed_from_u64(seed);
    (0..len).map(|_| T::from_f64(rng.random_range(-1.0..1.0))).collect()
}

/// Whether a CPU reference holds NaN or infinity, and if so says that `what` is not compared:
/// its sweep diverged past overflow in this precision (Gauss-Seidel on olm1000, or on the
/// all-ones values of pattern files such as dwt_878), so there is nothing to compare with.
pub fn overflowed<T: rgla::Scalar>(what: &str, reference: &[T]) -> bool {
    let overflowed = !reference.iter().all(|v| v.is_finite());
    if overflowed {
        println!("{what}: the CPU reference overflows in this precision: not compared");
    }
    overflowed
}

/// The folder of test files: `RGLA_TEST_DATA` (set by the bundle's script, whose checkout may
/// sit elsewhere than where the tests were built), else `tests/data` of this checkout.
pub fn data_dir() -> std::path::PathBuf {
    std::env::var_os("RGLA_TEST_DATA")
        .map(Into::into)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data"))
}

/// The real-valued, integer and pattern coordinate files of the test data, and of the folder
/// `RGLA_MORE_MATRICES` where that is set (say `../shared/matrices`: the same tests on more
/// real inputs in one process; names already in the test data are skipped), as CSR. Complex
/// and dense `array` files are skipped; any other read error fails the test.
pub fn real_matrices<T: rgla::Scalar>() -> Vec<(String, rgla::sparse::Csr<T>)> {
    let mut files = mtx_files(&data_dir());
    if let Some(more) = std::env::var_os("RGLA_MORE_MATRICES") {
        let more = mtx_files(std::path::Path::new(&more));
        println!("RGLA_MORE_MATRICES: {} more files", more.len());
        let known: Vec<_> = files.iter().map(|path| path.file_name().map(ToOwned::to_owned)).collect();
        files.extend(
            more.into_iter().filter(|path| !known.contains(&path.file_name().map(ToOwned::to_owned))),
        );
    }
    let mut matrices = Vec::new();
    for path in files {
        let banner =
            std::fs::read_to_string(&path).unwrap().lines().next().unwrap_or("").to_ascii_lowercase();
        if banner.contains("complex") || banner.contains(" array ") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let file = rgla::mm::read_coo::<T>(&path).unwrap_or_else(|e| panic!("{name}: {e}"));
        matrices.push((name, file.coo.to_csr().unwrap()));
    }
    assert!(
        matrices.len() >= 5,
        "expected the real and pattern files of the test data, found {}",
        matrices.len()
    );
    matrices
}

/// The `.mtx` files of `folder`, sorted.
fn mtx_files(folder: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut files: Vec<_> = std::fs::read_dir(folder)
        .unwrap_or_else(|e| panic!("the matrix folder {}: {e}", folder.display()))
        .map(|entry| entry.unwrap().path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "mtx"))
        .collect();
    files.sort();
    files
}
