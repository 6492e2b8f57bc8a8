//! Rate limits: GCRA (the generic cell rate algorithm), in process with
//! `governor`, or in Redis so that every process counts together.

use std::{
    fmt,
    net::IpAddr,
    sync::{
        atomic::{AtomicU32, Ordering},
        Arc,
    },
    time::Duration,
};

use governor::{
    clock::{Clock as _, DefaultClock},
    middleware::StateInformationMiddleware,
    state::keyed::DefaultKeyedStateStore,
    Quota,
};

/// The in-process limiter: keyed, reporting what is left.
type Limiter = governor::RateLimiter<
    String,
    DefaultKeyedStateStore<String>,
    DefaultClock,
    StateInformationMiddleware,
>;
use http::{request::Parts, HeaderName, HeaderValue, StatusCode};
use tern::{
    extract::ClientIp,
    middleware::{from_fn_with_state, Next},
    IntoResponse, Problem, Request, Response,
};
use tern_core::extract::FromRequestParts;

/// A function from a request head to its key.
type KeyFn = Arc<dyn Fn(&Parts) -> Option<String> + Send + Sync>;

/// What a request is counted as.
#[derive(Clone)]
enum KeyBy {
    /// The client's address (`ClientIp`: a trusted proxy's header when
    /// `TRUSTED_PROXY_HEADER` says so, else the peer).
    ClientIp,
    /// The logged-in user, else the client's address.
    User,
    /// A function of the request head; `None` is not limited.
    Custom(KeyFn),
}

#[derive(Clone)]
enum Store {
    Memory(Arc<Limiter>),
    #[cfg(feature = "redis")]
    Redis(Arc<RedisGcra>),
}

/// A rate limit: on average `limit` requests per `period` for each key,
/// with bursts of up to `burst` (by default `limit`) at once. Past it,
/// `429` with `Retry-After`; every answer it lets through carries
/// `RateLimit-Limit`, `RateLimit-Remaining`, `RateLimit-Reset` and
/// `RateLimit-Policy` (the IETF `RateLimit` header fields draft).
///
/// ```
/// use std::time::Duration;
/// use tern::{App, routing::get, test::TestClient};
/// use tern_auth::RateLimit;
///
/// # #[tokio::main(flavor = "current_thread")] async fn main() {
/// let limit = RateLimit::per(2, Duration::from_secs(60)); // by client address
/// let app = App::new().route("/", get(|| async { "hi" })).route_layer(limit.layer());
/// let client = TestClient::new(app);
/// assert_eq!(client.get("/").send().await.status(), 200);
/// assert_eq!(client.get("/").send().await.status(), 200);
/// let third = client.get("/").send().await;
/// assert_eq!(third.status(), 429);
/// assert_eq!(third.headers()["retry-after"], "30");
/// # }
/// ```
///
/// In one process the counts live in memory (`governor`); with
/// `RateLimit::shared` (the `redis` feature) they live in Redis (one atomic script per
/// request), so that several processes behind a proxy share one limit. If
/// Redis cannot be reached the request is let through and the error
/// logged: a rate limit that fails should not take the site down with it.
#[derive(Clone)]
pub struct RateLimit {
    name: Arc<str>,
    limit: u32,
    period: Duration,
    burst: u32,
    key: KeyBy,
    store: Store,
    checks: Arc<AtomicU32>,
    refused: Option<tern::metrics::Counter>,
}

impl fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RateLimit")
            .field("name", &self.name)
            .field("limit", &self.limit)
            .field("period", &self.period)
            .field("burst", &self.burst)
            .finish_non_exhaustive()
    }
}

fn memory(limit: u32, period: Duration, burst: u32) -> Store {
    let interval = period / limit.max(1);
    let quota = Quota::with_period(interval.max(Duration::from_nanos(1)))
        .unwrap_or_else(|| Quota::per_second(std::num::NonZeroU32::MIN))
        .allow_burst(std::num::NonZeroU32::new(burst.max(1)).unwrap_or(std::num::NonZeroU32::MIN));
    Store::Memory(Arc::new(
        governor::RateLimiter::keyed(quota).with_middleware::<StateInformationMiddleware>(),
    ))
}

impl RateLimit {
    /// `limit` requests per `period` for each client address, in process.
    pub fn per(limit: u32, period: Duration) -> RateLimit {
        let limit = limit.max(1);
        RateLimit {
            name: Arc::from("default"),
            limit,
            period,
            burst: limit,
            key: KeyBy::ClientIp,
            store: memory(limit, period, limit),
            checks: Arc::new(AtomicU32::new(0)),
            refused: None,
        }
    }

