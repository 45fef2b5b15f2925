//! Sequential tests on paired differences: stop playing as soon as the verdict is decided,
//! with stated error rates (docs/ai.md, "Stopping when the verdict is known").
//!
//! Each pair of games gives a difference `d` in [−1, 1] (the points with a card minus the
//! points with its control). Two one-sided sequential probability ratio tests (Wald 1945)
//! run on the same pairs, as Sobel and Wald (1949) combine them for three answers:
//! - *strong*: H0 mean = 0 against H1 mean = +δ;
//! - *weak*: H0 mean = 0 against H1 mean = −δ.
//!
//! The log-likelihood ratio is the normal approximation with the variance estimated from
//! the pairs, as Stockfish's fishtest computes it for game pairs (the "generalized SPRT",
//! M. Van den Bergh): `LLR = n (μ1 − μ0)(2 x̄ − μ0 − μ1) / (2 s²)`. A test accepts H1 when
//! its LLR reaches `ln((1 − β) / α)` and H0 when it falls to `ln(β / (1 − α))`.
//!
//! Pure arithmetic: no games are played here.

use serde::{Deserialize, Serialize};

/// Running sums of paired differences: what every statistic here is computed from. Two
/// partial sums merge exactly ([`Moments::merge`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Moments {
    /// Pairs.
    pub n: u64,
    /// Sum of the differences.
    pub sum: f64,
    /// Sum of their squares.
    pub sum_sq: f64,
}

impl Moments {
    /// Add one difference.
    pub fn push(&mut self, d: f64) {
        self.n += 1;
        self.sum += d;
        self.sum_sq += d * d;
    }

    /// Add another run's sums.
    pub fn merge(&mut self, other: &Moments) {
        self.n += other.n;
        self.sum += other.sum;
        self.sum_sq += other.sum_sq;
    }

    /// The mean difference (0 with no pairs).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            0.0
        } else {
            self.sum / self.n as f64
        }
    }

    /// The sample variance (n − 1 in the denominator; 0 with fewer than two pairs).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn variance(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let n = self.n as f64;
        ((self.sum_sq - self.sum * self.sum / n) / (n - 1.0)).max(0.0)
    }
}

/// The error rates and the effects a sequential test decides between.
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub struct Design {
    /// The chance of calling a card strong (or weak) when it has no effect.
    pub alpha: f64,
    /// The chance of missing an effect of `effect` points or more.
    pub beta: f64,
    /// δ: the smallest effect worth finding, as a share (0.05 is 5 win-rate points).
    pub effect: f64,
}

/// The fewest pairs before a test may stop: below this the variance estimate is too
/// rough to trust.
pub const MIN_PAIRS: u64 = 32;

/// The smallest variance the ratio is computed with: pairs that are all equal (a card
/// and a control that play the same) would otherwise divide by zero.
const MIN_VARIANCE: f64 = 1e-4;

/// Why a design cannot be used.
#[derive(Debug, thiserror::Error, PartialEq)]
pub enum DesignError {
    /// An error rate outside (0, 0.5).
    #[error(
        "--{name} {value} is not an error rate: give a number above 0 and below 0.5 (0.05 is 5 %)"
    )]
    Rate {
        /// `alpha` or `beta`.
        name: &'static str,
        /// What was given.
        value: f64,
    },
    /// An effect outside (0, 1) (shown in points).
    #[error(
        "--effect {} is not an effect size: give win-rate points above 0 and below 100 (5 is a 5-point effect)",
        .0 * 100.0
    )]
    Effect(f64),
}

impl Design {
    /// The design, checked.
    pub fn new(alpha: f64, beta: f64, effect: f64) -> Result<Design, DesignError> {
        for (name, value) in [("alpha", alpha), ("beta", beta)] {
            if !(value > 0.0 && value < 0.5) {
                return Err(DesignError::Rate { name, value });
            }
        }
        if !(effect > 0.0 && effect < 1.0) {
            return Err(DesignError::Effect(effect));
        }
        Ok(Design {
            alpha,
            beta,
            effect,
        })
    }

    /// The LLR bounds: (accept H0 at or below, accept H1 at or above).
    #[must_use]
    pub fn bounds(&self) -> [f64; 2] {
        [
            (self.beta / (1.0 - self.alpha)).ln(),
            ((1.0 - self.beta) / self.alpha).ln(),
        ]
    }

    /// The pairs a fixed-size test with the same error rates needs when the differences'
    /// standard deviation is `sd`: each one-sided test calls the card strong when
    /// `x̄ > z(1−α) s / √n`, and `n` is the least giving power 1 − β at ±δ:
    /// `n = ((z(1−α) + z(1−β)) s / δ)²`.
    #[must_use]
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    pub fn fixed_pairs(&self, sd: f64) -> u64 {
        let z = normal_quantile(1.0 - self.alpha) + normal_quantile(1.0 - self.beta);
        let n = (z * sd / self.effect).powi(2).ceil();
        if n.is_finite() && n > 0.0 {
            n as u64
        } else {
            0
        }
    }
}

