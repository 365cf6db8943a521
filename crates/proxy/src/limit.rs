//! Admission control: a per-client token bucket and a global gate around the CPU-bound embedding work.
//!
//! Why two mechanisms: the rate limit keeps one client (or one script) from monopolising a public proxy, while
//! the gate protects the machine itself. Embedding is pure CPU; running more jobs than cores only makes every
//! request slower, so at most `max_concurrency` run at once, a bounded number of requests wait in line for a
//! bounded time, and everything beyond that is told to come back later (503 + `Retry-After`) instead of
//! piling up memory and latency.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Buckets kept before idle (full) ones are dropped; bounds memory under address-spraying clients.
const MAX_TRACKED_CLIENTS: usize = 65_536;

/// The key a client is rate-limited under: its IPv4 address, or the /64 prefix of its IPv6 address
/// (one subscriber usually owns a whole /64, so limiting single IPv6 addresses would be trivial to evade).
pub fn client_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let prefix = u128::from(v6) & !((1u128 << 64) - 1);
                IpAddr::V6(prefix.into())
            }
        },
    }
}

#[derive(Clone, Copy)]
struct Bucket {
    tokens: f64,
    last: Instant,
}

/// Per-client token bucket: `burst` tokens, refilled at `per_minute / 60` tokens per second; one token per text.
pub struct RateLimiter {
    per_second: f64,
    burst: f64,
    buckets: Mutex<HashMap<IpAddr, Bucket>>,
}

impl RateLimiter {
    /// A limiter; `per_minute` must be positive.
    pub fn new(per_minute: u32, burst: u32) -> Self {
        RateLimiter {
            per_second: f64::from(per_minute) / 60.0,
            burst: f64::from(burst),
            buckets: Mutex::new(HashMap::new()),
        }
    }

    /// Takes `cost` tokens for `client`, or says after how many whole seconds enough tokens will be there.
    pub fn check(&self, client: IpAddr, cost: u32) -> Result<(), u64> {
        self.check_at(client, cost, Instant::now())
    }

    fn check_at(&self, client: IpAddr, cost: u32, now: Instant) -> Result<(), u64> {
        let cost = f64::from(cost);
        let mut buckets = self.buckets.lock().unwrap_or_else(|e| e.into_inner());
        if buckets.len() >= MAX_TRACKED_CLIENTS && !buckets.contains_key(&client) {
            self.prune(&mut buckets, now);
        }
        let bucket = buckets.entry(client).or_insert(Bucket {
            tokens: self.burst,
            last: now,
        });
        bucket.tokens = self.refilled(bucket, now);
        bucket.last = now;
        if bucket.tokens >= cost {
            bucket.tokens -= cost;
            Ok(())
        } else {
            let wait = (cost - bucket.tokens) / self.per_second;
            Err((wait.ceil() as u64).max(1))
        }
    }

    fn refilled(&self, bucket: &Bucket, now: Instant) -> f64 {
        let elapsed = now.saturating_duration_since(bucket.last).as_secs_f64();
        (bucket.tokens + elapsed * self.per_second).min(self.burst)
    }

    /// Drops buckets that have refilled completely (their clients are idle, forgetting them changes nothing);
    /// if every client is active, starts over rather than grow without bound.
    fn prune(&self, buckets: &mut HashMap<IpAddr, Bucket>, now: Instant) {
        buckets.retain(|_, b| self.refilled(b, now) < self.burst);
        if buckets.len() >= MAX_TRACKED_CLIENTS {
            buckets.clear();
        }
    }
}

/// How often a rate-limited client's refusals are logged: a client that keeps hammering the proxy would
/// otherwise write a log line per request (12 MB in 20 s from one client).
pub const REFUSAL_LOG_INTERVAL: Duration = Duration::from_secs(60);

/// One log line per client per interval: [`LogThrottle::note`] says when to write one and how many refusals it
/// covers (those since the last line, this one included). Memory is bounded like the rate limiter's.
pub struct LogThrottle {
    interval: Duration,
    clients: Mutex<HashMap<IpAddr, (Instant, u64)>>,
}

impl LogThrottle {
    /// A throttle writing at most one line per client per `interval`.
    pub fn new(interval: Duration) -> Self {
        LogThrottle {
            interval,
            clients: Mutex::new(HashMap::new()),
        }
    }

    /// Counts a refusal for `client`; `Some(refusals)` when a line is due now.
    pub fn note(&self, client: IpAddr) -> Option<u64> {
        self.note_at(client, Instant::now())
    }

    fn note_at(&self, client: IpAddr, now: Instant) -> Option<u64> {
        let mut clients = self.clients.lock().unwrap_or_else(|e| e.into_inner());
        if clients.len() >= MAX_TRACKED_CLIENTS && !clients.contains_key(&client) {
            clients.retain(|_, (last, _)| now.saturating_duration_since(*last) < self.interval);
            if clients.len() >= MAX_TRACKED_CLIENTS {
                clients.clear();
            }
        }
        match clients.get_mut(&client) {
            Some((last, count)) if now.saturating_duration_since(*last) < self.interval => {
                *count += 1;
                None
            }
            Some((last, count)) => {
                let refusals = *count + 1;
                (*last, *count) = (now, 0);
                Some(refusals)
            }
            None => {
                clients.insert(client, (now, 0));
                Some(1)
            }
        }
    }
}

/// Why the gate turned a request away.
#[derive(Debug, PartialEq, Eq)]
pub enum Busy {
    /// `max_queue` requests are already waiting.
    QueueFull,
    /// No slot became free within the queue timeout.
    Timeout,
}

