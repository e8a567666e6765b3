//! The runtime reports the GPU situation truthfully: with no driver, `Gpu::new` is the
//! `NoDriver` error (never a panic); with one, it opens the device.

#[test]
fn gpu_presence_is_reported_truthfully() {
    match (rgla::gpu::driver_present(), rgla::Gpu::new()) {
        (false, Err(err)) => {
            assert!(matches!(err, rgla::Error::NoDriver), "{err}");
            assert!(err.to_string().contains("no CUDA driver"), "{err}");
        }
        (false, Ok(_)) => panic!("no CUDA driver, yet a GPU was opened"),
        (true, Ok(gpu)) => assert!(gpu.props().sm_count > 0, "{}", gpu.props()),
        // A driver without a usable device (e.g. a container without the GPU) must say so.
        (true, Err(err)) => assert!(matches!(err, rgla::Error::NoDevice(_)), "{err}"),
    }
}
