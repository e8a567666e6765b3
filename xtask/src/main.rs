//! `cargo xtask <command>`: the project's commands.
//!
//! - `bundle`: builds every test and bench executable (PTX embedded) into `bundle/`, with
//!   `bundle/run-gpu-tests.sh`, to carry to a GPU machine that has no Rust.
//! - `check-ptx`: assembles the kernels' PTX with `ptxas` for sm_80 and sm_90 (installing
//!   ptxas from PyPI into `target/ptxas/` if needed) and prints registers, shared memory and
//!   spills per kernel.

mod bundle;
mod check_ptx;
mod util;

use anyhow::{Result, bail};

const USAGE: &str = "usage: cargo xtask <command>

commands:
  bundle      build test and bench executables into bundle/ for a GPU machine
  check-ptx   assemble the PTX with ptxas (sm_80, sm_90); registers, shared memory, spills";

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some("bundle") => bundle::run(&args[1..]),
        Some("check-ptx") => check_ptx::run(&args[1..]),
        Some("-h" | "--help" | "help") | None => {
            println!("{USAGE}");
            Ok(())
        }
        Some(other) => bail!("unknown command `{other}`\n\n{USAGE}"),
    }
}