    /// Counts its refusals in `metrics` (the app's, from
    /// `App::metrics`), as `tern_rejections_total{reason="rate_limit"}`.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tern::{App, routing::get, test::TestClient};
    /// use tern_auth::RateLimit;
    ///
    /// # #[tokio::main(flavor = "current_thread")] async fn main() {
    /// let app = App::new();
    /// let limit = RateLimit::per(1, Duration::from_secs(60)).metrics(app.metrics());
    /// let metrics = app.metrics().clone();
    /// let app = app.route("/", get(|| async { "hi" })).route_layer(limit.layer());
    /// let client = TestClient::new(app);
    /// client.get("/").send().await;
    /// assert_eq!(client.get("/").send().await.status(), 429);
    /// assert!(metrics.render().contains(r#"tern_rejections_total{reason="rate_limit"} 1"#));
    /// # }
    /// ```
    pub fn metrics(mut self, metrics: &tern::metrics::Metrics) -> RateLimit {
        self.refused = Some(metrics.rejection("rate_limit"));
        self
    }

    /// At most `burst` requests at once (the default is the limit).
    pub fn burst(mut self, burst: u32) -> RateLimit {
        self.burst = burst.max(1);
        // Without the `redis` feature, memory is the only store.
        #[allow(irrefutable_let_patterns)]
        if let Store::Memory(_) = self.store {
            self.store = memory(self.limit, self.period, self.burst);
        }
        self
    }

    /// Counts each user apart, by a live API token or else the session
    /// (anonymous requests by address).
    pub fn per_user(mut self) -> RateLimit {
        self.key = KeyBy::User;
        self
    }

    /// Counts by `key` of the request head; `None` leaves a request
    /// unlimited.
    pub fn key_by(
        mut self,
        key: impl Fn(&Parts) -> Option<String> + Send + Sync + 'static,
    ) -> RateLimit {
        self.key = KeyBy::Custom(Arc::new(key));
        self
    }

    /// The limit's name, which keeps its counts apart from other limits'
    /// in a shared store (`default`).
    pub fn named(mut self, name: &str) -> RateLimit {
        self.name = Arc::from(name);
        self
    }

    /// Keeps the counts in the Redis at `url`, shared by every process
    /// that uses the same URL and name. The URL is checked here; the
    /// connection is made at the first request.
    #[cfg(feature = "redis")]
    pub fn shared(mut self, url: &str) -> Result<RateLimit, String> {
        self.store = Store::Redis(Arc::new(RedisGcra {
            redis: crate::redis_store::LazyRedis::open(url)?,
        }));
        Ok(self)
    }

    /// The middleware (add it with `App::route_layer`, so that unknown
    /// routes stay `404`).
    pub fn layer(&self) -> impl tern::routing::LayerBounds {
        from_fn_with_state(self.clone(), run)
    }

    async fn key(&self, parts: &mut Parts) -> Option<String> {
        match &self.key {
            KeyBy::ClientIp => Some(client(parts).await),
            // A live API token's user, else the session's.
            KeyBy::User => match crate::extract::by_token(parts).await {
                Ok(crate::extract::ByToken::Valid(auth)) => Some(format!("user:{}", auth.user.id)),
                _ => match crate::extract::current(parts).await {
                    Ok(Some(session)) => Some(format!("user:{}", session.user.id)),
                    _ => Some(client(parts).await),
                },
            },
            KeyBy::Custom(f) => f(parts),
        }
    }

