//! `cargo xtask bundle`: everything a GPU machine without Rust needs to run our tests and
//! benchmarks, in `bundle/` (ignored by git, carried to the GPU machine).
//!
//! Layout: `bundle/tests/*` and `bundle/benches/*` (stripped executables with the PTX
//! embedded), `bundle/examples/*`, `bundle/bin/*` (the CLI, and xtask for `xtask report`),
//! `bundle/run-gpu-tests.sh`, `bundle/run-examples.sh`,
//! `bundle/run-bench.sh`, `bundle/run-scaling.sh`, `bundle/COMMIT`.

use std::fs;

use anyhow::{Context, Result};

use crate::util::{Executable, build_executables, git_commit, repo_root, run_command, set_executable};

const PROFILE: [&str; 2] = ["--profile", "bundle"];

pub fn run() -> Result<()> {
    let bundle = repo_root().join("bundle");
    if bundle.exists() {
        fs::remove_dir_all(&bundle)?;
    }
    let build =
        |args: &[&str], keep: fn(&str, bool) -> bool| build_executables(&[args, &PROFILE].concat(), keep);
    let tests = build(&["test", "--workspace", "--no-run"], |kind, test| test && kind != "bench")?;
    let benches = build(&["bench", "--workspace", "--no-run"], |kind, _| kind == "bench")?;
    // The CLI and xtask itself: `bundle/bin/xtask report` writes the report on the GPU machine.
    let bins = build(&["build", "--workspace", "--bins"], |kind, test| kind == "bin" && !test)?;
    let examples = build(&["build", "--examples"], |kind, test| kind == "example" && !test)?;
    let mut total = 0u64;
    for (folder, files) in [("tests", &tests), ("benches", &benches), ("examples", &examples), ("bin", &bins)]
    {
        let dir = bundle.join(folder);
        fs::create_dir_all(&dir)?;
        for Executable { name, path } in files.iter() {
            total += fs::copy(path, dir.join(name)).with_context(|| format!("copying {}", path.display()))?;
        }
    }
    for (name, text) in [
        ("run-gpu-tests.sh", RUN_GPU_TESTS),
        ("run-examples.sh", RUN_EXAMPLES),
        ("run-bench.sh", RUN_BENCH),
        ("run-scaling.sh", RUN_SCALING),
    ] {
        let script = bundle.join(name);
        fs::write(&script, text.replace("#@LIBRARIES@\n", LIBRARIES))?;
        set_executable(&script)?;
    }
    fs::write(bundle.join("COMMIT"), format!("{}\n", git_commit()))?;
    // The executables compress about 3x: the archive is what to carry where transfers are
    // limited (unpack with `tar xzf bundle.tar.gz` in the repository root).
    let archive = repo_root().join("bundle.tar.gz");
    run_command(std::process::Command::new("tar").current_dir(repo_root()).args([
        "czf",
        "bundle.tar.gz",
        "bundle",
    ]))?;
    println!(
        "bundle/: {} test, {} bench, {} example and {} other executables, {:.1} MiB ({:.1} MiB as bundle.tar.gz); \
         on a GPU machine run bundle/run-gpu-tests.sh, run-examples.sh or run-bench.sh from the repository root",
        tests.len(),
        benches.len(),
        examples.len(),
        bins.len(),
        total as f64 / (1u64 << 20) as f64,
        fs::metadata(&archive)?.len() as f64 / (1u64 << 20) as f64
    );
    Ok(())
}

/// Where each script finds the libraries loaded at run time.
const LIBRARIES: &str = r#"# cuSPARSE, cuBLAS and cuSOLVER are loaded at run time: find a CUDA toolkit's copies too.
[ -d /usr/local/cuda/lib64 ] && export LD_LIBRARY_PATH="/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# So is NCCL (the distributed product and PCG): NCCL_LIBRARY, else the Python packages' copy
# (nvidia-nccl-cu13), linked under the name the loader looks for. NVLink multicast stays off;
# so do cuMem buffers, with which NCCL between processes on one host made CG 2.5x slower.
nccl="${NCCL_LIBRARY:-$(python3 -c 'import glob, nvidia.nccl; print(glob.glob(list(nvidia.nccl.__path__)[0] + "/lib/libnccl.so*")[0])' 2>/dev/null)}"
if [ -f "$nccl" ]; then
    mkdir -p /tmp/rgla-nccl && ln -sf "$nccl" /tmp/rgla-nccl/libnccl.so
    export LD_LIBRARY_PATH="/tmp/rgla-nccl:$LD_LIBRARY_PATH"
