//! Small helpers shared by the commands.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};
use serde_json::Value;

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
            let ptx = e.path().join("kernels.ptx");
            (arch.starts_with("sm_") && ptx.exists()).then_some((arch, ptx))
        })
        .collect();
    modules.sort();
    modules
}

/// The short commit of the repository, with `-dirty` when tracked files have changes.
pub fn git_commit() -> String {
    let git = |args: &[&str]| output(Command::new("git").args(args).current_dir(repo_root()));
    let Ok(commit) = git(&["rev-parse", "--short", "HEAD"]) else { return "unknown".into() };
    let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
        .map(|s| if s.trim().is_empty() { "" } else { "-dirty" })
        .unwrap_or("");
    format!("{}{dirty}", commit.trim())
}

/// An executable that cargo built: its target's name and path.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Executable {
    pub name: String,
    pub path: PathBuf,
}

/// Runs `cargo <args> --message-format=json-render-diagnostics` (diagnostics still shown) and
/// returns the executables that `keep(target kind, is test harness)` selects, sorted by name.
pub fn build_executables(args: &[&str], keep: impl Fn(&str, bool) -> bool) -> Result<Vec<Executable>> {
    let json = output(cargo().args(args).arg("--message-format=json-render-diagnostics"))?;
    let mut found = Vec::new();
    for line in json.lines() {
        let Ok(message) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if message["reason"] != "compiler-artifact" {
            continue;
        }
        let Some(executable) = message["executable"].as_str() else {
            continue;
        };
        let kind = message["target"]["kind"][0].as_str().unwrap_or_default();
        let is_test = message["profile"]["test"].as_bool().unwrap_or(false);
        if keep(kind, is_test) {
            let target = message["target"]["name"].as_str().unwrap_or("unnamed");
            let package = message["package_id"].as_str().unwrap_or_default();
            // Unit tests of a library are named after their package to stay unique.
            let name =
                if kind == "lib" { format!("{}-unit", package_name(package)) } else { target.to_string() };
            found.push(Executable { name, path: PathBuf::from(executable) });
        }
    }
    found.sort();
    found.dedup_by(|a, b| a.name == b.name);
    Ok(found)
}

/// The package name in an id: `path+file:///r/host#0.1.0` (named after its folder) or
/// `path+file:///r#rgla@0.1.0`.
fn package_name(id: &str) -> &str {
    let (path, fragment) = id.split_once('#').unwrap_or((id, ""));
    match fragment.split_once('@') {
        Some((name, _)) => name,
        None => path.rsplit('/').next().unwrap_or(path),
    }
}

pub fn set_executable(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn package_names_from_ids() {
        assert_eq!(super::package_name("path+file:///work/main/host#0.1.0"), "host");
        assert_eq!(super::package_name("path+file:///work/main#rgla@0.1.0"), "rgla");
    }
}
