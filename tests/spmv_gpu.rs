//! Every GPU SpMV kernel (CSR, BSR, HLL; f32 and f64) against the serial CSR reference, on
//! the edge-case corpus, generated matrices and the real files in tests/data.

mod common;

use common::{gpu, random_vec, real_matrices};
use rgla::sparse::{Bsr, Csr, Hll, HllLayout, generate};
use rgla::spmv::bsr::{BsrKernel, DeviceBsr};
use rgla::spmv::csr::{
    CsrKernel, CsrPath, DeviceCsr, GAPS16_ROWS_PER_GROUP, PATTERNS_ROWS_PER_GROUP, ROWS_PER_GROUP, WIDTHS,
};
use rgla::spmv::hll::{DeviceHll, HllKernel};
use rgla::spmv::{BlockWarps, bsr, cpu, csr, hll};
use rgla::verify::compare;
use rgla::{Gpu, Scalar};

/// The matrices every kernel is checked on.
fn corpus<T: Scalar>() -> Vec<(String, Csr<T>)> {
    let mut all = generate::edge_cases::<T>();
    all.push(("random 3001x2999, 27/row".into(), generate::random_uniform(3001, 2999, 27, 1).unwrap()));
    all.push(("power law 5000".into(), generate::power_law(5000, 1, 3000, 1.5, 2).unwrap()));
    all.push(("stencil27 9x10x11".into(), generate::stencil27(9, 10, 11).unwrap()));
    all.push(("fem 5x5x5 dof 3".into(), generate::fem(5, 5, 5, 3, 3).unwrap()));
    all.push(("road 10000".into(), generate::road(10_000, 50, 4).unwrap()));
    // The irregular families, small: skewed, empty-row heavy, dense rows and columns, a mesh.
    for spec in [
        "rmat:scale=12,edge_factor=8",
        "web:n=20000",
        "circuit:n=20000,dense_rows=3,dense_len=5000",
        "delaunay:n=5000",
        "shuffle:stencil27:12",
        // Columns far apart: gaps past 16 bits.
        "random:rows=300,cols=200000,nnz_per_row=4",
    ] {
        all.push((spec.into(), spec.parse::<generate::GenSpec>().unwrap().generate().unwrap()));
    }
    all.extend(real_matrices::<T>());
    all
}

/// y from the serial CPU reference.
fn reference<T: Scalar>(a: &Csr<T>, x: &[T]) -> Vec<T> {
    let mut y = vec![T::ZERO; a.rows()];
    cpu::csr_serial(a, x, &mut y).unwrap();
    y
}

/// Runs `run` into a NaN-poisoned y and checks it against the reference.
fn check<T: Scalar>(
    gpu: &Gpu,
    what: &str,
    a: &Csr<T>,
    x: &[T],
    expect: &[T],
    run: impl FnOnce(&rgla::gpu::CudaSlice<T>, &mut rgla::gpu::CudaSlice<T>) -> rgla::Result<()>,
) {
    let dx = gpu.upload(x).unwrap();
    let mut dy = gpu.filled(a.rows(), T::from_f64(f64::NAN)).unwrap();
    run(&dx, &mut dy).unwrap_or_else(|e| panic!("{what}: {e}"));
    let got = gpu.download(&dy).unwrap();
    let longest = (0..a.rows()).map(|r| a.row_len(r)).max().unwrap_or(0);
    compare(&got, expect, 1e-3).check(what, T::tolerance(longest)).unwrap();
}

