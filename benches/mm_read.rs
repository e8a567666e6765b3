//! Matrix Market reading throughput (MB/s of file text): our reader against `sprs`'s on the
//! same generated file, `coordinate real general` with 2M entries (about 75 MB), plus ours on
//! the gzip-compressed file.
//!
//! `cargo bench --bench mm_read`. The file is written to a temporary directory at start.

use std::hint::black_box;
use std::path::Path;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::{RngExt, SeedableRng, rngs::StdRng};
use rgla::mm::{self, Field};
use rgla::sparse::Coo;

const ROWS: usize = 1_000_000;
const ENTRIES: usize = 2_000_000;

/// Random entries with full-precision values (17 significant digits, the slowest to parse).
fn random_coo() -> Coo<f64> {
    let mut rng = StdRng::seed_from_u64(42);
    let mut coo = Coo::new(ROWS, ROWS);
    for _ in 0..ENTRIES {
        coo.row_indices.push(rng.random_range(0..ROWS as u32));
        coo.col_indices.push(rng.random_range(0..ROWS as u32));
        coo.values.push(rng.random_range(-1.0..1.0));
    }
    coo
}

fn file_bytes(path: &Path) -> u64 {
    std::fs::metadata(path).expect("the generated file exists").len()
}

fn bench_read(c: &mut Criterion) {
    let dir = tempfile::tempdir().expect("a temporary directory");
    let plain = dir.path().join("random.mtx");
    let compressed = dir.path().join("random.mtx.gz");
    let coo = random_coo();
    mm::write_coo(&plain, &coo, Field::Real).expect("writing the bench file");
    mm::write_coo(&compressed, &coo, Field::Real).expect("writing the compressed bench file");

    // Both readers must see the same matrix before their times mean anything.
    let ours = mm::read_coo::<f64>(&plain).expect("our reader reads the file");
    assert_eq!(ours.coo, coo);
    let theirs: sprs::TriMat<f64> = sprs::io::read_matrix_market(&plain).expect("sprs reads the file");
    assert_eq!((theirs.rows(), theirs.cols(), theirs.nnz()), (ROWS, ROWS, ENTRIES));

    let mut group = c.benchmark_group("mm_read");
    group.sample_size(10);
    group.throughput(Throughput::BytesDecimal(file_bytes(&plain)));
    group.bench_function("rgla read_coo f64", |b| b.iter(|| mm::read_coo::<f64>(black_box(&plain)).unwrap()));
    group.bench_function("sprs read_matrix_market f64", |b| {
        b.iter(|| sprs::io::read_matrix_market::<f64, usize, _>(black_box(&plain)).unwrap())
    });
    // Throughput of the decompressed text, so the figure compares with the plain file's.
    group.bench_function("rgla read_coo f64, gzip", |b| {
        b.iter(|| mm::read_coo::<f64>(black_box(&compressed)).unwrap())
    });
    group.finish();
    println!(
        "file: {} entries, {:.1} MB plain, {:.1} MB gzip",
        ENTRIES,
        file_bytes(&plain) as f64 / 1e6,
        file_bytes(&compressed) as f64 / 1e6
    );
}

criterion_group!(benches, bench_read);
criterion_main!(benches);
