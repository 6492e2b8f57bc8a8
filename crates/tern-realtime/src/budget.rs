//! Publish budgets shared across connections: token buckets by key (a
//! member, a client address), so that opening more sockets buys no more
//! messages.

use std::{
    collections::HashMap,
    net::IpAddr,
    sync::{Mutex, MutexGuard},
};

use tokio::time::Instant;

/// A token bucket: `rate` a second, up to `burst` at once.
#[derive(Debug)]
pub(crate) struct Bucket {
    tokens: f64,
    last: Instant,
    rate: u32,
    burst: u32,
}

impl Bucket {
    /// A full bucket.
    pub(crate) fn new(rate: u32, burst: u32) -> Self {
        Bucket {
            tokens: f64::from(burst),
            last: Instant::now(),
            rate,
            burst,
        }
    }

    /// Its tokens now (refilled since it was last used).
    fn refill(&mut self, now: Instant) -> f64 {
        let gained = now.duration_since(self.last).as_secs_f64() * f64::from(self.rate);
        self.tokens = (self.tokens + gained).min(f64::from(self.burst));
        self.last = now;
        self.tokens
    }

    /// Takes one token if it has one.
    pub(crate) fn take(&mut self) -> bool {
        if self.refill(Instant::now()) >= 1.0 {
            self.tokens -= 1.0;
            true
        } else {
            false
        }
    }
}

/// The hub's shared buckets, by key.
#[derive(Debug, Default)]
pub(crate) struct Budgets {
    buckets: Mutex<HashMap<String, Bucket>>,
}

impl Budgets {
    fn buckets(&self) -> MutexGuard<'_, HashMap<String, Bucket>> {
        self.buckets.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Takes one token from the bucket of each of `keys` (`(key, rate,
    /// burst)`; a new key starts full): from all of them, or, when one
    /// is empty, from none.
    pub(crate) fn take(&self, keys: &[(String, u32, u32)]) -> bool {
        let now = Instant::now();
        let mut buckets = self.buckets();
        for (key, rate, burst) in keys {
            let bucket = buckets
                .entry(key.clone())
                .or_insert_with(|| Bucket::new(*rate, *burst));
            (bucket.rate, bucket.burst) = (*rate, (*burst).max(1));
            if bucket.refill(now) < 1.0 {
                return false;
            }
        }
        for (key, _, _) in keys {
            if let Some(bucket) = buckets.get_mut(key) {
                bucket.tokens -= 1.0;
            }
        }
        true
    }

    /// Forgets the buckets that are full again (a new one starts full):
    /// the map holds only who published lately.
    pub(crate) fn sweep(&self) {
        let now = Instant::now();
        self.buckets()
            .retain(|_, b| b.refill(now) < f64::from(b.burst));
    }

    /// How many buckets are held (tests).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.buckets().len()
    }
}

/// The budget key of a client address: an IPv4 address, or an IPv6
/// address's /64 (one host's usual share: its addresses are not many
/// clients).
pub(crate) fn address_key(ip: IpAddr) -> String {
    match ip {
        IpAddr::V4(v4) => format!("ip:{v4}"),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => format!("ip:{v4}"),
            None => {
                let s = v6.segments();
                format!("ip:{:x}:{:x}:{:x}:{:x}::/64", s[0], s[1], s[2], s[3])
            }
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn all_or_none_and_swept_when_full() {
        let budgets = Budgets::default();
        // No refill: two tokens in `a`, three in `b`.
        let both = || vec![("a".to_owned(), 0, 2), ("b".to_owned(), 0, 3)];
        assert!(budgets.take(&both()));
        assert!(budgets.take(&both()));
        // `a` is empty: `b` keeps its last token.
        assert!(!budgets.take(&both()));
        assert!(budgets.take(&[("b".to_owned(), 0, 3)]));
        assert!(!budgets.take(&[("b".to_owned(), 0, 3)]));
        // A fast bucket refills: full again, it is forgotten.
        assert!(budgets.take(&[("c".to_owned(), 1000, 2)]));
        budgets.sweep();
        assert_eq!(budgets.len(), 3);
        std::thread::sleep(std::time::Duration::from_millis(20));
        budgets.sweep();
        assert_eq!(budgets.len(), 2);
    }

    #[test]
    fn addresses() {
        assert_eq!(address_key("10.0.0.1".parse().unwrap()), "ip:10.0.0.1");
        assert_eq!(
            address_key("2001:db8:1:2:3:4:5:6".parse().unwrap()),
            address_key("2001:db8:1:2:ffff::1".parse().unwrap())
        );
        assert_eq!(
            address_key("::ffff:10.0.0.1".parse().unwrap()),
            "ip:10.0.0.1"
        );
    }
}
