//! Node blocks for the multicolor smoother (`kernels/src/symgs/blocks.rs`): where every row of
//! a matrix with a symmetric pattern shares its pattern with exactly `k - 1` others (2 <= k <=
//! [`MAX_BLOCK_ROWS`]: the unknowns of a mesh node), those rows always neighbour each other,
//! so the nodes are colored instead of the rows (a FEM matrix with 3 unknowns a node: 13
//! colors of blocks where its rows take 32) and the sweep relaxes each block's rows in turn.

use super::SymgsMatrix;
use super::multicolor::{GroupOrder, sort_by_color};
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
/// number k - 1 of others (2 <= k <= [`MAX_BLOCK_ROWS`]), found on the GPU: a hash of each
/// row's columns, then the rows of its pattern with the same hash and columns; the blocks
/// numbered in the order of their lowest rows, and their graph.
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
    // Every row's block the same size k: the rows of one pattern are each other's neighbours
    // (a symmetric pattern), so they make a block, each row holds whole blocks, and the
    // leaders (the blocks' lowest rows) number n / k.
    if !sizes[0] != sizes[1] || !(2..=MAX_BLOCK_ROWS).contains(&k) || n % k != 0 {
        return Ok(None);
    }
    let count = n / k;
    // Blocks in the order of their leaders: the leaders sorted first, in row order.
    let mut is_member = gpu.zeros::<u64>(n)?;
    // SAFETY: a leader and a state per row.
    unsafe { kernels::leader_states(gpu, per_row, rows, &leader, &mut is_member)? };
    let (leaders, before, spans) =
        sort_by_color(gpu, (n, &csr.row_ptr, csr.nnz), None, &mut is_member, 2, GroupOrder::AsNumbered)?;
    if spans[0].count as usize != count {
        return Ok(None);
    }
    // The leaders' entries less their diagonals, and their diagonals, over k: the blocks' graph's.
    let graph_entries = (spans[0].nnz as usize + count) / k;
    let (mut block_of, mut members) = (gpu.zeros::<u32>(n)?, gpu.zeros::<u32>(n)?);
    let mut block_ptr = gpu.zeros::<u32>(count + 1)?;
    // SAFETY: the count leaders first in `leaders`, with the sort's row pointers; a block, a
    // leader, a rank below k and a member's place per row; a pointer per block and one more.
    unsafe {
        kernels::number_blocks(
            gpu,
            Launch::linear(count, 256),
            count as u32,
            k as u32,
            &leaders,
            &csr.row_ptr,
            &before,
            &mut block_of,
            &mut block_ptr,
        )?;
        kernels::place_members(gpu, per_row, rows, k as u32, &leader, &rank, &mut block_of, &mut members)?;
    }
    let mut block_col = gpu.zeros::<u32>(graph_entries)?;
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
            &block_ptr,
            &mut block_col,
        )?;
    }
    Ok(Some(NodeBlocks { k: k as u32, count, members, block_of, rank, block_ptr, block_col }))
}

/// The blocks in breadth-first order, so that neighbour blocks get near places: the order of
/// the rows the SpMV renumbered the matrix by, where it did (each block where its first row
/// comes, on the GPU), else a breadth-first pass over the blocks' graph on the host.
pub(crate) fn breadth_first_blocks<T: Scalar>(
    gpu: &Gpu,
    m: &SymgsMatrix<T>,
    blocks: &NodeBlocks,
) -> Result<CudaSlice<u32>> {
    let count = blocks.count;
    let Some(rows) = m.csr.breadth_first_order() else {
        let (block_ptr, block_col) = (gpu.download(&blocks.block_ptr)?, gpu.download(&blocks.block_col)?);
        let order =
            breadth_first_order_within(count, &block_ptr, &block_col, usize::MAX).expect("no width limit");
        return gpu.upload(&order);
    };
    let (n, per_place) = (m.rows, Launch::linear(m.rows, 256));
    let mut first = gpu.filled(count, u32::MAX)?;
    let mut is_later = gpu.zeros::<u64>(n)?;
    // SAFETY: the rows in order, a permutation of n; a block per row, a first place per block,
    // a state per place.
    unsafe {
        kernels::first_places(gpu, per_place, n as u32, rows, &blocks.block_of, &mut first)?;
        kernels::first_place_states(gpu, per_place, n as u32, rows, &blocks.block_of, &first, &mut is_later)?;
    }
    // The blocks' first places, in order (the sort's row pointers are A's, not used).
    let (places, _, _) =
        sort_by_color(gpu, (n, &m.csr.row_ptr, m.csr.nnz), None, &mut is_later, 2, GroupOrder::AsNumbered)?;
    let mut order = gpu.zeros::<u32>(count)?;
    // SAFETY: the first count places are each block's first, in `rows`; a block per row and
    // an entry of the order per block.
    unsafe {
        kernels::blocks_at_places(
            gpu,
            Launch::linear(count, 256),
            count as u32,
            &places,
            rows,
            &blocks.block_of,
            &mut order,
        )?
    };
    Ok(order)
}