    async fn check(self, req: Request, next: Next) -> Response {
        let (mut parts, body) = req.into_parts();
        let Some(key) = self.key(&mut parts).await else {
            return next.run(Request::from_parts(parts, body)).await;
        };
        let verdict = match &self.store {
            Store::Memory(limiter) => {
                // Keys of clients gone quiet are dropped now and then.
                if self.checks.fetch_add(1, Ordering::Relaxed) % 4096 == 4095 {
                    limiter.retain_recent();
                }
                match limiter.check_key(&key) {
                    Ok(snapshot) => Verdict::Allowed {
                        remaining: snapshot.remaining_burst_capacity(),
                    },
                    Err(not_until) => Verdict::Refused {
                        retry_after: not_until.wait_time_from(limiter.clock().now()),
                    },
                }
            }
            #[cfg(feature = "redis")]
            Store::Redis(redis) => {
                let interval = self.period / self.limit;
                match redis.check(&self.name, &key, interval, self.burst).await {
                    Ok(verdict) => verdict,
                    Err(e) => {
                        tracing::error!(error = %e, "the rate limit's Redis is unreachable: letting the request through");
                        return next.run(Request::from_parts(parts, body)).await;
                    }
                }
            }
        };
        match verdict {
            Verdict::Allowed { remaining } => {
                let mut res = next.run(Request::from_parts(parts, body)).await;
                self.headers(&mut res, remaining, self.reset_after(remaining));
                res
            }
            Verdict::Refused { retry_after } => {
                if let Some(refused) = &self.refused {
                    refused.inc();
                }
                let seconds = retry_after.as_secs() + u64::from(retry_after.subsec_nanos() > 0);
                let mut res = Problem::new(StatusCode::TOO_MANY_REQUESTS)
                    .with_detail(format!(
                        "too many requests: at most {} per {} s; try again in {seconds} s",
                        self.limit,
                        self.period.as_secs()
                    ))
                    .into_response();
                self.headers(&mut res, 0, seconds);
                set(&mut res, http::header::RETRY_AFTER, seconds);
                res
            }
        }
    }

    /// Whole seconds (rounded up) until the bucket is full again, with
    /// `remaining` left.
    fn reset_after(&self, remaining: u32) -> u64 {
        let interval = self.period / self.limit;
        let wait = interval * (self.burst - remaining.min(self.burst));
        wait.as_secs() + u64::from(wait.subsec_nanos() > 0)
    }

    fn headers(&self, res: &mut Response, remaining: u32, reset: u64) {
        set(res, HeaderName::from_static("ratelimit-limit"), self.limit);
        set(
            res,
            HeaderName::from_static("ratelimit-remaining"),
            remaining,
        );
        set(res, HeaderName::from_static("ratelimit-reset"), reset);
        if let Ok(v) = HeaderValue::from_str(&format!("{};w={}", self.limit, self.period.as_secs()))
        {
            res.headers_mut()
                .insert(HeaderName::from_static("ratelimit-policy"), v);
        }
    }
}

async fn client(parts: &mut Parts) -> String {
    ClientIp::from_request_parts(parts, &())
        .await
        .map_or_else(|_| "unknown".to_owned(), |ClientIp(ip)| ip_key(ip))
}

async fn run(limit: RateLimit, req: Request, next: Next) -> Response {
    limit.check(req, next).await
}

fn set(res: &mut Response, name: HeaderName, value: impl fmt::Display) {
    if let Ok(v) = HeaderValue::from_str(&value.to_string()) {
        res.headers_mut().insert(name, v);
    }
}

/// An address as a key: IPv6 clients by their /64 (one host has them all).
fn ip_key(ip: IpAddr) -> String {
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

enum Verdict {
    Allowed { remaining: u32 },
    Refused { retry_after: Duration },
}

/// GCRA in Redis: the key holds the theoretical arrival time; one
/// script reads and moves it atomically, on the server's clock.
#[cfg(feature = "redis")]
struct RedisGcra {
    redis: crate::redis_store::LazyRedis,
}

#[cfg(feature = "redis")]
const GCRA: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = interval * tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1])) or now
if tat < now then tat = now end
local new_tat = tat + interval
if new_tat - tolerance > now then
  return {0, new_tat - tolerance - now}
end
redis.call('SET', KEYS[1], new_tat, 'PX', math.ceil((new_tat - now) / 1000) + 1)
return {1, math.floor((now + tolerance - new_tat) / interval)}
";

#[cfg(feature = "redis")]
impl RedisGcra {
    async fn check(
        &self,
        name: &str,
        key: &str,
        interval: Duration,
        burst: u32,
    ) -> Result<Verdict, redis::RedisError> {
        let mut connection = self.redis.get().await?;
        let micros = u64::try_from(interval.as_micros())
            .unwrap_or(u64::MAX)
            .max(1);
        let (allowed, value): (i64, i64) = redis::Script::new(GCRA)
            .key(format!("tern:rate:{name}:{key}"))
            .arg(micros)
            .arg(burst)
            .invoke_async(&mut connection)
            .await?;
        Ok(if allowed == 1 {
            Verdict::Allowed {
                remaining: u32::try_from(value.max(0)).unwrap_or(0),
            }
        } else {
            Verdict::Refused {
                retry_after: Duration::from_micros(u64::try_from(value.max(0)).unwrap_or(0)),
            }
        })
    }
}
