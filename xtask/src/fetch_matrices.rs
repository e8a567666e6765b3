//! `cargo xtask fetch-matrices`: downloads the SuiteSparse matrices of the Tor Vergata report
//! (`spmv-csr-hll-torvergata`) as Matrix Market files, for `cargo xtask bench --matrices DIR`.
//! Uses `curl` and `tar`; where the network is unreachable it says which URL failed.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result, bail};

use crate::util::repo_root;

/// The report's test matrices as (SuiteSparse group, name), in the report's order.
pub const TOR_VERGATA: [(&str, &str); 30] = [
    ("vanHeukelum", "cage4"),
    ("Bai", "mhda416"),
    ("HB", "mcfe"),
    ("Bai", "olm1000"),
    ("Sandia", "adder_dcop_32"),
    ("HB", "west2021"),
    ("DRIVCAV", "cavity10"),
    ("Zitney", "rdist2"),
    ("Williams", "cant"),
    ("Simon", "olafu"),
    ("Janna", "Cube_Coup_dt0"),
    ("Janna", "ML_Laplace"),
    ("HB", "bcsstk17"),
    ("Williams", "mac_econ_fwd500"),
    ("Bai", "mhd4800a"),
    ("Williams", "cop20k_A"),
    ("Simon", "raefsky2"),
    ("Bai", "af23560"),
    ("Norris", "lung2"),
    ("Fluorem", "PR02R"),
    ("Botonakis", "FEM_3D_thermal1"),
    ("Schmid", "thermal1"),
    ("Schmid", "thermal2"),
    ("Botonakis", "thermomech_TK"),
    ("Schenk", "nlpkkt80"),
    ("Williams", "webbase-1M"),
    ("IBM_EDA", "dc1"),
    ("SNAP", "amazon0302"),
    ("Schenk_AFE", "af_1_k101"),
    ("SNAP", "roadNet-PA"),
];

#[derive(clap::Args)]
pub struct Options {
    /// Where the .mtx files go [default: target/suitesparse]
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
}

pub fn url(group: &str, name: &str) -> String {
    format!("https://suitesparse-collection-website.herokuapp.com/MM/{group}/{name}.tar.gz")
}

pub fn run(options: Options) -> Result<()> {
    let dir = options.dir.unwrap_or_else(|| repo_root().join("target/suitesparse"));
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    let mut fetched = 0;
    for (k, (group, name)) in TOR_VERGATA.iter().enumerate() {
        let mtx = dir.join(format!("{name}.mtx"));
        if mtx.exists() {
            continue;
        }
        println!("[{}/{}] {name} ({group})", k + 1, TOR_VERGATA.len());
        fetch(&url(group, name), &dir, name)?;
        fetched += 1;
    }
    println!(
        "{} matrices in {} ({fetched} downloaded now); use them with: cargo xtask bench --matrices {}",
        TOR_VERGATA.len(),
        dir.display(),
        dir.display()
    );
    Ok(())
}

/// Downloads and unpacks one archive (`<name>/<name>.mtx`, sometimes with right-hand sides
/// beside it) and keeps only `<dir>/<name>.mtx`.
fn fetch(url: &str, dir: &Path, name: &str) -> Result<()> {
    let archive = dir.join(format!("{name}.tar.gz"));
    let out = Command::new("curl")
        .args(["--fail", "--silent", "--show-error", "--location", "--connect-timeout", "20", "--output"])
        .arg(&archive)
        .arg(url)
        .output()
        .context("could not run curl (is it installed?)")?;
    if !out.status.success() {
        let _ = std::fs::remove_file(&archive);
        let error = String::from_utf8_lossy(&out.stderr).trim().to_string();
        // curl's exit codes for DNS, connection, timeout and TLS failures.
        let unreachable = matches!(out.status.code(), Some(5 | 6 | 7 | 28 | 35 | 56));
        let why = if unreachable {
            "the network is unreachable from this machine (fetch the matrices where it is, then pass \
             the folder with --matrices)"
        } else {
            "the server refused or failed"
        };
        bail!("could not download {url}: {error}: {why}");
    }
    let unpacked = dir.join(name);
    let status = Command::new("tar").arg("-xzf").arg(&archive).arg("-C").arg(dir).status()?;
    if !status.success() {
        bail!("could not unpack {} ({status})", archive.display());
    }
    std::fs::rename(unpacked.join(format!("{name}.mtx")), dir.join(format!("{name}.mtx")))
        .with_context(|| format!("{} has no {name}/{name}.mtx", archive.display()))?;
    std::fs::remove_dir_all(&unpacked)?;
    std::fs::remove_file(&archive)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matrix_table_is_the_reports_list() {
        let mut names: Vec<&str> = TOR_VERGATA.iter().map(|(_, name)| *name).collect();
        names.sort();
        names.dedup();
        assert_eq!(names.len(), 30, "a name is listed twice");
        assert_eq!(
            url("Janna", "ML_Laplace"),
            "https://suitesparse-collection-website.herokuapp.com/MM/Janna/ML_Laplace.tar.gz"
        );
    }
}