/// The global concurrency gate: `max_concurrency` permits, a bounded queue with a bounded wait.
pub struct Gate {
    permits: Arc<Semaphore>,
    waiting: AtomicUsize,
    max_queue: usize,
    queue_timeout: Duration,
}

/// Decrements the waiting count however the wait ends (success, timeout, or the request being dropped).
struct Waiting<'a>(&'a AtomicUsize);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Gate {
    /// A gate with `max_concurrency` slots.
    pub fn new(max_concurrency: usize, max_queue: usize, queue_timeout: Duration) -> Self {
        Gate {
            permits: Arc::new(Semaphore::new(max_concurrency)),
            waiting: AtomicUsize::new(0),
            max_queue,
            queue_timeout,
        }
    }

    /// Waits for a slot; the permit is held for as long as the embedding job runs (it moves into the job).
    pub async fn acquire(&self) -> Result<OwnedSemaphorePermit, Busy> {
        if let Ok(permit) = Arc::clone(&self.permits).try_acquire_owned() {
            return Ok(permit);
        }
        if self.waiting.fetch_add(1, Ordering::SeqCst) >= self.max_queue {
            self.waiting.fetch_sub(1, Ordering::SeqCst);
            return Err(Busy::QueueFull);
        }
        let _waiting = Waiting(&self.waiting);
        match tokio::time::timeout(
            self.queue_timeout,
            Arc::clone(&self.permits).acquire_owned(),
        )
        .await
        {
            Ok(Ok(permit)) => Ok(permit),
            // The semaphore is never closed; treat it like a timeout rather than panic.
            Ok(Err(_)) | Err(_) => Err(Busy::Timeout),
        }
    }
}

#[cfg(test)]
mod tests {

    #[test]
    fn refusals_are_logged_once_per_client_per_interval() {
        let throttle = LogThrottle::new(Duration::from_secs(60));
        let (a, b): (IpAddr, IpAddr) = ("192.0.2.1".parse().unwrap(), "192.0.2.2".parse().unwrap());
        let t0 = Instant::now();
        assert_eq!(throttle.note_at(a, t0), Some(1));
        for i in 1..1000 {
            assert_eq!(throttle.note_at(a, t0 + Duration::from_millis(i)), None);
        }
        assert_eq!(
            throttle.note_at(b, t0),
            Some(1),
            "clients are throttled apart"
        );
        assert_eq!(
            throttle.note_at(a, t0 + Duration::from_secs(60)),
            Some(1000)
        );
        assert_eq!(throttle.note_at(a, t0 + Duration::from_secs(61)), None);
    }

    use super::*;

    #[test]
    fn bucket_allows_burst_then_refills() {
        let limiter = RateLimiter::new(60, 3); // one token per second
        let ip: IpAddr = "192.0.2.1".parse().unwrap();
        let other: IpAddr = "192.0.2.2".parse().unwrap();
        let t0 = Instant::now();
        assert_eq!(limiter.check_at(ip, 2, t0), Ok(()));
        assert_eq!(limiter.check_at(ip, 1, t0), Ok(()));
        assert_eq!(limiter.check_at(ip, 1, t0), Err(1));
        assert_eq!(limiter.check_at(ip, 3, t0), Err(3));
        assert_eq!(
            limiter.check_at(other, 3, t0),
            Ok(()),
            "clients are independent"
        );
        assert_eq!(
            limiter.check_at(ip, 1, t0 + Duration::from_millis(1100)),
            Ok(())
        );
        assert_eq!(
            limiter.check_at(ip, 3, t0 + Duration::from_secs(60)),
            Ok(()),
            "refill caps at burst"
        );
        assert_eq!(
            limiter.check_at(ip, 1, t0 + Duration::from_secs(60)),
            Err(1)
        );
    }

    #[test]
    fn ipv6_clients_share_their_64_prefix() {
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(client_key(a), client_key(b));
        assert_ne!(client_key(a), client_key(c));
        let mapped: IpAddr = "::ffff:192.0.2.7".parse().unwrap();
        assert_eq!(client_key(mapped), "192.0.2.7".parse::<IpAddr>().unwrap());
    }

    #[test]
    fn prune_forgets_idle_clients_only() {
        let limiter = RateLimiter::new(60, 2);
        let t0 = Instant::now();
        let mut buckets = HashMap::new();
        let idle: IpAddr = "192.0.2.1".parse().unwrap();
        let busy: IpAddr = "192.0.2.2".parse().unwrap();
        buckets.insert(
            idle,
            Bucket {
                tokens: 2.0,
                last: t0,
            },
        );
        buckets.insert(
            busy,
            Bucket {
                tokens: 0.0,
                last: t0,
            },
        );
        limiter.prune(&mut buckets, t0);
        assert!(!buckets.contains_key(&idle));
        assert!(buckets.contains_key(&busy));
    }

    #[tokio::test]
    async fn gate_queues_then_refuses() {
        let gate = Arc::new(Gate::new(1, 1, Duration::from_millis(100)));
        let held = gate.acquire().await.unwrap();
        // One waiter fits in the queue and times out; while it waits, a second is refused at once.
        let waiter = tokio::spawn({
            let gate = Arc::clone(&gate);
            async move { gate.acquire().await.map(drop) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert_eq!(gate.acquire().await.map(drop), Err(Busy::QueueFull));
        assert_eq!(waiter.await.unwrap(), Err(Busy::Timeout));
        // A freed slot goes to the next waiter.
        let waiter = tokio::spawn({
            let gate = Arc::clone(&gate);
            async move { gate.acquire().await.map(drop) }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        drop(held);
        assert_eq!(waiter.await.unwrap(), Ok(()));
        assert_eq!(gate.waiting.load(Ordering::SeqCst), 0);
    }
}
