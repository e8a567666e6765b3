//! Row-block partitions of a CSR matrix and the halo plans between their parts (host side).
//!
//! Part `p` owns rows `bounds[p]..bounds[p + 1]` and the same entries of every vector. Its
//! rows are split by column: the **local block** (columns it owns, renumbered from 0, a square
//! matrix the smoothers run on) and the **boundary** (columns owned by other parts, renumbered
//! into its halo). The halo holds the remote x entries it needs, sorted by global column, so
//! they arrive grouped by owner; what part q sends to p is exactly p's halo entries owned by q.

use std::ops::Range;

use rayon::prelude::*;

use crate::Scalar;
use crate::error::{Error, Result};
use crate::sparse::Csr;

/// `parts` contiguous row ranges of about equal work (nonzeros plus one per row, as
/// [`Csr::nnz_balanced_partition`]); ranges at the end are empty where rows are fewer than parts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Partition {
    bounds: Vec<usize>,
}

impl Partition {
    pub fn balanced<T>(a: &Csr<T>, parts: usize) -> Result<Partition> {
        if parts == 0 {
            return Err(Error::InvalidInput("a partition into 0 parts".into()));
        }
        if a.rows() != a.cols() {
            return Err(Error::InvalidInput(format!(
                "a row partition shares x by rows, so it needs a square matrix, got {} x {}",
                a.rows(),
                a.cols()
            )));
        }
        let mut bounds = a.nnz_balanced_partition(parts);
        bounds.resize(parts + 1, a.rows());
        Ok(Partition { bounds })
    }

    pub fn parts(&self) -> usize {
        self.bounds.len() - 1
    }

    pub fn rows(&self, part: usize) -> Range<usize> {
        self.bounds[part]..self.bounds[part + 1]
    }

    /// The part owning `row` (the last of equal bounds, so never an empty part).
    pub fn owner(&self, row: usize) -> usize {
        self.bounds.partition_point(|&b| b <= row) - 1
    }
}

/// What one part exchanges with the others, each list by ascending peer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HaloPlan {
    /// (peer, the halo entries it fills).
    pub receives: Vec<(usize, Range<usize>)>,
    /// (peer, the entries of `send_rows` that go to it).
    pub sends: Vec<(usize, Range<usize>)>,
    /// The local rows whose x values are sent, peer by peer.
    pub send_rows: Vec<u32>,
}

/// One part of a partitioned matrix, as its owner holds it.
#[derive(Clone, Debug)]
pub struct Part<T> {
    pub rank: usize,
    /// The global rows it owns.
    pub rows: Range<usize>,
    /// Its rows restricted to its own columns, renumbered from 0 (square).
    pub local: Csr<T>,
    /// The rows with entries in other parts' columns (local numbers, ascending) ...
    pub boundary_rows: Vec<u32>,
    /// ... and those entries, one row each, columns numbering the halo.
    pub boundary: Csr<T>,
    /// The global column of each halo entry, ascending.
    pub halo_columns: Vec<u32>,
    pub plan: HaloPlan,
}

/// The remote columns each part's rows refer to, ascending: its halo.
pub fn halo_columns<T: Sync>(a: &Csr<T>, partition: &Partition) -> Vec<Vec<u32>> {
    (0..partition.parts())
        .into_par_iter()
        .map(|p| {
            let rows = partition.rows(p);
            let (lo, hi) = (rows.start as u32, rows.end as u32);
            let entries = a.row_ptr()[rows.start] as usize..a.row_ptr()[rows.end] as usize;
            let mut halo: Vec<u32> =
                a.col_indices()[entries].iter().copied().filter(|&c| c < lo || c >= hi).collect();
            halo.sort_unstable();
            halo.dedup();
            halo
        })
        .collect()
}

