//! Builds the `kernels` crate for `nvptx64-nvidia-cuda` and embeds the PTX in this crate
//! (the role `cuda_builder` plays in rust-cuda): one module per architecture in
//! `KERNELS_ARCHES` (default `sm_80,sm_90,sm_90a`), listed in `$OUT_DIR/ptx_modules.rs`. At run
//! time the host loads the newest module the GPU can run (an arch-specific one such as sm_90a
//! only on its own architecture); the driver compiles its PTX for the GPU.
//! Also writes `$OUT_DIR/launchers.rs`, a typed launcher for every `#[gpu::kernel]` of the
//! kernels crate, from the same declarations its entry points come from (`declare`).
//! sm_80 is the baseline every kernel is built for; kernels that need newer instructions are
//! `#[cfg(target_feature = "sm_90")]` in `kernels` and exist only in that module (and sm_90a's,
//! which adds the `#[cfg(target_feature = "sm_90a")]` kernels: Hopper's warpgroup MMA).
//! Example: `KERNELS_ARCHES=sm_80 cargo build` builds the baseline only.

use std::env;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The PTX ISA version the kernels are written for (a target feature of the nvptx backend).
const PTX_ISA: &str = "ptx78";

const TARGET: &str = "nvptx64-nvidia-cuda";
const DEFAULT_ARCHES: &str = "sm_80,sm_90,sm_90a";
/// The PTX ISA of the arch-specific targets (sm_90a needs 8.0).
const PTX_ISA_ARCH_SPECIFIC: &str = "ptx80";

fn main() {
    let manifest_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").unwrap());
    let kernels = manifest_dir.join("kernels");
    let out_dir = PathBuf::from(env::var("OUT_DIR").unwrap());
    let arches = env::var("KERNELS_ARCHES").unwrap_or_else(|_| DEFAULT_ARCHES.to_string());

    println!("cargo:rerun-if-env-changed=KERNELS_ARCHES");
    println!("cargo:rerun-if-changed={}", kernels.join("src").display());
    println!("cargo:rerun-if-changed={}", kernels.join("Cargo.toml").display());

    let declared = declare::scan(&kernels.join("src/lib.rs"))
        .unwrap_or_else(|e| fail(&format!("kernel declarations: {e}")));
    if let Err(e) = std::fs::write(out_dir.join("launchers.rs"), declare::launchers(&declared)) {
        fail(&format!("writing the kernel launchers: {e}"));
    }
    println!("cargo:rerun-if-changed={}", manifest_dir.join("abi/src").display());

    let mut modules = String::from(
        "/// (architecture, e.g. 80 for sm_80; its name, e.g. \"sm_90a\"; PTX), oldest first.\n\
         pub const MODULES: &[(u32, &str, &str)] = &[\n",
    );
    let mut numbers: Vec<(u32, &str)> = Vec::new();
    for arch in arches.split(',').map(str::trim).filter(|a| !a.is_empty()) {
        let digits = arch.strip_prefix("sm_").map(|n| n.strip_suffix('a').unwrap_or(n));
        let Some(number) = digits.and_then(|n| n.parse::<u32>().ok()) else {
            fail(&format!("KERNELS_ARCHES: `{arch}` is not of the form sm_NN or sm_NNa"))
        };
        numbers.push((number, arch));
    }
    numbers.sort();
    for (number, arch) in numbers {
        let ptx = build_ptx(&kernels, &declared, &manifest_dir, &out_dir, arch);
        modules
            .push_str(&format!("    ({number}, {arch:?}, include_str!({:?})),\n", ptx.display().to_string()));
    }
    modules.push_str("];\n");
    if let Err(e) = std::fs::write(out_dir.join("ptx_modules.rs"), modules) {
        fail(&format!("writing the PTX module list: {e}"));
    }
}

/// Builds the kernels for `arch` in their own target directory (so the nested cargo takes no
/// lock the outer one holds, and each architecture's build of `core` stays cached), writes the
/// launch directives the kernels declare (`declare::launch_directives`) and writes the PTX
/// into OUT_DIR, and beside the build as `target/ptx/<arch>/kernels.ptx` (`cargo xtask
/// check-ptx` assembles that one).
fn build_ptx(
    kernels: &Path,
    declared: &[declare::Kernel],
    manifest_dir: &Path,
    out_dir: &Path,
    arch: &str,
) -> PathBuf {
    let target_dir = workspace_target_dir(manifest_dir, out_dir).join("ptx").join(arch);
    let cargo = env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let ptx_isa = if arch.ends_with('a') { PTX_ISA_ARCH_SPECIFIC } else { PTX_ISA };
    let mut cmd = Command::new(cargo);
    cmd.current_dir(kernels)
        .args(["build", "--release", "--target", TARGET, "-Zbuild-std=core"])
        .arg("--target-dir")
        .arg(&target_dir)
        // PTX ISA 7.8 for every architecture (LLVM's default for sm_80 is 7.0): L2 cache
        // hints (`createpolicy`, 7.4) are part of the sm_80 baseline. Drivers of CUDA 11.8 on.
        .env("CARGO_ENCODED_RUSTFLAGS", format!("-Ctarget-cpu={arch}\x1f-Ctarget-feature=+{ptx_isa}"));
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
        fail(&format!("{} ({arch})\n{stderr}", diagnose(&stderr)));
    }
    let built = target_dir.join(TARGET).join("release").join("kernels.ptx");
    let ptx = match std::fs::read_to_string(&built) {
        Ok(ptx) => declare::launch_directives(declared, &ptx),
        Err(e) => fail(&format!("the PTX build succeeded but {} cannot be read: {e}", built.display())),
    };
    let path = out_dir.join(format!("kernels_{arch}.ptx"));
    for to in [&path, &target_dir.join("kernels.ptx")] {
        if let Err(e) = std::fs::write(to, &ptx) {
            fail(&format!("writing {}: {e}", to.display()));
        }
    }
    path
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
        .unwrap_or_else(|| manifest_dir.join("target"))
}