fn csr_kernels<T: Scalar>() {
    let gpu = gpu();
    let kernels: Vec<CsrKernel> =
        CsrKernel::ALL.into_iter().chain([2, 4, 16, 32].map(CsrKernel::Vector)).collect();
    for (name, a) in corpus::<T>() {
        let x = random_vec::<T>(a.cols(), 7);
        let expect = reference(&a, &x);
        let da = DeviceCsr::upload(&gpu, &a).unwrap();
        // Graphs with hubs have hot columns; meshes and stencils do not.
        if name.starts_with("rmat") || name.starts_with("web") {
            assert!(da.has_hot_columns(), "{name}: no hot columns");
        }
        if name.starts_with("stencil27") || name.starts_with("delaunay") {
            assert!(!da.has_hot_columns(), "{name}: hot columns");
        }
        // A stencil's rows repeat a few patterns; random rows do not.
        if name.starts_with("stencil27") || name.starts_with("fem") {
            assert!(da.has_patterns(), "{name}: no row patterns");
        }
        if name.starts_with("random 3001") {
            assert!(!da.has_patterns(), "{name}: row patterns");
        }
        for &kernel in &kernels {
            let missing = match kernel {
                CsrKernel::Gaps16 if !da.has_gaps16() => Some("exceeds 16 bits"),
                CsrKernel::MergeHot | CsrKernel::SplitHot if !da.has_hot_columns() => Some("no hot columns"),
                CsrKernel::Patterns if !da.has_patterns() => Some("column patterns"),
                _ => None,
            };
            // (An empty matrix has nothing to compute, with any kernel.)
            if let Some(message) = missing.filter(|_| a.rows() > 0) {
                let (dx, mut dy) = (gpu.upload(&x).unwrap(), gpu.zeros::<T>(a.rows()).unwrap());
                let err = csr::spmv(&gpu, &da, kernel, BlockWarps::DEFAULT, &dx, &mut dy).unwrap_err();
                assert!(err.to_string().contains(message), "{name}: {err}");
                continue;
            }
            for warps in [1, 3, 5] {
                let what = format!("{} {} warps={warps} on {name}", kernel.name(), T::NAME);
                check(&gpu, &what, &a, &x, &expect, |x, y| {
                    csr::spmv(&gpu, &da, kernel, BlockWarps::new(warps).unwrap(), x, y)
                });
            }
        }
        // Every shape of the vector path the upload's timing can choose: each width, rows per
        // group and load policy, long rows in chunks.
        let mut da = da;
        da.plan.path = CsrPath::Vector;
        for width in WIDTHS {
            for rows_per_group in ROWS_PER_GROUP {
                for evict_first in [false, true] {
                    (da.plan.width, da.plan.rows_per_group, da.plan.evict_first) =
                        (width, rows_per_group, evict_first);
                    let what = format!(
                        "csr-adaptive vector{width} rows{rows_per_group} evict-first={evict_first} {} on {name}",
                        T::NAME
                    );
                    check(&gpu, &what, &a, &x, &expect, |x, y| {
                        csr::spmv(&gpu, &da, CsrKernel::Adaptive, BlockWarps::DEFAULT, x, y)
                    });
                }
            }
        }
        // And every shape of the 16-bit gaps and of the row patterns, where they exist.
        let compressed = [
            (CsrPath::Gaps16, da.has_gaps16(), &GAPS16_ROWS_PER_GROUP[..]),
            (CsrPath::Patterns, da.has_patterns(), &PATTERNS_ROWS_PER_GROUP[..]),
        ];
        for (path, present, rows_per_group) in compressed {
            if !present {
                continue;
            }
            da.plan.path = path;
            for width in WIDTHS {
                for &rows_per_group in rows_per_group {
                    (da.plan.width, da.plan.rows_per_group) = (width, rows_per_group);
                    let what = format!("csr-adaptive {} {} on {name}", da.plan, T::NAME);
                    check(&gpu, &what, &a, &x, &expect, |x, y| {
                        csr::spmv(&gpu, &da, CsrKernel::Adaptive, BlockWarps::DEFAULT, x, y)
                    });
                }
            }
        }
    }
}