impl<T: Scalar> Part<T> {
    /// Part `rank` of `a`, given every part's halo (from [`halo_columns`]: what the others
    /// need from it).
    pub fn new(a: &Csr<T>, partition: &Partition, halos: &[Vec<u32>], rank: usize) -> Part<T> {
        let rows = partition.rows(rank);
        let halo = &halos[rank];
        // Remote columns become their place in the halo (sorted, and holding every one).
        let (mut boundary_rows, mut row_ptr, mut cols, mut values) =
            (Vec::new(), vec![0u32], Vec::new(), Vec::new());
        for row in rows.clone() {
            let (c, v) = a.row(row);
            for (&c, &v) in c.iter().zip(v).filter(|&(&c, _)| !rows.contains(&(c as usize))) {
                cols.push(halo.binary_search(&c).expect("halo column") as u32);
                values.push(v);
            }
            if cols.len() > *row_ptr.last().unwrap() as usize {
                boundary_rows.push((row - rows.start) as u32);
                row_ptr.push(cols.len() as u32);
            }
        }
        let boundary = Csr::from_parts_unchecked(boundary_rows.len(), halo.len(), row_ptr, cols, values);
        Part {
            rank,
            local: local_block(a, partition, rank),
            rows,
            boundary_rows,
            boundary,
            halo_columns: halo.clone(),
            plan: plan(partition, halos, rank),
        }
    }
}

/// Part `rank`'s rows restricted to its own columns, renumbered from 0: the square block its
/// smoother runs on.
pub fn local_block<T: Scalar>(a: &Csr<T>, partition: &Partition, rank: usize) -> Csr<T> {
    let rows = partition.rows(rank);
    let first = rows.start as u32;
    let (mut row_ptr, mut cols, mut values) = (vec![0u32], Vec::new(), Vec::new());
    for row in rows.clone() {
        let (c, v) = a.row(row);
        for (&c, &v) in c.iter().zip(v).filter(|&(&c, _)| rows.contains(&(c as usize))) {
            cols.push(c - first);
            values.push(v);
        }
        row_ptr.push(cols.len() as u32);
    }
    Csr::from_parts_unchecked(rows.len(), rows.len(), row_ptr, cols, values)
}

/// Part `rank`'s exchanges: it receives its halo grouped by owner, and sends each peer the
/// rows of its own that are in the peer's halo.
fn plan(partition: &Partition, halos: &[Vec<u32>], rank: usize) -> HaloPlan {
    let mut receives = Vec::new();
    let halo = &halos[rank];
    let mut start = 0;
    while start < halo.len() {
        let owner = partition.owner(halo[start] as usize);
        let end = start + halo[start..].partition_point(|&c| partition.owner(c as usize) == owner);
        receives.push((owner, start..end));
        start = end;
    }
    let own = partition.rows(rank);
    let (mut sends, mut send_rows) = (Vec::new(), Vec::new());
    for (peer, peer_halo) in halos.iter().enumerate() {
        let begin = peer_halo.partition_point(|&c| (c as usize) < own.start);
        let end = peer_halo.partition_point(|&c| (c as usize) < own.end);
        if peer != rank && begin < end {
            let first = send_rows.len();
            send_rows.extend(peer_halo[begin..end].iter().map(|&c| c - own.start as u32));
            sends.push((peer, first..send_rows.len()));
        }
    }
    HaloPlan { receives, sends, send_rows }
}

/// Every part of `a` under `partition`.
pub fn split<T: Scalar>(a: &Csr<T>, partition: &Partition) -> Vec<Part<T>> {
    let halos = halo_columns(a, partition);
    (0..partition.parts()).into_par_iter().map(|p| Part::new(a, partition, &halos, p)).collect()
}