/// A one-sided test's state.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Side {
    /// Still undecided.
    Open,
    /// H0 (no effect) accepted.
    Null,
    /// H1 (an effect of δ in this direction) accepted.
    Effect,
}

/// Where the two tests stand after some pairs.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Standing {
    /// The strong test's LLR (H1: +δ).
    pub llr_strong: f64,
    /// The weak test's LLR (H1: −δ).
    pub llr_weak: f64,
    /// The strong test.
    pub strong: Side,
    /// The weak test.
    pub weak: Side,
}

impl Standing {
    /// Both tests have decided (or one found an effect: the other cannot then).
    #[must_use]
    pub fn decided(&self) -> bool {
        self.strong == Side::Effect
            || self.weak == Side::Effect
            || (self.strong != Side::Open && self.weak != Side::Open)
    }
}

/// The normal-approximation LLR of H1 mean = `mu1` against H0 mean = `mu0`.
#[must_use]
#[allow(clippy::cast_precision_loss)]
pub fn llr(m: &Moments, mu0: f64, mu1: f64) -> f64 {
    if m.n < 2 {
        return 0.0;
    }
    let var = m.variance().max(MIN_VARIANCE);
    m.n as f64 * (mu1 - mu0) * (2.0 * m.mean() - mu0 - mu1) / (2.0 * var)
}

/// Update `before` with the pairs so far: a side that has decided stays decided (each
/// one-sided test stops at its first crossing).
#[must_use]
pub fn step(design: &Design, m: &Moments, before: Option<Standing>) -> Standing {
    let [lower, upper] = design.bounds();
    let llr_strong = llr(m, 0.0, design.effect);
    let llr_weak = llr(m, 0.0, -design.effect);
    let side = |prev: Option<Side>, l: f64| match prev {
        Some(s @ (Side::Null | Side::Effect)) => s,
        _ if m.n < MIN_PAIRS => Side::Open,
        _ if l >= upper => Side::Effect,
        _ if l <= lower => Side::Null,
        _ => Side::Open,
    };
    Standing {
        llr_strong,
        llr_weak,
        strong: side(before.map(|b| b.strong), llr_strong),
        weak: side(before.map(|b| b.weak), llr_weak),
    }
}

/// The standard normal quantile (Acklam's rational approximation refined by one Halley
/// step; absolute error below 1e-9 on (0, 1)).
#[must_use]
pub fn normal_quantile(p: f64) -> f64 {
    const A: [f64; 6] = [
        -3.969_683_028_665_376e1,
        2.209_460_984_245_205e2,
        -2.759_285_104_469_687e2,
        1.383_577_518_672_69e2,
        -3.066_479_806_614_716e1,
        2.506_628_277_459_239,
    ];
    const B: [f64; 5] = [
        -5.447_609_879_822_406e1,
        1.615_858_368_580_409e2,
        -1.556_989_798_598_866e2,
        6.680_131_188_771_972e1,
        -1.328_068_155_288_572e1,
    ];
    const C: [f64; 6] = [
        -7.784_894_002_430_293e-3,
        -3.223_964_580_411_365e-1,
        -2.400_758_277_161_838,
        -2.549_732_539_343_734,
        4.374_664_141_464_968,
        2.938_163_982_698_783,
    ];
    const D: [f64; 4] = [
        7.784_695_709_041_462e-3,
        3.224_671_290_700_398e-1,
        2.445_134_137_142_996,
        3.754_408_661_907_416,
    ];
    if p <= 0.0 {
        return f64::NEG_INFINITY;
    }
    if p >= 1.0 {
        return f64::INFINITY;
    }
    let tail = |q: f64| {
        (((((C[0] * q + C[1]) * q + C[2]) * q + C[3]) * q + C[4]) * q + C[5])
            / ((((D[0] * q + D[1]) * q + D[2]) * q + D[3]) * q + 1.0)
    };
    let x = if p < 0.024_25 {
        tail((-2.0 * p.ln()).sqrt())
    } else if p > 1.0 - 0.024_25 {
        -tail((-2.0 * (1.0 - p).ln()).sqrt())
    } else {
        let q = p - 0.5;
        let r = q * q;
        (((((A[0] * r + A[1]) * r + A[2]) * r + A[3]) * r + A[4]) * r + A[5]) * q
            / (((((B[0] * r + B[1]) * r + B[2]) * r + B[3]) * r + B[4]) * r + 1.0)
    };
    // One Halley step on Φ(x) − p.
    let e = 0.5 * erfc(-x / std::f64::consts::SQRT_2) - p;
    let u = e * (2.0 * std::f64::consts::PI).sqrt() * (x * x / 2.0).exp();
    x - u / (1.0 + x * u / 2.0)
}

