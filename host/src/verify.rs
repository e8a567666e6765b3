//! Comparing a result with its reference: the one helper every test and benchmark uses.
//!
//! Three measures side by side: the relative norm error ||out - ref|| / ||ref|| (what we gate
//! on), the Tor Vergata report's mean thresholded absolute difference (differences under `eps`
//! ignored, the rest summed and divided by n), and the GPU101 report's count of entries whose
//! absolute difference exceeds a threshold (1e-3 there).

use serde::Serialize;

use crate::error::{Error, Result};

/// How far `out` is from `reference`.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Comparison {
    pub len: usize,
    /// ||out - ref||_2 / ||ref||_2 (the absolute norm when the reference is all zeros).
    pub relative_error: f64,
    /// max_i |out_i - ref_i|
    pub max_abs_error: f64,
    /// Tor Vergata: sum of |out_i - ref_i| over differences above `threshold`, divided by n.
    pub mean_thresholded_error: f64,
    /// GPU101: how many entries differ by more than `threshold`.
    pub count_over_threshold: usize,
    pub threshold: f64,
    /// Entries of `out` that are NaN or infinite where the reference is finite (never passes).
    pub non_finite: usize,
    /// Entries of the reference that are NaN or infinite (never passes: nothing to compare with).
    pub reference_non_finite: usize,
}

impl Comparison {
    /// Whether the relative error is within `tolerance` and nothing is NaN/inf.
    pub fn passes(&self, tolerance: f64) -> bool {
        self.non_finite == 0 && self.reference_non_finite == 0 && self.relative_error <= tolerance
    }

    /// Ok when it passes, else an error that says by how much it failed, naming `what`.
    pub fn check(&self, what: &str, tolerance: f64) -> Result<()> {
        if self.passes(tolerance) {
            return Ok(());
        }
        if self.reference_non_finite > 0 {
            return Err(Error::Verification(format!(
                "{what}: the reference itself has {} of {} entries NaN or infinite (it overflows in this \
                 precision on this input): nothing to compare with",
                self.reference_non_finite, self.len
            )));
        }
        Err(Error::Verification(format!(
            "{what}: relative error {:.3e} (tolerance {tolerance:.1e}), max abs error {:.3e}, {} of {} entries off by more than {:.0e}, {} not finite",
            self.relative_error,
            self.max_abs_error,
            self.count_over_threshold,
            self.len,
            self.threshold,
            self.non_finite
        )))
    }
}

/// Compares `out` with `reference` (both converted to f64). `threshold` is the absolute
/// threshold of the reports' two measures.
pub fn compare<T: Into<f64> + Copy, U: Into<f64> + Copy>(
    out: &[T],
    reference: &[U],
    threshold: f64,
) -> Comparison {
    assert_eq!(out.len(), reference.len(), "compare: lengths differ");
    let (mut diff2, mut ref2, mut max_abs, mut thresholded) = (0.0f64, 0.0f64, 0.0f64, 0.0f64);
    let (mut over, mut non_finite, mut reference_non_finite) = (0usize, 0usize, 0usize);
    for (&o, &r) in out.iter().zip(reference) {
        let (o, r): (f64, f64) = (o.into(), r.into());
        if !r.is_finite() {
            reference_non_finite += 1;
            continue;
        }
        if !o.is_finite() {
            non_finite += 1;
            continue;
        }
        let d = (o - r).abs();
        diff2 += d * d;
        ref2 += r * r;
        max_abs = max_abs.max(d);
        if d > threshold {
            thresholded += d;
            over += 1;
        }
    }
    let mut relative_error = if ref2 > 0.0 { (diff2 / ref2).sqrt() } else { diff2.sqrt() };
    if relative_error.is_nan() && max_abs.is_finite() {
        // inf / inf: squares of values past 1e154 overflowed (a diverging sweep in f64). The
        // norms again, scaled by the largest magnitude.
        let pairs = out.iter().zip(reference).map(|(&o, &r)| (o.into(), r.into()));
        let finite = pairs.filter(|(o, r): &(f64, f64)| o.is_finite() && r.is_finite());
        let scale = finite.clone().fold(max_abs, |m, (_, r)| m.max(r.abs()));
        let (diff2, ref2) = finite.fold((0.0, 0.0), |(d2, r2), (o, r)| {
            let (d, r) = ((o - r) / scale, r / scale);
            (d2 + d * d, r2 + r * r)
        });
        relative_error = (diff2 / ref2).sqrt();
    }
    Comparison {
        len: out.len(),
        relative_error: if non_finite > 0 { f64::INFINITY } else { relative_error },
        max_abs_error: max_abs,
        mean_thresholded_error: if out.is_empty() { 0.0 } else { thresholded / out.len() as f64 },
        count_over_threshold: over,
        threshold,
        non_finite,
        reference_non_finite,
    }
}

