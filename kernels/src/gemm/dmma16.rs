//! f64 GEMM on Hopper's larger tensor-core shape, `mma.sync` m16n8k4 (sm_90 only: this file
//! is compiled into the sm_90 PTX module alone). The same 64 x 64 block tile, 2 x 2 warps of
//! 32 x 32 and k-loop ([`super::dmma::main_loop`]) as [`super::dmma`]; each warp's sub-tile is 2 x 4 mma tiles of 16 x 8,
//! half as many tensor-core instructions as with m8n8k4.

use abi::Strided;
use abi::gemm::{DMMA_A_STRIDE as A_STRIDE, DMMA_B_STRIDE as B_STRIDE};

use super::dmma::{BM, BN, main_loop};
use crate::device::mma::dmma_m16n8k4;
use crate::device::thread::{block_idx_x, block_idx_y, lane_id, warp_id};

/// C = A B. Launch: as [`super::dmma::dmma`].
#[gpu::kernel]
pub unsafe fn dmma16(m: u32, n: u32, k: u32, a: *const f64, b: *const f64, c: *mut f64) {
    let (g, t) = (lane_id() / 4, lane_id() % 4);
    let (warp_row, warp_col) = (warp_id() / 2 * 32, warp_id() % 2 * 32);
    let (row0, col0) = (block_idx_y() * BM, block_idx_x() * BN);
    let mut acc = [[[0.0f64; 4]; 4]; 2];
    // SAFETY: fragment reads stay inside the tiles: rows < BM, columns < BK (A) and rows < BK,
    // columns < BN (B).
    unsafe {
        main_loop(m, n, k, Strided { ptr: a, ld: k }, Strided { ptr: b, ld: n }, |a_tile, b_tile, kk| {
            let a_at = |row: u32| a_tile.get(row * A_STRIDE + kk + t);
            let a_frag = [
                [a_at(warp_row + g), a_at(warp_row + g + 8)],
                [a_at(warp_row + 16 + g), a_at(warp_row + 24 + g)],
            ];
            let b_at = |j: u32| b_tile.get((kk + t) * B_STRIDE + warp_col + 8 * j + g);
            let b_frag = [b_at(0), b_at(1), b_at(2), b_at(3)];
            for i in 0..2 {
                for j in 0..4 {
                    acc[i][j] = dmma_m16n8k4(a_frag[i], b_frag[j], acc[i][j]);
                }
            }
        })
    };

    // Lane (g, t) holds C[16i + g][8j + 2t + {0, 1}] and the same 8 rows down.
    for (i, row_tiles) in acc.iter().enumerate() {
        let row = row0 + warp_row + 16 * i as u32 + g;
        for (j, d) in row_tiles.iter().enumerate() {
            let col = col0 + warp_col + 8 * j as u32 + 2 * t;
            // SAFETY: every store is checked against m and n.
            unsafe {
                store_pair(c, m, n, row, col, d[0], d[1]);
                store_pair(c, m, n, row + 8, col, d[2], d[3]);
            }
        }
    }
}

/// C[row][col] = v0 and C[row][col + 1] = v1, each where it lies inside the m x n matrix.
#[inline(always)]
unsafe fn store_pair(c: *mut f64, m: u32, n: u32, row: u32, col: u32, v0: f64, v1: f64) {
    if row < m {
        // SAFETY: row < m; columns checked against n.
        unsafe {
            let out = c.add((row * n + col) as usize);
            if col < n {
                *out = v0;
            }
            if col + 1 < n {
                *out.add(1) = v1;
            }
        }
    }
}
