//! Writes the `extern "ptx-kernel"` entry points of every `#[gpu::kernel]` function (see the
//! `declare` crate) to `$OUT_DIR/entry_points.rs`, which `lib.rs` includes.

use std::path::PathBuf;

fn main() {
    let src = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("src");
    println!("cargo:rerun-if-changed={}", src.display());
    let kernels = declare::scan(&src.join("lib.rs")).unwrap_or_else(|e| {
        eprintln!("kernel declarations: {e}");
        std::process::exit(1)
    });
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("entry_points.rs");
    std::fs::write(&out, declare::entry_points(&kernels)).expect("writing the entry points");
}
