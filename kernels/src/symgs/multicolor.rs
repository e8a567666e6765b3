//! Multicolor SymGS, a different smoother from the sequential one: the host colors the rows
//! so that no two neighbours share a color and renumbers the matrix color by color (rows of a
//! color contiguous); the sweep then runs the colors in order, one launch each, and back in
//! reverse order. The rows of one color neither read nor write each other's values, so each
//! launch updates x in place with full parallelism.

use crate::device::Float;
use crate::device::memory::load_nc;
use crate::device::thread::{index_1d, lane_id};
use crate::device::warp;

/// Rows `first..first + count` (one color), in place: `x[i] = (r[i] - sum_j a_ij x[j] +
/// a_ii x[i]) / a_ii`, `W` lanes per row (a power of two, 2..=32), two loads in flight per
/// lane as in the SpMV vector kernel. Launch: `W` threads per row, blocks a multiple of 32.
#[inline(always)]
pub unsafe fn relax_color<T: Float, const W: u32>(
    first: u32,
    count: u32,
    row_ptr: *const u32,
    col_idx: *const u32,
    values: *const T,
    diagonal: *const T,
    r: *const T,
    x: *mut T,
) {
    let k = index_1d() / W;
    let lane = lane_id() % W;
    let row = first.wrapping_add(k);
    // Groups past the color still take part in the shuffles, with an empty row.
    let (start, end) = if k < count {
        // SAFETY: first + count <= rows, so row < rows.
        unsafe { (load_nc(row_ptr.add(row as usize)), load_nc(row_ptr.add(row as usize + 1))) }
    } else {
        (0, 0)
    };
    let (mut sum0, mut sum1) = (T::ZERO, T::ZERO);
    let mut j = start + lane;
    // SAFETY: every j read is < end <= nnz; columns < rows. `x` is written in this launch
    // (rows of this color), so it is read with plain loads, never the read-only path.
    unsafe {
        while j + W < end {
            let (c0, c1) = (load_nc(col_idx.add(j as usize)), load_nc(col_idx.add((j + W) as usize)));
            let (v0, v1) = (load_nc(values.add(j as usize)), load_nc(values.add((j + W) as usize)));
            sum0 = v0.mul_add(*x.add(c0 as usize), sum0);
            sum1 = v1.mul_add(*x.add(c1 as usize), sum1);
            j += 2 * W;
        }
        if j < end {
            let c0 = load_nc(col_idx.add(j as usize));
            sum0 = load_nc(values.add(j as usize)).mul_add(*x.add(c0 as usize), sum0);
        }
    }
    let mut sum = sum0 + sum1;
    let mut offset = W / 2;
    while offset > 0 {
        sum = sum + warp::shuffle_xor(sum, offset);
        offset /= 2;
    }
    if lane == 0 && k < count {
        let i = row as usize;
        // SAFETY: row < rows; only this group writes x[row].
        unsafe {
            *x.add(i) = super::relaxed(load_nc(r.add(i)), sum, load_nc(diagonal.add(i)), *x.add(i));
        }
    }
}

/// `dst[i] = src[index[i]]` for i < n (into color order). Launch: a thread per element.
pub unsafe fn gather<T: Float>(n: u32, index: *const u32, src: *const T, dst: *mut T) {
    let i = index_1d();
    if i < n {
        // SAFETY: i < n; the index is a permutation of 0..n.
        unsafe { *dst.add(i as usize) = load_nc(src.add(load_nc(index.add(i as usize)) as usize)) };
    }
}

/// `dst[index[i]] = src[i]` for i < n (back from color order). Launch: a thread per element.
pub unsafe fn scatter<T: Float>(n: u32, index: *const u32, src: *const T, dst: *mut T) {
    let i = index_1d();
    if i < n {
        // SAFETY: i < n; the index is a permutation of 0..n.
        unsafe { *dst.add(load_nc(index.add(i as usize)) as usize) = load_nc(src.add(i as usize)) };
    }
}

macro_rules! color_widths {
    ($($f32:ident, $f64:ident => $w:literal;)*) => {
        $(
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $f32(first: u32, count: u32, row_ptr: *const u32, col_idx: *const u32, values: *const f32, diagonal: *const f32, r: *const f32, x: *mut f32) {
                // SAFETY: the host launches this entry point with the arguments it declares.
                unsafe { relax_color::<f32, $w>(first, count, row_ptr, col_idx, values, diagonal, r, x) }
            }
            #[unsafe(no_mangle)]
            pub unsafe extern "ptx-kernel" fn $f64(first: u32, count: u32, row_ptr: *const u32, col_idx: *const u32, values: *const f64, diagonal: *const f64, r: *const f64, x: *mut f64) {
                // SAFETY: the host launches this entry point with the arguments it declares.
                unsafe { relax_color::<f64, $w>(first, count, row_ptr, col_idx, values, diagonal, r, x) }
            }
        )*
    };
}

color_widths! {
    symgs_relax_color2_f32, symgs_relax_color2_f64 => 2;
    symgs_relax_color4_f32, symgs_relax_color4_f64 => 4;
    symgs_relax_color8_f32, symgs_relax_color8_f64 => 8;
    symgs_relax_color16_f32, symgs_relax_color16_f64 => 16;
    symgs_relax_color32_f32, symgs_relax_color32_f64 => 32;
}

f32_f64_kernels! {
    symgs_gather_f32, symgs_gather_f64 => gather(n: u32, index: *const u32, src: *const T, dst: *mut T);
    symgs_scatter_f32, symgs_scatter_f64 => scatter(n: u32, index: *const u32, src: *const T, dst: *mut T);
}
