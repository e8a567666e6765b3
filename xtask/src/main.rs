//! `cargo xtask <command>`: the project's commands.
//!
//! - `bench`: builds the criterion benchmarks, runs them (every result verified before it is
//!   recorded) and writes the report to `target/bench-report/`.
//! - `report`: writes the report from results already recorded (on a GPU machine without
//!   Rust, `bundle/bin/xtask report`).
//! - `fetch-matrices`: downloads the SuiteSparse matrices of the Tor Vergata report.
//! - `bundle`: builds every test and bench executable (PTX embedded) and xtask into
//!   `bundle/`, with `bundle/run-gpu-tests.sh`, `bundle/run-examples.sh` and
//!   `bundle/run-bench.sh`, to carry to a GPU machine that has no Rust.
//! - `check-ptx`: assembles the kernels' PTX with `ptxas` for sm_80, sm_90 and sm_90a (installing
//!   ptxas from PyPI into `target/ptxas/` if needed) and prints registers, shared memory and
//!   spills per kernel; it fails where ptxas serializes a kernel's warpgroup products.

mod bench;
mod bundle;
mod check_ptx;
mod fetch_matrices;
mod report;
mod util;

use anyhow::Result;
use clap::Parser;

#[derive(Parser)]
#[command(name = "cargo xtask", about = "The project's commands")]
enum Command {
    /// Build and run the benchmarks, then write the report (the main job)
    Bench(bench::Options),
    /// Write the report from results already recorded
    Report(report::Options),
    /// Download the SuiteSparse matrices of the Tor Vergata report
    FetchMatrices(fetch_matrices::Options),
    /// Build test and bench executables and xtask into bundle/ for a GPU machine
    Bundle,
    /// Assemble the PTX with ptxas (sm_80, sm_90, sm_90a): registers, shared memory, spills
    CheckPtx,
}

fn main() -> Result<()> {
    match Command::parse() {
        Command::Bench(options) => bench::run(options),
        Command::Report(options) => report::run(options),
        Command::FetchMatrices(options) => fetch_matrices::run(options),
        Command::Bundle => bundle::run(),
        Command::CheckPtx => check_ptx::run(),
    }
}
