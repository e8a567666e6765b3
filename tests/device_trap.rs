//! A device-side panic traps; the error names the kernel. Its own test binary because a trap
//! leaves the process's CUDA context unusable for every other test in it.

mod common;

use host::Error;
use host::Launch;
use host::gpu::PushKernelArg;

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn device_panic_traps_and_the_error_names_the_kernel() {
    let gpu = common::gpu();
    let k = gpu.kernel("test_trap").unwrap();
    let mut out = gpu.zeros::<u32>(1).unwrap();
    let index = 7u32; // past the end of the kernel's table: a bounds-check panic, which traps
    unsafe {
        gpu.launch(&k, Launch::linear(1, 32), |a| {
            a.arg(&mut out).arg(&index);
        })
    }
    .unwrap();
    let err = gpu.synchronize().unwrap_err();
    assert!(matches!(err, Error::Device { .. }), "{err}");
    assert!(err.to_string().contains("test_trap"), "{err}");
}
