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

/// The kernels' PTX modules the host build script builds: (architecture, path).
pub fn ptx_modules() -> Vec<(String, PathBuf)> {
    let dir = repo_root().join("target/ptx");
    let mut modules: Vec<(String, PathBuf)> = std::fs::read_dir(&dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let arch = e.file_name().to_string_lossy().into_owned();
            let ptx = e.path().join("nvptx64-nvidia-cuda/release/kernels.ptx");
            (arch.starts_with("sm_") && ptx.exists()).then_some((arch, ptx))
        })
        .collect();
    modules.sort();
    modules
}