fi
export NCCL_NVLS_ENABLE=0
export NCCL_CUMEM_ENABLE="${NCCL_CUMEM_ENABLE:-0}"
"#;

const RUN_GPU_TESTS: &str = r#"#!/bin/sh
# Runs every test executable of the bundle with the GPU tests included (--include-ignored),
# from the repository root (tests read tests/data), and prints a summary last.
# Usage: bundle/run-gpu-tests.sh [filter]     (TEST_THREADS sets the threads per binary)
cd "$(dirname "$0")/.." || exit 2
#@LIBRARIES@
export RGLA_TEST_DATA="$PWD/tests/data"
# The GPU machines have NCCL: its tests fail rather than skip without it.
export RGLA_REQUIRE_NCCL=1
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

const RUN_EXAMPLES: &str = r#"#!/bin/sh
# Runs the examples as a user would (each prints its verified results) and checks that a
# problem too large for the machine fails at once with a message; a summary line last.
cd "$(dirname "$0")/.." || exit 2
#@LIBRARIES@
echo "commit $(cat bundle/COMMIT); GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"
failed=""
run() {
    echo "\$ $*"
    "$@" || failed="$failed $(basename "$1")"
}
run bundle/examples/spmv_file tests/data/cage4.mtx
run bundle/examples/spmv_file tests/data/Trefethen_150.mtx
run bundle/examples/pcg
run bundle/examples/custom_kernel
for kernel in cpu-rayon blocked; do
    echo "\$ rgla gemm --m 200000 --k 200000 --n 200000 --kernel $kernel"
    start=$(date +%s)
    bundle/bin/rgla gemm --m 200000 --k 200000 --n 200000 --kernel "$kernel"
    status=$?
    [ "$status" -eq 0 ] && failed="$failed too-large-gemm-ran"
    echo "(exit status $status, after $(($(date +%s) - start)) s)"
done
echo "examples: ${failed:-all passed}${failed:+ failed:$failed}"
[ -z "$failed" ]
"#;

const RUN_BENCH: &str = r#"#!/bin/sh
# Runs the bundled benchmarks (each result verified against the CPU reference before it is
# recorded), writes the report with bundle/bin/xtask and prints its headline last.
# Usage: bundle/run-bench.sh [--quick] [--only spmv|symgs|gemm|solve]
# Results: ${OUT:-/tmp}/bench-results (records, one log per bench, run.txt); report:
# ${OUT:-/tmp}/bench-report; criterion: $CRITERION_HOME if set (outside $OUT, its many folders
# stay behind), else ${OUT:-/tmp}/criterion. RGLA_BENCH_MATRICES, a folder of Matrix Market
# files, passes through to the benches.
cd "$(dirname "$0")/.." || exit 2
#@LIBRARIES@
quick=0; only=""
while [ $# -gt 0 ]; do
    case "$1" in
        --quick) quick=1 ;;
        --only) only="$2"; shift ;;
        *) echo "usage: bundle/run-bench.sh [--quick] [--only spmv|symgs|gemm|solve]" >&2; exit 2 ;;
    esac
    shift
