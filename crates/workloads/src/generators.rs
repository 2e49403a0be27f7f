//! YCSB's request distributions over item numbers `0..items`.
//!
//! Each generator owns a seeded [`ChaCha8Rng`], so a run is reproducible
//! from its seed; give every client thread its own seed (or
//! [`Zipfian::fork`], which also skips recomputing ζ). Item numbers map to
//! rows through a shape (`Shape::row(item)`).
//!
//! - [`Uniform`]: every item equally likely.
//! - [`Zipfian`]: YCSB's `ZipfianGenerator` (Gray et al., "Quickly
//!   generating billion-record synthetic databases"): item 0 is the most
//!   popular, then 1, and so on; constant θ = 0.99 by default
//!   ([`ZIPFIAN_CONSTANT`]).
//! - [`ScrambledZipfian`]: YCSB's `ScrambledZipfianGenerator`: a Zipfian
//!   over 10^10 items hashed with [`fnv`] onto `0..items`, so the popular
//!   items are spread over the key space.
//! - [`Latest`]: YCSB's `SkewedLatestGenerator`: the most recently
//!   inserted items are the most popular.
//! - [`Hotspot`]: YCSB's `HotspotIntegerGenerator`: a fraction of the
//!   operations goes to a hot set at the start of the range.
//!
//! Differences from YCSB, all invisible at a fixed item count: YCSB's
//! `fnvhash64` takes `abs` of the hash where this crate masks the sign bit
//! (as `ycsb_key` of docs/workloads.md does); when the item count grows, η is
//! recomputed with the new count (YCSB keeps the initial one); [`Latest`]
//! can return the newest item itself (YCSB's returns 1..=newest); ζ of a
//! large count is computed with an Euler–Maclaurin expansion instead of a
//! sum of every term (relative error below 10^-12), so any θ works with
//! [`ScrambledZipfian`] without summing 10^10 terms.

use crate::fnv;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// YCSB's default Zipfian constant.
pub const ZIPFIAN_CONSTANT: f64 = 0.99;
/// Items of the Zipfian behind [`ScrambledZipfian`] (YCSB's `ITEM_COUNT`).
pub const SCRAMBLED_ITEM_COUNT: u64 = 10_000_000_000;
/// ζ(10^10 + 1, 0.99), as YCSB hard-codes it (`ZETAN`).
pub const SCRAMBLED_ZETAN: f64 = 26.469_028_201_783_02;

/// Counts up to this are summed term by term; above, Euler–Maclaurin.
const EXACT_ZETA_LIMIT: u64 = 100_000;

/// ζ(n, θ) = Σ_{i=1..n} 1/i^θ.
pub fn zeta(n: u64, theta: f64) -> f64 {
    if n <= EXACT_ZETA_LIMIT {
        return zeta_exact(0, n, theta);
    }
    // Sum the first m - 1 terms, then Euler–Maclaurin from m to n.
    let m = 10_000u64;
    let head = zeta_exact(0, m - 1, theta);
    let (mf, nf) = (m as f64, n as f64);
    let f = |x: f64| x.powf(-theta);
    let d1 = |x: f64| -theta * x.powf(-theta - 1.0);
    let d3 = |x: f64| -theta * (theta + 1.0) * (theta + 2.0) * x.powf(-theta - 3.0);
    let integral = if (theta - 1.0).abs() < 1e-12 {
        (nf / mf).ln()
    } else {
        (nf.powf(1.0 - theta) - mf.powf(1.0 - theta)) / (1.0 - theta)
    };
    head + integral + (f(mf) + f(nf)) / 2.0 + (d1(nf) - d1(mf)) / 12.0 - (d3(nf) - d3(mf)) / 720.0
}

/// Σ_{i=from..to-1} 1/(i+1)^θ, term by term.
fn zeta_exact(from: u64, to: u64, theta: f64) -> f64 {
    (from..to).map(|i| 1.0 / ((i + 1) as f64).powf(theta)).sum()
}

/// Σ_{i=from..to-1} 1/(i+1)^θ, i.e. ζ(to) − ζ(from).
fn zeta_range(from: u64, to: u64, theta: f64) -> f64 {
    if to.saturating_sub(from) <= EXACT_ZETA_LIMIT {
        zeta_exact(from, to, theta)
    } else {
        zeta(to, theta) - zeta(from, theta)
    }
}

/// Items chosen uniformly from `0..items`.
#[derive(Clone, Debug)]
pub struct Uniform {
    items: u64,
    rng: ChaCha8Rng,
}

