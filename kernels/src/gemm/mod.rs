//! Dense C = A B for row-major matrices of any shape (A m x k, B k x n, C m x n), as a
//! progression: the Naples report's shared-memory tiles, a register-blocked SIMT kernel, and
//! tensor cores for f64 (m8n8k4 on sm_80; Hopper's m16n8k4 in the sm_90 module, and m16n8k8
//! fed by a cp.async pipeline, whose k-loop also runs f32 on TF32 and the LU's update; then the
//! same tiles fed by the tensor memory accelerator, `dmma_tma`, in the sm_90a module), and TF32
//! on Hopper's warpgroup MMA fed by the tensor memory accelerator (`wgmma`, the sm_90a module).

/// `$body` once for each listed index, bound to `$i` as a constant: straight-line k-steps let
/// the compiler read one step's fragments while earlier steps' FMAs run (LLVM leaves a loop of
/// this size rolled, and the loads then stall every step).
macro_rules! unrolled {
    ($i:ident in [$($n:literal),*] $body:block) => { $( { let $i: usize = $n; $body } )* };
}

/// Element `e` of a split tile whose first row and column in C are `(row0, col0)` (`tile_n`
/// columns a row; nothing where it lies past C's m x n): the sum of the tile's `pieces` partial
/// tiles of `tile_len` at `partials` (dense, one after another), added in their order so that
/// the result does not depend on which piece finished first. The second step of a GEMM whose
/// last tiles were split along k: a thread per element, so that every load is in flight at once.
///
/// # Safety
/// `partials` holds the tile's pieces; C is a dense m x n matrix.
#[inline(always)]
unsafe fn add_pieces<T: crate::device::Float>(
    (partials, pieces, tile_len): (*const T, u32, u32),
    e: u32,
    (row0, col0, tile_n): (u32, u32, u32),
    (m, n): (u32, u32),
    c: *mut T,
) {
    let (row, col) = (row0 + e / tile_n, col0 + e % tile_n);
    if row < m && col < n {
        let mut sum = T::ZERO;
        for p in 0..pieces {
            // SAFETY: inside the tile's partial tiles (the caller's contract).
            sum = sum + unsafe { *partials.add((p * tile_len + e) as usize) };
        }
        // SAFETY: (row, col) is inside the dense m x n C.
        unsafe { *c.add(row as usize * n as usize + col as usize) = sum };
    }
}

pub mod aligned_rows;
pub mod blocked;
pub mod dmma;
#[cfg(target_feature = "sm_90")]
pub mod dmma16;
#[cfg(target_feature = "sm_90a")]
pub mod dmma_tma;
#[cfg(target_feature = "sm_90")]
pub mod pipelined;
pub mod tiled;
pub mod update;
#[cfg(target_feature = "sm_90a")]
pub mod wgmma;
