//! Tensor-core matrix multiply-accumulate through inline PTX (`mma.sync`), one warp per tile.

use core::arch::asm;

/// D = A B + C on an 8x8x4 f64 tile (`mma.sync.aligned.m8n8k4.row.col.f64`, sm_80+). Lane `l`
/// holds A[l / 4][l % 4], B[l % 4][l / 4] and D, C[l / 4][2 (l % 4) + {0, 1}]. Every lane of
/// the warp must call it together.
#[inline(always)]
pub fn dmma_m8n8k4(a: f64, b: f64, c: [f64; 2]) -> [f64; 2] {
    let (d0, d1): (f64, f64);
    // SAFETY: a warp-wide instruction on registers only; all lanes call it (documented).
    unsafe {
        asm!(
            "mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {{{d0}, {d1}}}, {{{a}}}, {{{b}}}, {{{c0}, {c1}}};",
            d0 = out(reg64) d0,
            d1 = out(reg64) d1,
            a = in(reg64) a,
            b = in(reg64) b,
            c0 = in(reg64) c[0],
            c1 = in(reg64) c[1],
        );
    }
    [d0, d1]
}

/// D = A B + C on a 16x8x4 f64 tile (`mma.sync.aligned.m16n8k4.row.col.f64`, sm_90+). With
/// g = l / 4 and t = l % 4, lane `l` holds A[g][t] and A[g + 8][t], B[t][g], and
/// C, D[g][2t + {0, 1}] then C, D[g + 8][2t + {0, 1}]. Every lane must call it together.
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub fn dmma_m16n8k4(a: [f64; 2], b: f64, c: [f64; 4]) -> [f64; 4] {
    let (d0, d1, d2, d3): (f64, f64, f64, f64);
    // SAFETY: a warp-wide instruction on registers only; all lanes call it (documented).
    unsafe {
        asm!(
            "mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}}}, {{{b}}}, {{{c0}, {c1}, {c2}, {c3}}};",
            d0 = out(reg64) d0,
            d1 = out(reg64) d1,
            d2 = out(reg64) d2,
            d3 = out(reg64) d3,
            a0 = in(reg64) a[0],
            a1 = in(reg64) a[1],
            b = in(reg64) b,
            c0 = in(reg64) c[0],
            c1 = in(reg64) c[1],
            c2 = in(reg64) c[2],
            c3 = in(reg64) c[3],
        );
    }
    [d0, d1, d2, d3]
}

/// D = A B + C on a 16x8x8 f64 tile (`mma.sync.aligned.m16n8k8.row.col.f64`, sm_90+): twice
/// the work of m16n8k4 per instruction. With g = l / 4 and t = l % 4, lane `l` holds
/// A[g][t], A[g + 8][t], A[g][t + 4], A[g + 8][t + 4]; B[t][g], B[t + 4][g]; and C, D as in
/// [`dmma_m16n8k4`]. Every lane must call it together.
#[cfg(target_feature = "sm_90")]
#[inline(always)]
pub fn dmma_m16n8k8(a: [f64; 4], b: [f64; 2], c: [f64; 4]) -> [f64; 4] {
    let (d0, d1, d2, d3): (f64, f64, f64, f64);
    // SAFETY: a warp-wide instruction on registers only; all lanes call it (documented).
    unsafe {
        asm!(
            "mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};",
            d0 = out(reg64) d0,
            d1 = out(reg64) d1,
            d2 = out(reg64) d2,
            d3 = out(reg64) d3,
            a0 = in(reg64) a[0],
            a1 = in(reg64) a[1],
            a2 = in(reg64) a[2],
            a3 = in(reg64) a[3],
            b0 = in(reg64) b[0],
            b1 = in(reg64) b[1],
            c0 = in(reg64) c[0],
            c1 = in(reg64) c[1],
            c2 = in(reg64) c[2],
            c3 = in(reg64) c[3],
            // No memory operands: shared-memory loads may be scheduled across it.
            options(nomem, nostack),
        );
    }
    [d0, d1, d2, d3]
}

/// `value` rounded to TF32 (10 mantissa bits, round to nearest, ties away from zero:
/// `cvt.rna.tf32.f32`), as the 32-bit register the TF32 `mma.sync` takes.
#[inline(always)]
pub fn to_tf32(value: f32) -> u32 {
    let out: u32;
    // SAFETY: a conversion between registers.
    unsafe {
        asm!("cvt.rna.tf32.f32 {o}, {v};", o = out(reg32) out, v = in(reg32) value, options(pure, nomem, nostack))
    };
    out
}

/// D = A B + C on a 16x8x8 tile with TF32 inputs (from [`to_tf32`]) and f32 accumulators
/// (`mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32`, sm_80+). Fragments as in
/// [`dmma_m16n8k8`]. Every lane must call it together.
#[inline(always)]
pub fn tf32_m16n8k8(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
    let (d0, d1, d2, d3): (f32, f32, f32, f32);
    // SAFETY: a warp-wide instruction on registers only; all lanes call it (documented).
    unsafe {
        asm!(
            "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {{{d0}, {d1}, {d2}, {d3}}}, {{{a0}, {a1}, {a2}, {a3}}}, {{{b0}, {b1}}}, {{{c0}, {c1}, {c2}, {c3}}};",
            d0 = out(reg32) d0,
            d1 = out(reg32) d1,
            d2 = out(reg32) d2,
            d3 = out(reg32) d3,
            a0 = in(reg32) a[0],
            a1 = in(reg32) a[1],
            a2 = in(reg32) a[2],
            a3 = in(reg32) a[3],
            b0 = in(reg32) b[0],
            b1 = in(reg32) b[1],
            c0 = in(reg32) c[0],
            c1 = in(reg32) c[1],
            c2 = in(reg32) c[2],
            c3 = in(reg32) c[3],
            options(nomem, nostack),
        );
    }
    [d0, d1, d2, d3]
}

/// The element types with a 16x8x8 tensor-core instruction of the same fragment layout:
/// f64 (DMMA, sm_90) and f32 (through TF32).
pub trait Mma16x8x8: crate::device::Float {
    /// The register an input fragment element is passed in.
    type Fragment: Copy;
    /// An input element as the instruction takes it (f32: rounded to TF32).
    fn fragment(self) -> Self::Fragment;
    /// D = A B + C on a 16x8x8 tile (fragments as in [`dmma_m16n8k8`]).
    fn mma_16x8x8(a: [Self::Fragment; 4], b: [Self::Fragment; 2], c: [Self; 4]) -> [Self; 4];
}

impl Mma16x8x8 for f32 {
    type Fragment = u32;
    #[inline(always)]
    fn fragment(self) -> u32 {
        to_tf32(self)
    }
    #[inline(always)]
    fn mma_16x8x8(a: [u32; 4], b: [u32; 2], c: [f32; 4]) -> [f32; 4] {
        tf32_m16n8k8(a, b, c)
    }
}

#[cfg(target_feature = "sm_90")]
impl Mma16x8x8 for f64 {
    type Fragment = f64;
    #[inline(always)]
    fn fragment(self) -> f64 {
        self
    }
    #[inline(always)]
    fn mma_16x8x8(a: [f64; 4], b: [f64; 2], c: [f64; 4]) -> [f64; 4] {
        dmma_m16n8k8(a, b, c)
    }
}