/// Relative tolerances used across tests for results accumulated in `T`, scaled by the
/// length of the longest dot product.
pub trait Tolerance {
    const EPSILON: f64;
    /// Tolerance for sums of `terms` products (rounding grows about with sqrt(terms); we allow
    /// a linear bound to stay robust on cancellation-heavy inputs).
    fn tolerance(terms: usize) -> f64 {
        Self::EPSILON * 8.0 * (terms.max(1) as f64)
    }
}
impl Tolerance for f32 {
    const EPSILON: f64 = f32::EPSILON as f64;
}
impl Tolerance for f64 {
    const EPSILON: f64 = f64::EPSILON;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_vectors_have_zero_error() {
        let c = compare(&[1.0f64, 2.0, 3.0], &[1.0f64, 2.0, 3.0], 1e-3);
        assert_eq!(c.relative_error, 0.0);
        assert_eq!(c.count_over_threshold, 0);
        assert!(c.passes(0.0));
    }

    #[test]
    fn measures_agree_with_hand_computation() {
        let c = compare(&[1.0f32, 2.0, 3.5], &[1.0f64, 2.0, 3.0], 0.1);
        let expected = 0.5 / (1.0f64 + 4.0 + 9.0).sqrt();
        assert!((c.relative_error - expected).abs() < 1e-15);
        assert_eq!(c.max_abs_error, 0.5);
        assert_eq!(c.count_over_threshold, 1);
        assert!((c.mean_thresholded_error - 0.5 / 3.0).abs() < 1e-15);
    }

    #[test]
    fn nan_never_passes() {
        let c = compare(&[f64::NAN, 1.0], &[0.0, 1.0], 1e-3);
        assert_eq!(c.non_finite, 1);
        assert!(!c.passes(1e300));
        assert!(c.check("nan", 1.0).unwrap_err().to_string().contains("1 not finite"));
    }

    /// Values whose squares overflow f64 are compared as any others.
    #[test]
    fn huge_values_compare_without_overflow() {
        let c = compare(&[1e200, 2e200], &[1e200, 2.000002e200], 0.0);
        let expected = 2e-6 / (1.0f64 + 2.000002 * 2.000002).sqrt();
        assert!((c.relative_error - expected).abs() < 1e-9 * expected, "{}", c.relative_error);
        assert!(c.passes(1e-5) && !c.passes(1e-7));
    }

    /// A reference that overflowed (a smoother diverging in f32) is named as the problem, and
    /// an output that overflowed with it does not pass.
    #[test]
    fn a_reference_not_finite_never_passes() {
        let c = compare(&[f32::INFINITY, 1.0], &[f32::INFINITY, 1.0], 1e-3);
        assert_eq!((c.reference_non_finite, c.non_finite), (1, 0));
        assert!(!c.passes(1e300));
        let err = c.check("sweep", 1.0).unwrap_err().to_string();
        assert!(err.contains("the reference itself has 1 of 2 entries NaN or infinite"), "{err}");
    }
}
