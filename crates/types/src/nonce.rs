//! Operation nonces as HBase's `PerClientRandomNonceGenerator` makes them:
//! a random nonce group per client connection and a nonce per
//! non-idempotent call (increment, append, checkAndMutate), sent with every
//! attempt so a server that already applied the call answers a retry from
//! its nonce table. 0 means "no nonce" to a server and is never handed out.
//! This module owns drawing them; it never looks at a server's table.

use std::sync::atomic::{AtomicU64, Ordering};

/// A random `u64` other than 0: std's randomly keyed hasher over the clock
/// and the process id, so two connections (in one process or in two) draw
/// different values without a random-number crate.
pub fn random_nonzero() -> u64 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    h.write_u128(now);
    h.write_u32(std::process::id());
    h.finish().max(1)
}

/// One connection's nonce group and its next nonce.
#[derive(Debug)]
pub struct NonceGenerator {
    group: u64,
    next: AtomicU64,
}

impl Default for NonceGenerator {
    fn default() -> Self {
        NonceGenerator::new()
    }
}

impl NonceGenerator {
    /// A random group, counting from a random start.
    pub fn new() -> NonceGenerator {
        NonceGenerator {
            group: random_nonzero(),
            next: AtomicU64::new(random_nonzero()),
        }
    }

    /// The group every nonce of this generator belongs to.
    pub fn group(&self) -> u64 {
        self.group
    }

    /// A fresh `(group, nonce)`, unique within the group (skipping 0).
    pub fn next(&self) -> (u64, u64) {
        loop {
            let n = self.next.fetch_add(1, Ordering::Relaxed);
            if n != 0 {
                return (self.group, n);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonces_are_never_zero_and_differ() {
        let g = NonceGenerator {
            group: 7,
            next: AtomicU64::new(u64::MAX),
        };
        assert_eq!(g.next(), (7, u64::MAX));
        // The counter wraps past 0 without handing it out.
        assert_eq!(g.next(), (7, 1));
        assert_ne!(NonceGenerator::new().group(), 0);
    }
}