done
out="${OUT:-/tmp}"
results="$out/bench-results"
mkdir -p "$results" || exit 2
rm -f "$results"/*.jsonl "$results"/*.log "$results"/run.txt
export RGLA_BENCH_DIR="$results" RGLA_BENCH_QUICK="$quick" CRITERION_HOME="${CRITERION_HOME:-$out/criterion}"
mode=full; [ "$quick" = 1 ] && mode=quick
# The same keys as `cargo xtask bench` writes (xtask/src/report/mod.rs, RunInfo).
printf 'commit=%s\ndate=%s\nmode=%s\n' "$(cat bundle/COMMIT)" "$(date -u '+%Y-%m-%d %H:%M UTC')" "$mode" > "$results/run.txt"
echo "commit $(cat bundle/COMMIT); GPU: $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null || echo 'nvidia-smi not found')"

selected=""
for b in bundle/benches/*; do
    op=$(basename "$b"); op=${op%_gpu}
    [ -z "$only" ] || [ "$op" = "$only" ] && selected="$selected $b"
done
[ -n "$selected" ] || { echo "no benchmark for '$only' in bundle/benches" >&2; exit 2; }
n=$(echo $selected | wc -w); k=0; start=$(date +%s); failed=0
for b in $selected; do
    k=$((k + 1)); name=$(basename "$b"); t0=$(date +%s)
    echo "[$k/$n] $name: running (log: $results/$name.log)"
    "$b" --bench > "$results/$name.log" 2>&1
    status=$?
    grep '^GPU benchmarks skipped:' "$results/$name.log"
    t=$(($(date +%s) - t0))
    if [ "$status" -ne 0 ]; then
        failed=1
        echo "failed=$name (exit status: $status)" >> "$results/run.txt"
        tail -n 20 "$results/$name.log"
    fi
    printf '[%d/%d] %s: exit %d after %dm%02ds (all: %ds)\n' "$k" "$n" "$name" "$status" $((t / 60)) $((t % 60)) $(($(date +%s) - start))
done
bundle/bin/xtask report --results "$results" --out "$out/bench-report" || exit 1
[ "$failed" = 0 ]
"#;

const RUN_SCALING: &str = r#"#!/bin/sh
# Scaling over the GPUs of this machine through NCCL, each result verified: weak scaling of
# PCG (stencil27 128^3 per GPU, multicolor SymGS on each part) and strong scaling of SpMV
# (stencil27 256^3), with a thread per GPU; then both on every GPU with a process per GPU.
# Compare the "ms per iteration" and "ms (median" figures across GPU counts.
# Usage: bundle/run-scaling.sh [largest GPU count]
cd "$(dirname "$0")/.." || exit 2
#@LIBRARIES@
present=$(nvidia-smi -L | wc -l)
largest=${1:-$present}
echo "commit $(cat bundle/COMMIT); $present GPUs: $(nvidia-smi --query-gpu=name --format=csv,noheader | sort | uniq -c | tr -s ' ')"
failed=""
run() {
    echo "\$ $*"
    "$@" || failed="$failed [$*]"
}
# `processes N rgla-arguments`: N processes, rank r on GPU r, the NCCL id shared in a file.
processes() {
    n=$1; shift
    id="/tmp/rgla-nccl-id.$$.$n"
    echo "\$ rgla $* --world $n --rank R --nccl-id $id    (R = 0..$((n - 1)), a process each)"
    pids=""
    for r in $(seq 0 $((n - 1))); do
        bundle/bin/rgla "$@" --world "$n" --rank "$r" --nccl-id "$id" > "/tmp/rgla-rank-$r.log" 2>&1 &
        pids="$pids $!"
    done
    for p in $pids; do wait "$p" || failed="$failed [process $p of: $*]"; done
    cat /tmp/rgla-rank-0.log
    for r in $(seq 1 $((n - 1))); do echo "  rank $r: $(tail -n 1 "/tmp/rgla-rank-$r.log")"; done
    rm -f "$id"
}
weak() { echo "pcg --generate stencil27:128x128x$((128 * $1)) --variant multicolor --verify"; }
for g in 1 2 4 8; do
    [ "$g" -le "$largest" ] || break
    run bundle/bin/rgla $(weak "$g") --gpus "$g"
done
for g in 1 2 4 8; do
    [ "$g" -le "$largest" ] || break
    run bundle/bin/rgla spmv --generate stencil27:256 --runs 50 --verify --gpus "$g"
done
if [ "$largest" -ge 2 ]; then
    processes "$largest" $(weak "$largest")
    processes "$largest" spmv --generate stencil27:256 --runs 50 --verify
fi
echo "scaling: ${failed:-all verified}${failed:+ failed:$failed}"
[ -z "$failed" ]
"#;
