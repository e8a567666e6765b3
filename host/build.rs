//! Builds the `kernels` crate for `nvptx64-nvidia-cuda` and embeds the PTX in this crate
//! (the role `cuda_builder` plays in rust-cuda). The PTX lands in `$OUT_DIR/kernels.ptx`.
//!
//! `KERNELS_ARCH` picks the PTX target (default `sm_80`, the oldest GPU we support: the driver
//! compiles it for newer GPUs at load time). Example: `KERNELS_ARCH=sm_90 cargo build`.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

const TARGET: &str = "nvptx64-nvidia-cuda";
const DEFAULT_ARCH: &str = "sm_80";

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let kernels = manifest_dir.join("../kernels");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let arch = env::var("KERNELS_ARCH").unwrap_or_else(|_| DEFAULT_ARCH.to_string());

    println!("cargo:rerun-if-env-changed=KERNELS_ARCH");
    println!("cargo:rerun-if-changed={}", kernels.join("src").display());
    println!("cargo:rerun-if-changed={}", kernels.join("Cargo.toml").display());
    println!("cargo:rustc-env=KERNELS_ARCH={arch}");

    // Its own target directory beside the workspace's, so the nested cargo takes no lock the
    // outer one holds, and the build of `core` is cached between host builds.
    let target_dir = workspace_target_dir(&manifest_dir, &out_dir).join("ptx");
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.current_dir(&kernels)
        .args(["build", "--release", "--target", TARGET, "-Zbuild-std=core"])
        .arg("--target-dir")
        .arg(&target_dir)
        .env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={arch}"));
    // The outer cargo's settings for the host build must not leak into the device build.
    for var in [
        "RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "CARGO_TARGET_DIR",
        "CARGO_BUILD_TARGET",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_MAKEFLAGS",
        "MAKEFLAGS",
        "MFLAGS",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }

    let output = match cmd.output() {
        Ok(output) => output,
        Err(e) => fail(&format!("could not run cargo for the PTX build: {e}")),
    };
    if !output.status.success() {
        let stderr = String::from_utf8_lossy(&output.stderr);
        fail(&format!("{}\n{stderr}", diagnose(&stderr)));
    }

    let ptx = target_dir.join(TARGET).join("release").join("kernels.ptx");
    if let Err(e) = std::fs::copy(&ptx, out_dir.join("kernels.ptx")) {
        fail(&format!("the PTX build succeeded but {} is missing: {e}", ptx.display()));
    }
}

/// Turns the usual toolchain failures into a sentence that says what to install.
fn diagnose(stderr: &str) -> String {
    let hint = if stderr.contains("llvm-bitcode-linker") {
        "the rustup component `llvm-bitcode-linker` is missing: run `rustup component add llvm-bitcode-linker`"
    } else if stderr.contains("rust-src") || stderr.contains("library/Cargo.lock") {
        "the rustup component `rust-src` (needed by -Zbuild-std) is missing: run `rustup component add rust-src`"
    } else if stderr.contains("llvm-tools") || stderr.contains("llc") {
        "the rustup component `llvm-tools` is missing: run `rustup component add llvm-tools`"
    } else if stderr.contains("-Z") && stderr.contains("nightly") {
        "the PTX build needs the nightly toolchain pinned in rust-toolchain.toml: run `rustup toolchain install` in the repository"
    } else {
        "the kernels crate failed to build for nvptx64-nvidia-cuda (see the compiler output below)"
    };
    format!("PTX build failed: {hint}")
}

fn fail(message: &str) -> ! {
    for line in message.lines() {
        println!("cargo:warning={line}");
    }
    eprintln!("{message}");
    std::process::exit(1);
}

/// `target/` of the workspace: OUT_DIR is `<target>/<profile>/build/host-<hash>/out`.
fn workspace_target_dir(manifest_dir: &Path, out_dir: &Path) -> PathBuf {
    if let Ok(dir) = env::var("CARGO_TARGET_DIR") {
        return PathBuf::from(dir);
    }
    out_dir
        .ancestors()
        .find(|p| p.file_name().is_some_and(|n| n == "build"))
        .and_then(|build| build.parent()?.parent())
        .map(Path::to_path_buf)
        .unwrap_or_else(|| manifest_dir.join("../target"))
}