impl Uniform {
    /// Uniform over `0..items` (`items` of 0 is taken as 1).
    pub fn new(items: u64, seed: u64) -> Uniform {
        Uniform {
            items: items.max(1),
            rng: ChaCha8Rng::seed_from_u64(seed),
        }
    }

    /// The next item.
    pub fn next_item(&mut self) -> u64 {
        self.rng.random_range(0..self.items)
    }
}

/// YCSB's `ZipfianGenerator` over `0..items`: item 0 is the most popular.
#[derive(Clone, Debug)]
pub struct Zipfian {
    items: u64,
    theta: f64,
    alpha: f64,
    zeta2theta: f64,
    zetan: f64,
    eta: f64,
    rng: ChaCha8Rng,
}

impl Zipfian {
    /// YCSB's default: θ = 0.99 over `0..items` (`items` of 0 is taken as 1).
    pub fn ycsb(items: u64, seed: u64) -> Zipfian {
        let items = items.max(1);
        Zipfian::with_zetan(items, ZIPFIAN_CONSTANT, zeta(items, ZIPFIAN_CONSTANT), seed)
    }

    /// Zipfian with constant `theta` (0 < θ < 1, as YCSB requires) over
    /// `0..items`.
    pub fn new(items: u64, theta: f64, seed: u64) -> Result<Zipfian, String> {
        check_theta(theta)?;
        if items == 0 {
            return Err("a Zipfian distribution needs at least one item".into());
        }
        Ok(Zipfian::with_zetan(items, theta, zeta(items, theta), seed))
    }

    fn with_zetan(items: u64, theta: f64, zetan: f64, seed: u64) -> Zipfian {
        let zeta2theta = zeta(2, theta);
        let mut z = Zipfian {
            items,
            theta,
            alpha: 1.0 / (1.0 - theta),
            zeta2theta,
            zetan,
            eta: 0.0,
            rng: ChaCha8Rng::seed_from_u64(seed),
        };
        z.eta = z.eta_for(items);
        z
    }

    fn eta_for(&self, items: u64) -> f64 {
        (1.0 - (2.0 / items as f64).powf(1.0 - self.theta)) / (1.0 - self.zeta2theta / self.zetan)
    }

    /// The same distribution with a fresh generator seeded by `seed`
    /// (no ζ recomputation).
    pub fn fork(&self, seed: u64) -> Zipfian {
        Zipfian {
            rng: ChaCha8Rng::seed_from_u64(seed),
            ..self.clone()
        }
    }

    /// Items the distribution is over.
    pub fn items(&self) -> u64 {
        self.items
    }

    /// Probability of item 0 (1/ζ(items, θ)).
    pub fn top_probability(&self) -> f64 {
        1.0 / self.zetan
    }

    /// Changes the item count (YCSB's `nextLong(itemcount)`): growing adds
    /// the new terms to ζ; shrinking recomputes it.
    pub fn set_items(&mut self, items: u64) {
        let items = items.max(1);
        if items == self.items {
            return;
        }
        self.zetan = if items > self.items {
            self.zetan + zeta_range(self.items, items, self.theta)
        } else {
            zeta(items, self.theta)
        };
        self.items = items;
        self.eta = self.eta_for(items);
    }

    /// The next item in `0..items`.
    pub fn next_item(&mut self) -> u64 {
        let u: f64 = self.rng.random();
        let uz = u * self.zetan;
        if uz < 1.0 {
            return 0;
        }
        if uz < 1.0 + 0.5f64.powf(self.theta) {
            return 1.min(self.items - 1);
        }
        let v = (self.items as f64 * (self.eta * u - self.eta + 1.0).powf(self.alpha)) as u64;
        v.min(self.items - 1)
    }
}

fn check_theta(theta: f64) -> Result<(), String> {
    if theta > 0.0 && theta < 1.0 {
        Ok(())
    } else {
        Err(format!(
            "Zipfian constant must be between 0 and 1 (exclusive), got {theta}"
        ))
    }
}

/// YCSB's `ScrambledZipfianGenerator`: Zipfian popularity, with the
/// popular items scattered over `0..items` by [`fnv`].
#[derive(Clone, Debug)]
pub struct ScrambledZipfian {
    items: u64,
    inner: Zipfian,
}

