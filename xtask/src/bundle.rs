//! `cargo xtask bundle`: everything a GPU machine without Rust needs to run our tests and
//! benchmarks, in `bundle/` (ignored by git, carried to the GPU machine).
//!
//! Layout: `bundle/tests/*` and `bundle/benches/*` (stripped executables with the PTX
//! embedded), `bundle/bin/*` (the CLI), `bundle/run-gpu-tests.sh`, `bundle/COMMIT`.

use std::fs;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::util::{cargo, output, repo_root};

const PROFILE: &str = "bundle";

pub fn run(args: &[String]) -> Result<()> {
    if let Some(arg) = args.first() {
        bail!("bundle takes no arguments (got `{arg}`)");
    }
    let bundle = repo_root().join("bundle");
    if bundle.exists() {
        fs::remove_dir_all(&bundle)?;
    }
    let tests = build(&["test", "--workspace", "--no-run"], |kind, test| test && kind != "bench")?;
    let benches = build(&["bench", "--workspace", "--no-run"], |kind, _| kind == "bench")?;
    let bins = build(&["build", "--workspace", "--bins", "--exclude", "xtask"], |kind, test| {
        kind == "bin" && !test
    })?;
    let mut total = 0u64;
    for (folder, files) in [("tests", &tests), ("benches", &benches), ("bin", &bins)] {
        let dir = bundle.join(folder);
        fs::create_dir_all(&dir)?;
        for (name, path) in files.iter() {
            total += fs::copy(path, dir.join(name)).with_context(|| format!("copying {}", path.display()))?;
        }
    }
    let script = bundle.join("run-gpu-tests.sh");
    fs::write(&script, RUN_GPU_TESTS)?;
    set_executable(&script)?;
    let commit = output(std::process::Command::new("git").args(["rev-parse", "--short", "HEAD"]))
        .unwrap_or_else(|_| "unknown".into());
    let dirty =
        output(std::process::Command::new("git").args(["status", "--porcelain", "--untracked-files=no"]))
            .map(|s| if s.trim().is_empty() { "" } else { "-dirty" })
            .unwrap_or("");
    fs::write(bundle.join("COMMIT"), format!("{}{dirty}\n", commit.trim()))?;
    println!(
        "bundle/: {} test, {} bench and {} CLI executables, {:.1} MiB; on a GPU machine run bundle/run-gpu-tests.sh from the repository root",
        tests.len(),
        benches.len(),
        bins.len(),
        total as f64 / (1u64 << 20) as f64
    );
    Ok(())
}

/// Builds with `cargo <args> --profile bundle` and returns (target name, executable) for the
/// artifacts that `keep(target kind, is test harness)` selects.
fn build(args: &[&str], keep: impl Fn(&str, bool) -> bool) -> Result<Vec<(String, PathBuf)>> {
    let json =
        output(cargo().args(args).args(["--profile", PROFILE, "--message-format=json-render-diagnostics"]))?;
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
            found.push((name, PathBuf::from(executable)));
        }
    }
    found.sort();
    found.dedup_by(|a, b| a.0 == b.0);
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

fn set_executable(path: &Path) -> Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(path, fs::Permissions::from_mode(0o755))?;
    }
    Ok(())
}

const RUN_GPU_TESTS: &str = r#"#!/bin/sh
# Runs every test executable of the bundle with the GPU tests included (--include-ignored),
# from the repository root (tests read tests/data), and prints a summary last.
# Usage: bundle/run-gpu-tests.sh [filter]     (TEST_THREADS sets the threads per binary)
cd "$(dirname "$0")/.." || exit 2
export RGLA_TEST_DATA="$PWD/tests/data"
log="${OUT:-/tmp}/gpu-tests.log"
: > "$log"
echo "commit $(cat bundle/COMMIT); GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
passed=0; failed=0; ignored=0; broken=""
for t in bundle/tests/*; do
    name=$(basename "$t")
    out=$("$t" --include-ignored --test-threads="${TEST_THREADS:-8}" $1 2>&1)
    status=$?
    printf '=== %s\n%s\n' "$name" "$out" >> "$log"
    result=$(printf '%s\n' "$out" | grep '^test result:' | tail -n 1)
    p=$(printf '%s' "$result" | sed -n 's/.* \([0-9][0-9]*\) passed.*/\1/p')
    f=$(printf '%s' "$result" | sed -n 's/.* \([0-9][0-9]*\) failed.*/\1/p')
    i=$(printf '%s' "$result" | sed -n 's/.* \([0-9][0-9]*\) ignored.*/\1/p')
    passed=$((passed + ${p:-0})); failed=$((failed + ${f:-0})); ignored=$((ignored + ${i:-0}))
    if [ "$status" -ne 0 ]; then
        broken="$broken $name"
        printf '%s\n' "$out" | grep -E '^(test .* FAILED|---- |thread .* panicked)' -A 4 | head -n 60
    fi
    printf '%-28s %s\n' "$name" "${result:-no result (exit $status)}"
done
[ -n "$broken" ] && echo "failing executables:$broken (full log: $log)"
echo "gpu-tests: $passed passed, $failed failed, $ignored ignored"
[ -z "$broken" ]
"#;

#[cfg(test)]
mod tests {
    #[test]
    fn package_names_from_ids() {
        assert_eq!(super::package_name("path+file:///work/main/host#0.1.0"), "host");
        assert_eq!(super::package_name("path+file:///work/main#rgla@0.1.0"), "rgla");
    }
}
