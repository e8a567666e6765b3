//! `cargo xtask bench`: builds the criterion benchmarks (`benches/<op>_gpu.rs`), runs each with
//! the results folder, quick mode and matrix folder in its environment while showing
//! progress, then writes the report and prints its path last.
//!
//! The benches verify every result against the CPU reference before recording it, and on a
//! machine without a GPU record the CPU rows and print `GPU benchmarks skipped: <reason>`.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

use crate::report::{self, RunInfo};
use crate::util::{Executable, build_executables, git_commit, repo_root};

/// The operations a benchmark can be selected by.
pub const OPERATIONS: [&str; 4] = ["spmv", "symgs", "gemm", "solve"];

#[derive(clap::Args)]
pub struct Options {
    /// A short run: smaller inputs and fewer repetitions (minutes, not tens of minutes)
    #[arg(long)]
    quick: bool,
    /// Run one operation's benchmarks only
    #[arg(long, value_parser = OPERATIONS)]
    only: Option<String>,
    /// A folder of Matrix Market files for the SpMV inputs (see `cargo xtask fetch-matrices`)
    #[arg(long, value_name = "DIR")]
    matrices: Option<PathBuf>,
    /// Where the result records go [default: target/bench-results]
    #[arg(long, value_name = "DIR")]
    results: Option<PathBuf>,
    /// Where the report goes [default: target/bench-report]
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
}

pub fn run(options: Options) -> Result<()> {
    let results =
        std::path::absolute(options.results.unwrap_or_else(|| repo_root().join("target/bench-results")))?;
    let out = options.out.unwrap_or_else(|| repo_root().join("target/bench-report"));
    if let Some(dir) = &options.matrices
        && !dir.is_dir()
    {
        bail!("--matrices {}: not a folder", dir.display());
    }

    eprintln!("building the benchmarks (cargo bench --no-run)");
    let benches = build_executables(&["bench", "--no-run", "--bench", "*"], |kind, _| kind == "bench")?;
    let selected: Vec<Executable> = benches
        .iter()
        .filter(|b| options.only.as_deref().is_none_or(|op| operation_of(&b.name) == op))
        .cloned()
        .collect();
    if selected.is_empty() {
        let names: Vec<&str> = benches.iter().map(|b| b.name.as_str()).collect();
        bail!("no benchmark for {} yet (benches: {})", options.only.unwrap_or_default(), names.join(", "));
    }

    RunInfo::clear(&results)?;
    let mut info = RunInfo {
        commit: Some(git_commit()),
        date: Some(utc_now()),
        mode: Some(if options.quick { "quick" } else { "full" }.into()),
        failed: Vec::new(),
    };
    let mut env = vec![
        ("RGLA_BENCH_DIR", results.clone().into_os_string()),
        ("RGLA_BENCH_QUICK", if options.quick { "1" } else { "0" }.into()),
        // Beside the results, where the report links it.
        ("CRITERION_HOME", report::criterion_dir(&results).into_os_string()),
    ];
    if let Some(dir) = &options.matrices {
        env.push(("RGLA_BENCH_MATRICES", std::path::absolute(dir)?.into_os_string()));
    }

    let started = Instant::now();
    for (k, bench) in selected.iter().enumerate() {
        let label = format!("{}/{} {}", k + 1, selected.len(), operation_of(&bench.name));
        let log = results.join(format!("{}.log", bench.name));
        println!("[{label}] {} --bench (log: {})", bench.path.display(), log.display());
        let mut command = Command::new(&bench.path);
        command.arg("--bench").current_dir(repo_root()).envs(env.iter().map(|(k, v)| (k, v)));
        let bench_started = Instant::now();
        let status = run_with_progress(command, &label, &log)?;
        let took = clock(bench_started.elapsed());
        if status.success() {
            println!("[{label}] done in {took}");
        } else {
            println!("[{label}] FAILED ({status}) after {took}; see {}", log.display());
            info.failed.push(format!("{} ({status})", bench.name));
        }
    }
    info.write(&results)?;
    println!("benchmarks: {} run in {}", selected.len(), clock(started.elapsed()));

    let summary = report::write(&results, &out)?;
    println!("\n{}", summary.headline);
    if !info.failed.is_empty() {
        println!("FAILED: {} (their results are not recorded)", info.failed.join(", "));
    }
    println!("report: {}", summary.path.display());
    if !info.failed.is_empty() {
        std::process::exit(1);
    }
    Ok(())
}

/// The operation a bench executable measures: `spmv_gpu` and `spmv` both measure "spmv".
pub fn operation_of(bench: &str) -> &str {
    bench.strip_suffix("_gpu").unwrap_or(bench)
}

/// Runs `command` with stdout and stderr merged into one pipe; shows each line prefixed with
/// `[label mm:ss]` and writes it to `log`.
fn run_with_progress(mut command: Command, label: &str, log: &Path) -> Result<ExitStatus> {
    let (reader, writer) = std::io::pipe()?;
    command.stdout(writer.try_clone()?).stderr(writer);
    let mut child = command.spawn().with_context(|| format!("could not start {command:?}"))?;
    // The command holds the pipe's writing ends: drop it, or the reading never ends.
    drop(command);
    let mut log = std::fs::File::create(log).with_context(|| format!("creating {}", log.display()))?;
    let started = Instant::now();
    let mut stdout = std::io::stdout();
    for line in BufReader::new(reader).lines() {
        let line = line?;
        // Criterion rewrites progress lines with carriage returns on a terminal.
        let line = line.rsplit('\r').next().unwrap_or_default();
        writeln!(log, "{line}")?;
        writeln!(stdout, "[{label} {}] {line}", clock(started.elapsed()))?;
    }
    Ok(child.wait()?)
}

/// `mm:ss`, or `h:mm:ss` past an hour.
fn clock(elapsed: Duration) -> String {
    let s = elapsed.as_secs();
    if s >= 3600 {
        format!("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
    } else {
        format!("{:02}:{:02}", s / 60, s % 60)
    }
}

/// The current time in UTC, as `date` prints it (std has no calendar).
fn utc_now() -> String {
    crate::util::output(Command::new("date").args(["-u", "+%Y-%m-%d %H:%M UTC"]))
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|_| "unknown".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn operations_from_bench_names() {
        assert_eq!(operation_of("spmv_gpu"), "spmv");
        assert_eq!(operation_of("gemm"), "gemm");
    }

    #[test]
    fn clock_format() {
        assert_eq!(clock(Duration::from_secs(75)), "01:15");
        assert_eq!(clock(Duration::from_secs(3725)), "1:02:05");
    }
}
