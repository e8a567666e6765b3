//! A device-side panic traps; the error names the kernel. Its own test binary because a trap
//! leaves the process's CUDA context unusable for every other test in it.

mod common;

use rgla::kernels::device_tests;
use rgla::{Error, Launch};

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn device_panic_traps_and_the_error_names_the_kernel() {
    let gpu = common::gpu();
    let mut out = gpu.zeros::<u32>(1).unwrap();
    let index = 7u32; // past the end of the kernel's table: a bounds-check panic, which traps
    // SAFETY: `out` holds the one word the kernel writes; the bad index is the test.
    unsafe { device_tests::trap(&gpu, Launch::linear(1, 32), &mut out, index) }.unwrap();
    let err = gpu.synchronize().unwrap_err();
    assert!(matches!(err, Error::Device { .. }), "{err}");
    assert!(err.to_string().contains("device_tests_trap"), "{err}");
}