/// The block-diagonal part of `a` under `partition` (entries between parts dropped): the
/// matrix a single-GPU smoother must see to match block Jacobi between parts.
pub fn block_diagonal<T: Scalar>(a: &Csr<T>, partition: &Partition) -> Csr<T> {
    let (mut row_ptr, mut cols, mut values) = (vec![0u32], Vec::new(), Vec::new());
    for p in 0..partition.parts() {
        let (block, first) = (local_block(a, partition, p), partition.rows(p).start as u32);
        let base = cols.len() as u32;
        row_ptr.extend(block.row_ptr()[1..].iter().map(|&end| base + end));
        cols.extend(block.col_indices().iter().map(|&c| c + first));
        values.extend_from_slice(block.values());
    }
    Csr::from_parts_unchecked(a.rows(), a.cols(), row_ptr, cols, values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sparse::GenSpec;

    /// y = A x for part `part` from the global x, through its local block and its halo: the CPU
    /// model of the distributed product (the tests compare it with the whole product).
    fn part_product<T: Scalar>(part: &Part<T>, x: &[T]) -> Vec<T> {
        let own = &x[part.rows.clone()];
        let halo: Vec<T> = part.halo_columns.iter().map(|&c| x[c as usize]).collect();
        let mut y = vec![T::ZERO; part.rows.len()];
        for (row, yi) in y.iter_mut().enumerate() {
            let (cols, values) = part.local.row(row);
            *yi = cols.iter().zip(values).fold(T::ZERO, |s, (&c, &v)| v.mul_add(own[c as usize], s));
        }
        for (k, &row) in part.boundary_rows.iter().enumerate() {
            let (cols, values) = part.boundary.row(k);
            let yi = &mut y[row as usize];
            *yi = cols.iter().zip(values).fold(*yi, |s, (&c, &v)| v.mul_add(halo[c as usize], s));
        }
        y
    }

    fn matrix(spec: &str) -> Csr<f64> {
        spec.parse::<GenSpec>().unwrap().generate().unwrap()
    }

    /// Every part's sends match its peers' receives, entry for entry.
    fn check_plans(a: &Csr<f64>, parts: &[Part<f64>]) {
        for p in parts {
            for (peer, range) in &p.plan.receives {
                let q = &parts[*peer];
                let (_, sent) = q.plan.sends.iter().find(|(to, _)| to == &p.rank).expect("matching send");
                let sent: Vec<u32> =
                    q.plan.send_rows[sent.clone()].iter().map(|&r| r + q.rows.start as u32).collect();
                assert_eq!(sent, p.halo_columns[range.clone()], "part {} from {peer}", p.rank);
            }
            let sent: usize = p.plan.sends.iter().map(|(_, r)| r.len()).sum();
            assert_eq!(sent, p.plan.send_rows.len());
            assert_eq!(
                p.local.nnz() + p.boundary.nnz(),
                a.row_ptr()[p.rows.end] as usize - a.row_ptr()[p.rows.start] as usize
            );
        }
    }

    #[test]
    fn parts_reproduce_the_product() {
        for spec in
            ["stencil27:9", "random:rows=1000,nnz_per_row=7,seed=3", "powerlaw:n=2000", "shuffle:poisson3d:8"]
        {
            let a = matrix(spec);
            let x: Vec<f64> = (0..a.cols()).map(|i| (i % 17) as f64 - 8.0).collect();
            let mut expect = vec![0.0; a.rows()];
            crate::spmv::cpu::csr_serial(&a, &x, &mut expect).unwrap();
            for n in [1, 2, 3, 8] {
                let partition = Partition::balanced(&a, n).unwrap();
                let parts = split(&a, &partition);
                check_plans(&a, &parts);
                let y: Vec<f64> = parts.iter().flat_map(|p| part_product(p, &x)).collect();
                for (i, (g, e)) in y.iter().zip(&expect).enumerate() {
                    assert!(
                        (g - e).abs() <= 1e-12 * e.abs().max(1.0),
                        "{spec}, {n} parts, row {i}: {g} vs {e}"
                    );
                }
            }
        }
    }

    #[test]
    fn one_part_has_no_halo_and_more_parts_than_rows_are_empty() {
        let a = matrix("stencil27:4");
        let whole = split(&a, &Partition::balanced(&a, 1).unwrap());
        assert!(whole[0].halo_columns.is_empty() && whole[0].plan.sends.is_empty());
        assert_eq!(whole[0].local, a);
        let tiny = Csr::new(3, 3, vec![0, 1, 1, 3], vec![0, 0, 2], vec![2.0, -1.0, 4.0]).unwrap();
        let partition = Partition::balanced(&tiny, 5).unwrap();
        assert_eq!(partition.parts(), 5);
        let parts = split(&tiny, &partition);
        check_plans(&tiny, &parts);
        assert!(parts.iter().skip(3).all(|p| p.rows.is_empty() && p.plan.sends.is_empty()));
        assert_eq!(block_diagonal(&tiny, &partition).nnz(), 2);
    }

    #[test]
    fn bad_partitions_are_errors() {
        let a = Csr::<f64>::empty(3, 4).unwrap();
        assert!(Partition::balanced(&a, 2).unwrap_err().to_string().contains("square"));
        assert!(Partition::balanced(&matrix("stencil27:3"), 0).is_err());
    }
}
