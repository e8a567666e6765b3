//! Node blocks for the multicolor smoother (`kernels/src/symgs/blocks.rs`): where every row of
//! a matrix with a symmetric pattern shares its pattern with exactly `k - 1` others (2 <= k <=
//! [`MAX_BLOCK_ROWS`]: the unknowns of a mesh node), those rows always neighbour each other,
//! so the nodes are colored instead of the rows (a FEM matrix with 3 unknowns a node: 13
//! colors of blocks where its rows take 32) and the sweep relaxes each block's rows in turn.

use super::SymgsMatrix;
use crate::Scalar;
use crate::error::Result;
use crate::gpu::{CudaSlice, Gpu, Launch};
use crate::kernels::symgs::blocks as kernels;
use crate::sparse::csr::breadth_first_order_within;

use abi::symgs::MAX_BLOCK_ROWS;

/// The rows of a matrix grouped into blocks of `k` rows of one pattern, and the graph of the
/// blocks, on the device.
pub(crate) struct NodeBlocks {
    /// Rows per block.
    pub(crate) k: u32,
    pub(crate) count: usize,
    /// Block b's rows, `members[k b..k b + k]`, in increasing order.
    pub(crate) members: CudaSlice<u32>,
    /// Each row's block.
    pub(crate) block_of: CudaSlice<u32>,
    /// Each row's place in its block.
    pub(crate) rank: CudaSlice<u32>,
    /// The graph of the blocks (each block its own neighbour), columns sorted within rows.
    pub(crate) block_ptr: CudaSlice<u32>,
    pub(crate) block_col: CudaSlice<u32>,
}

/// The node blocks of `m`, if its pattern is symmetric and every row shares it with the same
/// number k - 1 of others (2 <= k <= [`MAX_BLOCK_ROWS`]). Found on the GPU (a hash of each
/// row's columns, then the rows of its pattern with the same hash and columns); the blocks are
/// numbered on the host from the rows' lowest members, and their graph built on the GPU.
pub(crate) fn node_blocks<T: Scalar>(gpu: &Gpu, m: &SymgsMatrix<T>) -> Result<Option<NodeBlocks>> {
    let (n, csr) = (m.rows, &m.csr);
    if n == 0 || !m.pattern_symmetric(gpu)? {
        return Ok(None);
    }
    let rows = n as u32;
    let per_row = Launch::linear(n, 256);
    let mut hash = gpu.zeros::<u32>(n)?;
    let (mut leader, mut rank, mut sizes) =
        (gpu.zeros::<u32>(n)?, gpu.zeros::<u32>(n)?, gpu.zeros::<u32>(2)?);
    // SAFETY: a square pattern of n rows (columns < n), a hash, leader and rank per row, two
    // counters.
    unsafe {
        kernels::pattern_hash(gpu, per_row, rows, &csr.row_ptr, &csr.col_idx, &mut hash)?;
        kernels::block_members(
            gpu,
            per_row,
            rows,
            &csr.row_ptr,
            &csr.col_idx,
            &hash,
            &mut leader,
            &mut rank,
            &mut sizes,
        )?;
    }
    let sizes = gpu.download(&sizes)?;
    let k = sizes[1] as usize;
    if !sizes[0] != sizes[1] || !(2..=MAX_BLOCK_ROWS).contains(&k) || n % k != 0 {
        return Ok(None);
    }
    // Blocks in the order of their lowest rows; a block's rows by rank.
    let (leader_host, rank_host, row_ptr) =
        (gpu.download(&leader)?, gpu.download(&rank)?, gpu.download(&csr.row_ptr)?);
    let count = n / k;
    let mut block_of = vec![0u32; n];
    let mut members = vec![u32::MAX; n];
    let mut block_ptr = Vec::with_capacity(count + 1);
    block_ptr.push(0u32);
    for i in 0..n {
        let lead = leader_host[i] as usize;
        if lead == i {
            let len = row_ptr[i + 1] - row_ptr[i];
            // A leader row holds whole blocks (the pattern is symmetric).
            if !(len as usize).is_multiple_of(k) || block_ptr.len() > count {
                return Ok(None);
            }
            block_of[i] = block_ptr.len() as u32 - 1;
            block_ptr.push(block_ptr.last().unwrap() + len / k as u32);
        }
        // A leader comes first in its block, so its number is set.
        block_of[i] = block_of[lead];
        let slot = &mut members[block_of[i] as usize * k + rank_host[i] as usize];
        if *slot != u32::MAX {
            return Ok(None);
        }
        *slot = i as u32;
    }
    if block_ptr.len() != count + 1 {
        return Ok(None);
    }
    let (members, block_of, block_ptr_dev) =
        (gpu.upload(&members)?, gpu.upload(&block_of)?, gpu.upload(&block_ptr)?);
    let mut block_col = gpu.zeros::<u32>(*block_ptr.last().unwrap() as usize)?;
    // SAFETY: k members per block, a leader and a block per row, A's square pattern; the
    // block pointers count each leader row's leaders (its length / k).
    unsafe {
        kernels::block_graph(
            gpu,
            Launch::linear(count, 128),
            count as u32,
            k as u32,
            &members,
            &leader,
            &block_of,
            &csr.row_ptr,
            &csr.col_idx,
            &block_ptr_dev,
            &mut block_col,
        )?;
    }
    Ok(Some(NodeBlocks { k: k as u32, count, members, block_of, rank, block_ptr: block_ptr_dev, block_col }))
}

/// The blocks in breadth-first order, so that neighbour blocks get near places: the order of
/// the rows the SpMV renumbered the matrix by, where it did (each block where its first row
/// comes), else a breadth-first pass over the blocks' graph on the host.
pub(crate) fn breadth_first_blocks<T: Scalar>(
    gpu: &Gpu,
    m: &SymgsMatrix<T>,
    blocks: &NodeBlocks,
) -> Result<Vec<u32>> {
    let count = blocks.count;
    if let Some(rows) = m.csr.breadth_first_order() {
        let block_of = gpu.download(&blocks.block_of)?;
        let mut seen = vec![false; count];
        let blocks_in_order = gpu.download(rows)?.into_iter().map(|i| block_of[i as usize]);
        return Ok(blocks_in_order.filter(|&b| !std::mem::replace(&mut seen[b as usize], true)).collect());
    }
    let (block_ptr, block_col) = (gpu.download(&blocks.block_ptr)?, gpu.download(&blocks.block_col)?);
    Ok(breadth_first_order_within(count, &block_ptr, &block_col, usize::MAX).expect("no width limit"))
}