impl ScrambledZipfian {
    /// θ = 0.99 over `0..items`, with YCSB's precomputed ζ.
    pub fn ycsb(items: u64, seed: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            items: items.max(1),
            inner: Zipfian::with_zetan(
                SCRAMBLED_ITEM_COUNT + 1,
                ZIPFIAN_CONSTANT,
                SCRAMBLED_ZETAN,
                seed,
            ),
        }
    }

    /// Constant `theta` over `0..items`.
    pub fn new(items: u64, theta: f64, seed: u64) -> Result<ScrambledZipfian, String> {
        if theta == ZIPFIAN_CONSTANT {
            return Ok(ScrambledZipfian::ycsb(items, seed));
        }
        Ok(ScrambledZipfian {
            items: items.max(1),
            inner: Zipfian::new(SCRAMBLED_ITEM_COUNT + 1, theta, seed)?,
        })
    }

    /// The same distribution with a fresh generator.
    pub fn fork(&self, seed: u64) -> ScrambledZipfian {
        ScrambledZipfian {
            items: self.items,
            inner: self.inner.fork(seed),
        }
    }

    /// The next item in `0..items`.
    pub fn next_item(&mut self) -> u64 {
        (fnv(self.inner.next_item()) & 0x7FFF_FFFF_FFFF_FFFF) % self.items
    }
}

/// YCSB's `SkewedLatestGenerator`: Zipfian by age, the newest item first.
#[derive(Clone, Debug)]
pub struct Latest {
    zipf: Zipfian,
}

impl Latest {
    /// Starts with items `0..items` inserted.
    pub fn new(items: u64, seed: u64) -> Latest {
        Latest {
            zipf: Zipfian::ycsb(items, seed),
        }
    }

    /// The next item when `newest` is the highest item inserted so far:
    /// `newest` is the most popular, then `newest - 1`, and so on.
    pub fn next_item(&mut self, newest: u64) -> u64 {
        self.zipf.set_items(newest.saturating_add(1));
        newest - self.zipf.next_item().min(newest)
    }
}

/// YCSB's `HotspotIntegerGenerator`: `hot_op_fraction` of the operations
/// go uniformly to the first `hot_set_fraction` of the items, the rest
/// uniformly to the others.
#[derive(Clone, Debug)]
pub struct Hotspot {
    hot: u64,
    cold: u64,
    hot_op_fraction: f64,
    rng: ChaCha8Rng,
}

impl Hotspot {
    /// Both fractions in 0..=1 (YCSB's defaults are 0.2 and 0.8).
    pub fn new(
        items: u64,
        hot_set_fraction: f64,
        hot_op_fraction: f64,
        seed: u64,
    ) -> Result<Hotspot, String> {
        for (name, f) in [
            ("hot set fraction", hot_set_fraction),
            ("hot operation fraction", hot_op_fraction),
        ] {
            if !(0.0..=1.0).contains(&f) {
                return Err(format!("{name} must be between 0 and 1, got {f}"));
            }
        }
        let items = items.max(1);
        let hot = ((items as f64 * hot_set_fraction) as u64).min(items);
        Ok(Hotspot {
            hot,
            cold: items - hot,
            hot_op_fraction,
            rng: ChaCha8Rng::seed_from_u64(seed),
        })
    }

    /// The next item.
    pub fn next_item(&mut self) -> u64 {
        let hot_op = self.rng.random::<f64>() < self.hot_op_fraction;
        if (hot_op && self.hot > 0) || self.cold == 0 {
            self.rng.random_range(0..self.hot)
        } else {
            self.hot + self.rng.random_range(0..self.cold)
        }
    }
}

/// Any of the generators, chosen by name (for command lines).
#[derive(Clone, Debug)]
pub enum KeyGenerator {
    Uniform(Uniform),
    Zipfian(Zipfian),
    ScrambledZipfian(ScrambledZipfian),
    /// With the newest inserted item.
    Latest(Latest, u64),
    Hotspot(Hotspot),
}