/// The complementary error function (Numerical Recipes' `erfcc`, relative error below
/// 1.2e-7, enough for the Halley step above).
fn erfc(x: f64) -> f64 {
    let z = x.abs();
    let t = 1.0 / (1.0 + 0.5 * z);
    let r = t
        * (-z * z - 1.265_512_23
            + t * (1.000_023_68
                + t * (0.374_091_96
                    + t * (0.096_784_18
                        + t * (-0.186_288_06
                            + t * (0.278_868_07
                                + t * (-1.135_203_98
                                    + t * (1.488_515_87
                                        + t * (-0.822_152_23 + t * 0.170_872_77)))))))))
            .exp();
    if x >= 0.0 { r } else { 2.0 - r }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantiles_match_the_tables() {
        for (p, z) in [
            (0.5, 0.0),
            (0.95, 1.644_853_6),
            (0.975, 1.959_964),
            (0.99, 2.326_347_9),
            (0.01, -2.326_347_9),
            (0.999, 3.090_232_3),
        ] {
            assert!(
                (normal_quantile(p) - z).abs() < 1e-6,
                "{p}: {}",
                normal_quantile(p)
            );
        }
    }

    #[test]
    fn moments_merge_exactly_and_give_the_sample_variance() {
        let (mut a, mut b, mut all) = (Moments::default(), Moments::default(), Moments::default());
        for (i, d) in [1.0, 0.0, -0.5, 1.0, 0.5, 0.0].into_iter().enumerate() {
            if i % 2 == 0 { &mut a } else { &mut b }.push(d);
            all.push(d);
        }
        a.merge(&b);
        assert_eq!(a, all);
        assert!((all.mean() - 2.0 / 6.0).abs() < 1e-12);
        let mean = 2.0 / 6.0;
        let var = [1.0, 0.0, -0.5, 1.0, 0.5, 0.0]
            .iter()
            .map(|d: &f64| (d - mean).powi(2))
            .sum::<f64>()
            / 5.0;
        assert!((all.variance() - var).abs() < 1e-12);
    }

    #[test]
    fn the_fixed_size_is_the_textbook_one() {
        // α = β = 0.05: (1.645 + 1.645)² · 0.5² / 0.05² ≈ 1082.2 → 1083.
        let d = Design::new(0.05, 0.05, 0.05).expect("design");
        assert_eq!(d.fixed_pairs(0.5), 1083);
        let [lo, hi] = d.bounds();
        assert!((hi - 19f64.ln()).abs() < 1e-12 && (lo + 19f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn designs_outside_their_ranges_are_refused() {
        assert!(matches!(
            Design::new(0.0, 0.05, 0.05),
            Err(DesignError::Rate { name: "alpha", .. })
        ));
        assert!(matches!(
            Design::new(0.05, 0.6, 0.05),
            Err(DesignError::Rate { name: "beta", .. })
        ));
        assert_eq!(Design::new(0.05, 0.05, 1.5), Err(DesignError::Effect(1.5)));
    }

    /// Differences drawn around a true mean: a clear effect is called strong (or weak),
    /// no effect is called null on both sides, and a decided side stays decided.
    #[test]
    fn the_tests_decide_each_way() {
        let design = Design::new(0.05, 0.05, 0.05).expect("design");
        let run = |pattern: &[f64]| {
            let mut m = Moments::default();
            let mut s = None;
            for i in 0..4000 {
                m.push(pattern[i % pattern.len()]);
                let now = step(&design, &m, s);
                s = Some(now);
                if now.decided() {
                    return (now, m.n);
                }
            }
            (s.expect("ran"), m.n)
        };
        // Mean 0.25: strong, early.
        let (s, n) = run(&[1.0, 0.0, 0.0, 0.0]);
        assert_eq!((s.strong, s.weak), (Side::Effect, Side::Null));
        assert!((MIN_PAIRS..200).contains(&n), "{n}");
        let (s, _) = run(&[-1.0, 0.0, 0.0, 0.0]);
        assert_eq!(s.weak, Side::Effect);
        // Mean 0: both null.
        let (s, _) = run(&[1.0, -1.0, 0.0, 0.5, -0.5]);
        assert_eq!((s.strong, s.weak), (Side::Null, Side::Null));
        // All equal: no variance, no effect, decided at the minimum.
        let (s, n) = run(&[0.0]);
        assert_eq!((s.strong, s.weak, n), (Side::Null, Side::Null, MIN_PAIRS));
    }
}
