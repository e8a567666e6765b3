//! Assembles the PTX with NVIDIA's `ptxas` (no GPU needed), reports resources per kernel, and
//! fails where a kernel keeps anything in local memory (a stack frame or spills). ptxas comes
//! from the PyPI wheel `nvidia-cuda-nvcc-cu12`, unpacked into `target/ptxas/`.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::util::{cargo, output, ptx_modules, repo_root, run_command};

const WHEEL: &str = "nvidia-cuda-nvcc-cu12";
/// GPUs each module is assembled for: the baseline module for every supported generation; an
/// arch-specific module (sm_90a) for its own architecture only.
const ARCHES: [&str; 3] = ["sm_80", "sm_90", "sm_90a"];

pub fn run() -> Result<()> {
    // The host build script builds the PTX; make sure it is current.
    run_command(cargo().args(["build", "--quiet", "-p", "rgla"]))?;
    let modules = ptx_modules();
    if modules.is_empty() {
        bail!("no PTX under target/ptx/ after the host build");
    }
    let ptxas = ensure_ptxas()?;
    for (module, ptx) in &modules {
        // A module runs on its own architecture and every newer one; an arch-specific module
        // (and an arch-specific target) on its own only.
        let number =
            |arch: &str| arch.trim_start_matches("sm_").trim_end_matches('a').parse::<u32>().unwrap_or(0);
        let specific = |arch: &str| arch.ends_with('a');
        let runs = |arch: &&&str| match (specific(module), specific(arch)) {
            (false, false) => number(arch) >= number(module),
            (true, true) => *arch == module,
            _ => false,
        };
        for arch in ARCHES.iter().filter(runs) {
            let report = assemble(&ptxas, ptx, arch)?;
            print_report(&format!("{module} module on {arch}"), &report);
            let problems = local_memory(&report);
            if !problems.is_empty() {
                bail!("kernels in local memory, {module} module on {arch}:\n{}", problems.join("\n"));
            }
        }
    }
    Ok(())
}

/// The kernels that keep anything in local memory: a stack frame (an array rustc did not keep
/// in registers, which ptxas may report at the same register count, PERF.md) or spilled
/// registers. Every kernel keeps its values in registers and shared memory, so any is a
/// regression.
fn local_memory(kernels: &[KernelReport]) -> Vec<String> {
    kernels
        .iter()
        .filter(|k| k.stack_bytes + k.spill_stores + k.spill_loads > 0)
        .map(|k| {
            format!(
                "  {}: {} bytes stack frame, {} / {} bytes spill stores / loads",
                k.name, k.stack_bytes, k.spill_stores, k.spill_loads
            )
        })
        .collect()
}

/// Resources of one entry point as ptxas reports them.
#[derive(Default)]
struct KernelReport {
    name: String,
    registers: u32,
    shared_bytes: u32,
    stack_bytes: u32,
    spill_stores: u32,
    spill_loads: u32,
}

fn assemble(ptxas: &Path, ptx: &Path, arch: &str) -> Result<Vec<KernelReport>> {
    let out = Command::new(ptxas)
        .args(["-v", "-O3", &format!("-arch={arch}"), "-o", "/dev/null"])
        .arg(ptx)
        .output()
        .with_context(|| format!("could not run {}", ptxas.display()))?;
    let log = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() || log.contains("error") {
        bail!("ptxas failed for {arch} on {}:\n{log}", ptx.display());
    }
    // ptxas still assembles a kernel whose warpgroup products it cannot overlap safely (a
    // register of one rewritten while it may run, a call inside the pipeline), but runs them
    // one at a time: a silent loss of half the speed.
    if let Some(line) = log.lines().find(|l| l.contains("wgmma.mma_async instructions are serialized")) {
        bail!("ptxas serializes warpgroup products for {arch} on {}:\n{line}", ptx.display());
    }
    Ok(parse(&log))
}

/// Parses `ptxas -v`: an entry's block starts at "Compiling entry function 'name'", then
/// "Function properties for name" with "N bytes stack frame, N bytes spill stores, N bytes
/// spill loads", and "Used N registers, ... N bytes smem". Properties of other functions (a
/// device function the PTX keeps, such as core's panic_fmt) follow an entry's block and are
/// not the entry's.
fn parse(log: &str) -> Vec<KernelReport> {
    let mut kernels: Vec<KernelReport> = Vec::new();
    let number_before = |line: &str, unit: &str| -> u32 {
        line.split(',')
            .find(|part| part.contains(unit))
            .and_then(|part| part.split_whitespace().rev().find_map(|w| w.parse().ok()))
            .unwrap_or(0)
    };
    let quoted = |rest: &str| rest.split('\'').next().unwrap_or_default().trim().to_string();
    // The function whose properties the next "bytes stack frame" line gives.
    let mut properties_of = String::new();
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            kernels.push(KernelReport { name: quoted(rest), ..Default::default() });
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of = quoted(rest);
        } else if let Some(k) = kernels.last_mut() {
            if line.contains("bytes stack frame") && properties_of == k.name {
                k.stack_bytes = first_number(line);
                k.spill_stores = number_before(line, "spill stores");
                k.spill_loads = number_before(line, "spill loads");
            } else if line.contains("Used") && line.contains("registers") {
                k.registers = line
                    .split("Used ")
                    .nth(1)
                    .and_then(|s| s.split_whitespace().next())
                    .and_then(|s| s.parse().ok())
                    .unwrap_or(0);
                k.shared_bytes = number_before(line, "bytes smem");
            }
        }
    }
    kernels.sort_by(|a, b| a.name.cmp(&b.name));
    kernels
}