impl KeyGenerator {
    /// Names [`KeyGenerator::parse`] accepts.
    pub const NAMES: [&'static str; 5] = ["uniform", "zipfian", "scrambled", "latest", "hotspot"];

    /// `uniform`, `zipfian[:θ]`, `scrambled[:θ]` (YCSB's `zipfian`
    /// request distribution), `latest`, `hotspot[:hotset:hotops]`
    /// over `0..items`.
    pub fn parse(spec: &str, items: u64, seed: u64) -> Result<KeyGenerator, String> {
        let mut parts = spec.trim().split(':');
        let name = parts.next().unwrap_or_default().to_ascii_lowercase();
        let params: Vec<f64> = parts
            .map(|p| {
                p.parse::<f64>()
                    .map_err(|_| format!("'{p}' in '{spec}' is not a number"))
            })
            .collect::<Result<_, _>>()?;
        let theta = params.first().copied().unwrap_or(ZIPFIAN_CONSTANT);
        let check_params = |allowed: usize| {
            if params.len() > allowed {
                Err(format!("'{spec}': too many parameters"))
            } else {
                Ok(())
            }
        };
        match name.as_str() {
            "uniform" => check_params(0).map(|()| KeyGenerator::Uniform(Uniform::new(items, seed))),
            "zipfian" => {
                check_params(1)?;
                Zipfian::new(items.max(1), theta, seed).map(KeyGenerator::Zipfian)
            }
            "scrambled" => {
                check_params(1)?;
                ScrambledZipfian::new(items, theta, seed).map(KeyGenerator::ScrambledZipfian)
            }
            "latest" => check_params(0)
                .map(|()| KeyGenerator::Latest(Latest::new(items, seed), items.saturating_sub(1))),
            "hotspot" => {
                check_params(2)?;
                let hot_set = params.first().copied().unwrap_or(0.2);
                let hot_ops = params.get(1).copied().unwrap_or(0.8);
                Hotspot::new(items, hot_set, hot_ops, seed).map(KeyGenerator::Hotspot)
            }
            _ => Err(format!(
                "unknown distribution '{spec}'; valid: {}",
                KeyGenerator::NAMES.join(", ")
            )),
        }
    }

    /// Tells `latest` that items up to `newest` now exist (others ignore it).
    pub fn set_newest(&mut self, newest: u64) {
        if let KeyGenerator::Latest(_, n) = self {
            *n = newest;
        }
    }

    /// The next item.
    pub fn next_item(&mut self) -> u64 {
        match self {
            KeyGenerator::Uniform(g) => g.next_item(),
            KeyGenerator::Zipfian(g) => g.next_item(),
            KeyGenerator::ScrambledZipfian(g) => g.next_item(),
            KeyGenerator::Latest(g, newest) => g.next_item(*newest),
            KeyGenerator::Hotspot(g) => g.next_item(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn histogram(items: u64, draws: usize, mut next: impl FnMut() -> u64) -> Vec<u64> {
        let mut hits = vec![0u64; items as usize];
        for _ in 0..draws {
            let v = next();
            assert!(v < items, "{v} out of range");
            hits[v as usize] += 1;
        }
        hits
    }

    #[test]
    fn zeta_expansion_matches_the_sum() {
        for theta in [0.5, 0.8, 0.99] {
            for n in [100_001u64, 1_000_000, 3_000_000] {
                let exact = zeta_exact(0, n, theta);
                let approx = zeta(n, theta);
                assert!(
                    ((exact - approx) / exact).abs() < 1e-11,
                    "θ={theta} n={n}: {exact} vs {approx}"
                );
            }
        }
        // YCSB's hard-coded ζ(10^10 + 1, 0.99).
        let z = zeta(SCRAMBLED_ITEM_COUNT + 1, 0.99);
        assert!((z - SCRAMBLED_ZETAN).abs() < 1e-6, "{z}");
        // Growing by pieces equals computing at once.
        let grown = zeta(50_000, 0.99) + zeta_range(50_000, 400_000, 0.99);
        assert!((grown - zeta(400_000, 0.99)).abs() < 1e-9);
    }

    #[test]
    fn zipfian_skew() {
        let items = 1000;
        let mut z = Zipfian::ycsb(items, 7);
        let hits = histogram(items, 200_000, || z.next_item());
        let top = hits
            .iter()
            .enumerate()
            .max_by_key(|(_, h)| **h)
            .map(|(i, _)| i);
        assert_eq!(top, Some(0), "item 0 is the most popular");
        assert!(hits[0] > hits[1] && hits[1] > hits[10] && hits[10] > hits[500]);
        // Item 0 gets about 1/ζ(1000, 0.99) ≈ 13% of the draws.
        let share = hits[0] as f64 / 200_000.0;
        assert!(
            (share - z.top_probability()).abs() < 0.01,
            "{share} vs {}",
            z.top_probability()
        );
        // The top 10% of items take ζ(100)/ζ(1000) ≈ 70% of the draws.
        let top_tenth = hits[..100].iter().sum::<u64>() as f64 / 200_000.0;
        let expected = zeta(100, 0.99) / zeta(1000, 0.99);
        assert!(
            (top_tenth - expected).abs() < 0.01,
            "{top_tenth} vs {expected}"
        );
    }

    #[test]
    fn zipfian_is_reproducible_and_forks_differ() {
        let base = Zipfian::ycsb(1_000_000, 1);
        let a: Vec<u64> = {
            let mut g = base.fork(5);
            (0..100).map(|_| g.next_item()).collect()
        };
        let b: Vec<u64> = {
            let mut g = Zipfian::ycsb(1_000_000, 5);
            (0..100).map(|_| g.next_item()).collect()
        };
        let c: Vec<u64> = {
            let mut g = base.fork(6);
            (0..100).map(|_| g.next_item()).collect()
        };
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert!(Zipfian::new(10, 1.0, 0).is_err());
        assert!(Zipfian::new(0, 0.5, 0).is_err());
        let mut one = Zipfian::ycsb(1, 0);
        assert!((0..100).all(|_| one.next_item() == 0));
    }

    #[test]
    fn zipfian_other_theta_is_flatter() {
        let items = 1000;
        let mut steep = Zipfian::ycsb(items, 3);
        let mut flat = Zipfian::new(items, 0.5, 3).unwrap_or_else(|_| Zipfian::ycsb(items, 3));
        let s = histogram(items, 100_000, || steep.next_item());
        let f = histogram(items, 100_000, || flat.next_item());
        assert!(f[0] < s[0]);
        assert!(f[0] > f[999]);
    }

    #[test]
    fn scrambled_zipfian_scatters_the_hot_items() {
        let items = 10_000u64;
        let mut g = ScrambledZipfian::ycsb(items, 11);
        let hits = histogram(items, 200_000, || g.next_item());
        let top = hits
            .iter()
            .enumerate()
            .max_by_key(|(_, h)| **h)
            .map(|(i, _)| i as u64);
        // The most popular Zipfian item (0) hashes to this one.
        assert_eq!(top, Some((fnv(0) & 0x7FFF_FFFF_FFFF_FFFF) % items));
        let max = hits.iter().max().copied().unwrap_or(0);
        assert!(max > 200_000 / 100, "skewed: {max}");
        assert!(ScrambledZipfian::new(items, 0.7, 1).is_ok());
    }

    #[test]
    fn latest_prefers_the_newest() {
        let mut g = Latest::new(100, 9);
        let mut hits = vec![0u64; 2000];
        for newest in 100..2000u64 {
            for _ in 0..20 {
                let v = g.next_item(newest);
                assert!(v <= newest);
                hits[(newest - v) as usize] += 1;
            }
        }
        // Age 0 is the most popular age.
        let top = hits
            .iter()
            .enumerate()
            .max_by_key(|(_, h)| **h)
            .map(|(i, _)| i);
        assert_eq!(top, Some(0));
    }

    #[test]
    fn hotspot_and_uniform() {
        let mut h = Hotspot::new(1000, 0.2, 0.8, 4).unwrap_or_else(|_| unreachable!());
        let hits = histogram(1000, 100_000, || h.next_item());
        let hot: u64 = hits[..200].iter().sum();
        assert!((75_000..85_000).contains(&hot), "{hot}");
        assert!(Hotspot::new(10, 1.5, 0.5, 0).is_err());

        let mut u = Uniform::new(10, 2);
        let hits = histogram(10, 100_000, || u.next_item());
        assert!(
            hits.iter().all(|&c| (9_000..11_000).contains(&c)),
            "{hits:?}"
        );
    }

    #[test]
    fn parse_generators() {
        for name in KeyGenerator::NAMES {
            let mut g = KeyGenerator::parse(name, 100, 1).map_err(|e| e.to_string());
            assert!(g.is_ok(), "{name}: {g:?}");
            if let Ok(g) = g.as_mut() {
                assert!(g.next_item() < 100);
            }
        }
        assert!(KeyGenerator::parse("zipfian:0.5", 100, 1).is_ok());
        assert!(KeyGenerator::parse("zipfian:1.5", 100, 1).is_err());
        assert!(KeyGenerator::parse("hotspot:0.1:0.9", 100, 1).is_ok());
        assert!(KeyGenerator::parse("uniform:3", 100, 1).is_err());
        assert!(KeyGenerator::parse("pareto", 100, 1).is_err());
        let mut latest = KeyGenerator::parse("latest", 10, 1).unwrap_or_else(|_| unreachable!());
        latest.set_newest(500);
        assert!(latest.next_item() <= 500);
    }
}
