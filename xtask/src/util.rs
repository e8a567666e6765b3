//! Small helpers shared by the commands.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

/// The repository root (the parent of `xtask/`).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("xtask lives in the repo").to_path_buf()
}

/// `cargo` as the one running us (the pinned toolchain).
pub fn cargo() -> Command {
    let mut cmd = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    cmd.current_dir(repo_root());
    cmd
}

/// Runs `cmd`, failing with its command line if it does not succeed.
pub fn run_command(cmd: &mut Command) -> Result<()> {
    let status = cmd.status().with_context(|| format!("could not start {cmd:?}"))?;
    if !status.success() {
        bail!("{cmd:?} failed with {status}");
    }
    Ok(())
}

/// Runs `cmd` and returns its standard output; stderr passes through.
pub fn output(cmd: &mut Command) -> Result<String> {
    let out = cmd
        .stderr(std::process::Stdio::inherit())
        .output()
        .with_context(|| format!("could not start {cmd:?}"))?;
    if !out.status.success() {
        bail!("{cmd:?} failed with {}", out.status);
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Where the host build script puts the kernels' PTX.
pub fn ptx_path() -> PathBuf {
    repo_root().join("target/ptx/nvptx64-nvidia-cuda/release/kernels.ptx")
}