fn first_number(line: &str) -> u32 {
    line.split_whitespace().find_map(|w| w.parse().ok()).unwrap_or(0)
}

fn print_report(what: &str, kernels: &[KernelReport]) {
    println!("\nptxas, {what}: {} kernels assembled", kernels.len());
    println!("{:<44} {:>5} {:>8} {:>7} {:>12}", "kernel", "regs", "smem B", "stack B", "spills st/ld");
    for k in kernels {
        let flag = if k.spill_stores + k.spill_loads > 0 { "  <- spills" } else { "" };
        println!(
            "{:<44} {:>5} {:>8} {:>7} {:>6}/{:<5}{flag}",
            k.name, k.registers, k.shared_bytes, k.stack_bytes, k.spill_stores, k.spill_loads
        );
    }
}

/// `ptxas` from PATH, from `PTXAS`, or unpacked from the PyPI wheel into `target/ptxas/`.
fn ensure_ptxas() -> Result<PathBuf> {
    if let Ok(path) = std::env::var("PTXAS") {
        return Ok(PathBuf::from(path));
    }
    let dir = repo_root().join("target/ptxas");
    let ptxas = dir.join("ptxas");
    if ptxas.exists() {
        return Ok(ptxas);
    }
    if Command::new("ptxas").arg("--version").output().is_ok_and(|o| o.status.success()) {
        return Ok(PathBuf::from("ptxas"));
    }
    std::fs::create_dir_all(&dir)?;
    eprintln!("installing ptxas from the PyPI wheel {WHEEL} into {}", dir.display());
    let python = if Command::new("python3").arg("--version").output().is_ok() { "python3" } else { "python" };
    run_command(
        Command::new(python)
            .args(["-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:"])
            .args(["--platform", "manylinux2014_x86_64", "--python-version", "3.11", WHEEL, "-d"])
            .arg(&dir),
    )
    .context("could not download ptxas (needs python3 with pip and access to PyPI)")?;
    // A wheel is a zip; python's zipfile unpacks the one file we need.
    let unpack = "import sys, zipfile, glob\n\
        whl = sorted(glob.glob(sys.argv[1] + '/*.whl'))[-1]\n\
        open(sys.argv[2], 'wb').write(zipfile.ZipFile(whl).read('nvidia/cuda_nvcc/bin/ptxas'))";
    output(Command::new(python).args(["-c", unpack]).arg(&dir).arg(&ptxas))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&ptxas, std::fs::Permissions::from_mode(0o755))?;
    }
    for whl in std::fs::read_dir(&dir)?.flatten().filter(|e| e.path().extension().is_some_and(|x| x == "whl"))
    {
        std::fs::remove_file(whl.path())?;
    }
    Ok(ptxas)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ptxas_verbose_output() {
        let log = "ptxas info    : Compiling entry function 'spmv_csr_f64' for 'sm_90'
ptxas info    : Function properties for spmv_csr_f64
    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads
ptxas info    : Used 40 registers, used 1 barriers, 1024 bytes smem
ptxas info    : Function properties for _RNvNtCs0_4core9panicking9panic_fmt
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Compiling entry function 'axpy_f32' for 'sm_90'
ptxas info    : Function properties for axpy_f32
    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
ptxas info    : Used 10 registers, used 0 barriers";
        let k = parse(log);
        assert_eq!(k.len(), 2);
        assert_eq!((k[0].name.as_str(), k[0].registers, k[0].shared_bytes), ("axpy_f32", 10, 0));
        let s = &k[1];
        assert_eq!(
            (s.registers, s.shared_bytes, s.stack_bytes, s.spill_stores, s.spill_loads),
            (40, 1024, 8, 4, 12)
        );
        let problems = local_memory(&k);
        assert_eq!(problems.len(), 1, "{problems:?}");
        assert!(problems[0].contains("spmv_csr_f64: 8 bytes stack frame"), "{problems:?}");
    }
}
