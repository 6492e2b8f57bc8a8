//! Summary statistics of repeated trials.

use serde::Serialize;

/// Median, range and spread of one figure over several trials.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Summary {
    /// Number of values.
    pub n: usize,
    /// The median (mean of the two middle values for an even count).
    pub median: f64,
    /// The smallest value.
    pub min: f64,
    /// The largest value.
    pub max: f64,
    /// Standard deviation over mean (0 for fewer than two values).
    pub cv: f64,
}

/// The median of `values` (`NaN` when empty).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    let mid = v.len() / 2;
    if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    }
}

/// Summarizes `values`.
pub fn summarize(values: &[f64]) -> Summary {
    let n = values.len();
    let min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let mean = values.iter().sum::<f64>() / n.max(1) as f64;
    let cv = if n < 2 || mean == 0.0 {
        0.0
    } else {
        let var = values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        var.sqrt() / mean
    };
    Summary {
        n,
        median: median(values),
        min: if n == 0 { f64::NAN } else { min },
        max: if n == 0 { f64::NAN } else { max },
        cv,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_spread() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
        let s = summarize(&[10.0, 10.0, 10.0]);
        assert_eq!((s.min, s.max, s.cv), (10.0, 10.0, 0.0));
        let s = summarize(&[9.0, 11.0]);
        assert!((s.cv - (2.0f64.sqrt() / 10.0)).abs() < 1e-9);
    }
}