/// A shuffled 2-D Laplacian with every seventh row's entries taken out: rows of no entries
/// whose columns other rows still hold.
fn with_empty_rows<T: Scalar>() -> Csr<T> {
    let a: Csr<T> = "shuffle:poisson2d:30".parse::<generate::GenSpec>().unwrap().generate().unwrap();
    let (mut row_ptr, mut cols, mut values) = (vec![0u32], Vec::new(), Vec::new());
    for r in 0..a.rows() {
        if r % 7 != 3 {
            cols.extend_from_slice(a.row(r).0);
            values.extend_from_slice(a.row(r).1);
        }
        row_ptr.push(cols.len() as u32);
    }
    Csr::new(a.rows(), a.cols(), row_ptr, cols, values).unwrap()
}

/// The adaptive kernel on a matrix renumbered in breadth-first order, wherever the corpus and
/// a few unordered meshes take it; matrices in an order of their own are left as they are.
fn csr_renumbered<T: Scalar>() {
    let gpu = gpu();
    let shuffled =
        ["shuffle:poisson3d:17", "shuffle:fem:24", "shuffle:stencil27:20", "shuffle:delaunay:n=4000"];
    let mut matrices = corpus::<T>();
    for spec in shuffled {
        matrices.push((spec.into(), spec.parse::<generate::GenSpec>().unwrap().generate().unwrap()));
    }
    matrices.push(("shuffle:poisson2d:30, empty rows".into(), with_empty_rows()));
    let mut renumbered = Vec::new();
    for (name, a) in &matrices {
        let mut da = DeviceCsr::upload(&gpu, a).unwrap();
        if !da.renumber(&gpu, a).unwrap() {
            assert!(!da.choice().starts_with("renumbered"), "{name}");
            continue;
        }
        assert!(da.choice().starts_with("renumbered-"), "{name}: {}", da.choice());
        let x = random_vec::<T>(a.cols(), 7);
        let what = format!("csr-adaptive renumbered {} on {name}", T::NAME);
        check(&gpu, &what, a, &x, &reference(a, &x), |x, y| {
            csr::spmv(&gpu, &da, CsrKernel::Adaptive, BlockWarps::DEFAULT, x, y)
        });
        renumbered.push(name.clone());
    }
    for name in shuffled.iter().chain(&["shuffle:poisson2d:30, empty rows"]) {
        assert!(renumbered.iter().any(|r| r == name), "{name} was not renumbered: {renumbered:?}");
    }
    for ordered in ["stencil27 9x10x11", "delaunay:n=5000", "road 10000"] {
        assert!(!renumbered.iter().any(|r| r == ordered), "{ordered} was renumbered");
    }
    // The host matrix must be the uploaded one.
    let (a, other) = (&matrices[matrices.len() - 1].1, &matrices[0].1);
    let mut da = DeviceCsr::upload(&gpu, a).unwrap();
    let err = da.renumber(&gpu, other).unwrap_err();
    assert!(err.to_string().contains("is not this"), "{err}");
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn csr_renumbered_f32() {
    csr_renumbered::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn csr_renumbered_f64() {
    csr_renumbered::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn csr_kernels_f32() {
    csr_kernels::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn csr_kernels_f64() {
    csr_kernels::<f64>();
}

fn bsr_kernels<T: Scalar>() {
    let gpu = gpu();
    for (name, a) in corpus::<T>() {
        let x = random_vec::<T>(a.cols(), 8);
        let expect = reference(&a, &x);
        for b in [1, 3, 8] {
            let bsr = Bsr::from_csr(&a, b).unwrap();
            let da = DeviceBsr::upload(&gpu, &bsr).unwrap();
            for kernel in BsrKernel::ALL {
                let what = format!("{} b={b} {} on {name}", kernel.name(), T::NAME);
                check(&gpu, &what, &a, &x, &expect, |x, y| {
                    bsr::spmv(&gpu, &da, kernel, BlockWarps::new(2).unwrap(), x, y)
                });
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn bsr_kernels_f32() {
    bsr_kernels::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn bsr_kernels_f64() {
    bsr_kernels::<f64>();
}

fn hll_kernels<T: Scalar>() {
    let gpu = gpu();
    for (name, a) in corpus::<T>() {
        let x = random_vec::<T>(a.cols(), 9);
        let expect = reference(&a, &x);
        for hack in [32, 7] {
            for layout in [HllLayout::RowMajor, HllLayout::ColumnMajor] {
                let h = Hll::from_csr(&a, hack, layout).unwrap();
                let dh = DeviceHll::upload(&gpu, &h).unwrap();
                for kernel in HllKernel::ALL.into_iter().filter(|k| k.layout() == layout) {
                    for warps in [1, 4] {
                        let what =
                            format!("{} hack={hack} warps={warps} {} on {name}", kernel.name(), T::NAME);
                        check(&gpu, &what, &a, &x, &expect, |x, y| {
                            hll::spmv(&gpu, &dh, kernel, BlockWarps::new(warps).unwrap(), x, y)
                        });
                    }
                }
            }
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn hll_kernels_f32() {
    hll_kernels::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn hll_kernels_f64() {
    hll_kernels::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn adaptive_kernel_on_a_larger_power_law_matrix() {
    // Rows of tens of thousands of nonzeros, each cut into chunks of a warp.
    let gpu = gpu();
    let a = generate::power_law::<f64>(200_000, 1, 50_000, 1.2, 5).unwrap();
    let mut da = DeviceCsr::upload(&gpu, &a).unwrap();
    assert!(!da.plan.long_rows.is_empty(), "the test matrix should have long rows");
    assert!(da.plan.chunk_rows.len() > da.plan.long_rows.len(), "and rows of several chunks");
    let x = random_vec::<f64>(a.cols(), 10);
    let expect = reference(&a, &x);
    check(&gpu, "csr-adaptive power law 200k", &a, &x, &expect, |x, y| {
        csr::spmv(&gpu, &da, CsrKernel::Adaptive, BlockWarps::DEFAULT, x, y)
    });
    check_vector_shapes_twice(&gpu, "power law 200k", &a, &x, &expect, &mut da);
}

/// The vector path whatever the upload chose, at every width and rows per group, twice each:
/// the long rows' chunks, in the same launch as the rows, leave their counts at zero for the
/// next product.
fn check_vector_shapes_twice(
    gpu: &Gpu,
    name: &str,
    a: &Csr<f64>,
    x: &[f64],
    expect: &[f64],
    da: &mut DeviceCsr<f64>,
) {
    da.plan.path = CsrPath::Vector;
    for (width, rows_per_group) in WIDTHS.into_iter().flat_map(|w| ROWS_PER_GROUP.map(|r| (w, r))) {
        (da.plan.width, da.plan.rows_per_group) = (width, rows_per_group);
        for round in 0..2 {
            let what = format!("csr-adaptive vector{width} rows {rows_per_group}, round {round}, {name}");
            check(gpu, &what, a, x, expect, |x, y| {
                csr::spmv(gpu, da, CsrKernel::Adaptive, BlockWarps::DEFAULT, x, y)
            });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn vector_path_adds_rows_of_many_chunks() {
    // Rows of 2, 32 (one full group), 33 and 1563 chunks (49 groups: the groups' sums loop)
    // among many short rows (so that only these four are long); every shape of the vector
    // path, twice each.
    let gpu = gpu();
    let chunk = csr::LONG_ROW_CHUNK;
    let (rows, cols) = (200_000u32, 400_000u32);
    let mut coo = rgla::sparse::Coo::<f64>::new(rows as usize, cols as usize);
    for (row, len) in [(3, 2 * chunk - 5), (100, 32 * chunk), (101, 32 * chunk + 1), (199_999, cols)] {
        for k in 0..len {
            coo.push(row, (k * 7919) % cols, 1.0 + (k % 13) as f64 / 8.0);
        }
    }
    for row in (0..rows).filter(|r| ![3, 100, 101, 199_999].contains(r)) {
        for k in 0..row % 9 {
            coo.push(row, (row * 31 + k * 1009) % cols, -0.5 + k as f64 / 4.0);
        }
    }
    let a = coo.to_csr().unwrap();
    let mut da = DeviceCsr::upload(&gpu, &a).unwrap();
    assert_eq!(da.plan.long_rows, vec![3, 100, 101, 199_999]);
    let x = random_vec::<f64>(cols as usize, 12);
    let expect = reference(&a, &x);
    check_vector_shapes_twice(&gpu, "rows of many chunks", &a, &x, &expect, &mut da);
}

fn cusparse_baseline<T: Scalar>() {
    use rgla::vendor::cusparse::{Cusparse, CusparseSpmv, SpmvAlg};
    let gpu = gpu();
    let lib = Cusparse::new(&gpu).unwrap();
    for (name, a) in corpus::<T>().into_iter().filter(|(_, a)| a.rows() > 0 && a.cols() > 0) {
        let x = random_vec::<T>(a.cols(), 11);
        let expect = reference(&a, &x);
        let da = DeviceCsr::upload(&gpu, &a).unwrap();
        for alg in [SpmvAlg::CsrAlg1, SpmvAlg::CsrAlg2] {
            let plan = CusparseSpmv::csr(&gpu, &lib, &da, alg).unwrap();
            check(&gpu, &format!("cuSPARSE {alg:?} {} on {name}", T::NAME), &a, &x, &expect, |x, y| {
                plan.run(&gpu, x, y)
            });
        }
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn cusparse_csr_f32() {
    cusparse_baseline::<f32>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn cusparse_csr_f64() {
    cusparse_baseline::<f64>();
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn cusparse_bsr_f64_where_supported() {
    use rgla::vendor::cusparse::{Cusparse, CusparseSpmv};
    let gpu = gpu();
    let lib = Cusparse::new(&gpu).unwrap();
    let a = generate::block_random::<f64>(64, 64, 8, 5, 3).unwrap();
    let bsr = Bsr::from_csr(&a, 8).unwrap();
    let da = DeviceBsr::upload(&gpu, &bsr).unwrap();
    let x = random_vec::<f64>(a.cols(), 12);
    let expect = reference(&a, &x);
    match CusparseSpmv::bsr(&gpu, &lib, &da) {
        Ok(plan) => check(&gpu, "cuSPARSE BSR f64", &a, &x, &expect, |x, y| plan.run(&gpu, x, y)),
        // Older cuSPARSE has no BSR in the generic API: it must say so, not compute garbage.
        Err(e) => assert!(e.to_string().contains("NOT_SUPPORTED"), "{e}"),
    }
}

#[test]
#[ignore = "needs a CUDA GPU: run through `cargo xtask bundle` on a GPU machine"]
fn wrong_vector_lengths_and_layouts_are_errors() {
    let gpu = gpu();
    let a = generate::random_uniform::<f64>(10, 12, 3, 1).unwrap();
    let da = DeviceCsr::upload(&gpu, &a).unwrap();
    let x = gpu.zeros::<f64>(10).unwrap();
    let mut y = gpu.zeros::<f64>(10).unwrap();
    let err = csr::spmv(&gpu, &da, CsrKernel::Adaptive, BlockWarps::DEFAULT, &x, &mut y).unwrap_err();
    assert!(err.to_string().contains("needs x of 12"), "{err}");
    let h = DeviceHll::upload(&gpu, &Hll::from_csr(&a, 32, HllLayout::RowMajor).unwrap()).unwrap();
    let x = gpu.zeros::<f64>(12).unwrap();
    let err = hll::spmv(&gpu, &h, HllKernel::Sell, BlockWarps::DEFAULT, &x, &mut y).unwrap_err();
    assert!(err.to_string().contains("layout"), "{err}");
}
