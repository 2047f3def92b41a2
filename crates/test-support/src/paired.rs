//! Paired, interleaved measurement for the benches that compare two ways of doing one thing
//! (a raw CLI run against the provider's, a plain run against a delegating one): each pair runs
//! both, alternating which goes first, and the figure is the median of the paired differences,
//! which resists load that changes during the sitting far better than two medians would.

use std::time::Duration;

/// The median, 25th and 75th percentile of some samples, in milliseconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Quartiles {
    /// The median.
    pub median: f64,
    /// The 25th percentile.
    pub q1: f64,
    /// The 75th percentile.
    pub q3: f64,
}

impl Quartiles {
    /// Of `samples` (nearest rank); all zero for none.
    pub fn of(mut samples: Vec<f64>) -> Self {
        if samples.is_empty() {
            return Self {
                median: 0.0,
                q1: 0.0,
                q3: 0.0,
            };
        }
        samples.sort_by(f64::total_cmp);
        let last = samples.len() - 1;
        let at = |q: f64| {
            let rank = (last as f64 * q).round() as usize;
            samples[rank.min(last)]
        };
        Self {
            median: at(0.5),
            q1: at(0.25),
            q3: at(0.75),
        }
    }
}

/// What [`measure`] found: each side's spread and the spread of `b − a` per pair.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Paired {
    /// The first way.
    pub a: Quartiles,
    /// The second way.
    pub b: Quartiles,
    /// `b − a`, pair by pair.
    pub difference: Quartiles,
}

impl Paired {
    /// Prints the figures under `title`: side `a`'s median and quartiles, side `b`'s median,
    /// and the median of the paired differences (`b − a`, the overhead) with its quartiles and
    /// its share of `a`'s median.
    pub fn print(&self, title: &str, a: &str, b: &str) {
        let width = a.len().max(b.len()).max("overhead".len());
        let (diff, a_median) = (self.difference.median, self.a.median);
        println!("{title}:");
        println!(
            "  {a:<width$}  median {a_median:7.1} ms  [p25 {:.1}, p75 {:.1}]",
            self.a.q1, self.a.q3
        );
        println!("  {b:<width$}  median {:7.1} ms", self.b.median);
        println!(
            "  {:<width$}  median of paired differences {diff:+.1} ms ({:+.2} % of the raw median), [p25 {:+.1}, p75 {:+.1}] ms",
            "overhead",
            diff / a_median * 100.0,
            self.difference.q1,
            self.difference.q3
        );
    }
}

/// Runs `a` and `b` once each to warm up, then `pairs` pairs, alternating which runs first.
pub fn measure(
    pairs: usize,
    mut a: impl FnMut() -> Duration,
    mut b: impl FnMut() -> Duration,
) -> Paired {
    a();
    b();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let (mut a_ms, mut b_ms, mut diff_ms) = (Vec::new(), Vec::new(), Vec::new());
    for pair in 0..pairs {
        let (x, y) = if pair % 2 == 0 {
            let x = a();
            (x, b())
        } else {
            let y = b();
            (a(), y)
        };
        a_ms.push(ms(x));
        b_ms.push(ms(y));
        diff_ms.push(ms(y) - ms(x));
    }
    Paired {
        a: Quartiles::of(a_ms),
        b: Quartiles::of(b_ms),
        difference: Quartiles::of(diff_ms),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quartiles_by_nearest_rank() {
        let q = Quartiles::of(vec![5.0, 1.0, 3.0, 2.0, 4.0]);
        assert_eq!((q.median, q.q1, q.q3), (3.0, 2.0, 4.0));
        assert_eq!(Quartiles::of(Vec::new()).median, 0.0);
    }

    #[test]
    fn pairs_alternate_and_differences_are_per_pair() {
        let order = std::cell::RefCell::new(Vec::new());
        let paired = measure(
            4,
            || {
                order.borrow_mut().push('a');
                Duration::from_millis(10)
            },
            || {
                order.borrow_mut().push('b');
                Duration::from_millis(13)
            },
        );
        assert_eq!(order.into_inner().iter().collect::<String>(), "ababbaabba");
        assert_eq!(paired.difference.median, 3.0);
        assert_eq!(paired.a.median, 10.0);
    }
}
