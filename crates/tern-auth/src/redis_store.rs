//! Sessions and the login throttle's counts in Redis (`AUTH_STORE=redis`).
//!
//! Every key starts with `AUTH_REDIS_PREFIX` (`tern`): apps sharing a
//! Redis keep apart by it. A session is a hash `tern:session:<digest>` (user id, name, staff
//! flag, CSRF token, times) that expires when the session would: at its
//! idle timeout, pushed back at each use, never past its lifetime. A set
//! `tern:user-sessions:<id>` lists a user's sessions, for ending them all.
//! A throttle count is `tern:login-failures:<key>`, incremented before
//! each login attempt by a script that starts its window on the first
//! attempt and answers the count (`INCR`, atomic across servers).

use std::time::Duration;

use redis::AsyncCommands as _;

use crate::AuthError;

/// A Redis client connected at first use, its waits bounded: a Redis
/// that is away costs a request half a second, not the client's default
/// minutes of retries. The sessions and the rate limits share it.
pub(crate) struct LazyRedis {
    client: redis::Client,
    connection: tokio::sync::OnceCell<redis::aio::ConnectionManager>,
}

impl LazyRedis {
    pub(crate) fn open(url: &str) -> Result<LazyRedis, String> {
        let client = redis::Client::open(url).map_err(|e| format!("not a Redis URL: {e}"))?;
        Ok(LazyRedis {
            client,
            connection: tokio::sync::OnceCell::new(),
        })
    }

    /// The connection (a cheap clone of the shared one).
    pub(crate) async fn get(&self) -> Result<redis::aio::ConnectionManager, redis::RedisError> {
        self.connection
            .get_or_try_init(|| {
                let config = redis::aio::ConnectionManagerConfig::new()
                    .set_connection_timeout(Some(Duration::from_millis(500)))
                    .set_response_timeout(Some(Duration::from_millis(500)))
                    .set_number_of_retries(1)
                    .set_max_delay(Duration::from_millis(100));
                redis::aio::ConnectionManager::new_with_config(self.client.clone(), config)
            })
            .await
            .cloned()
    }
}

/// The Redis of `AUTH_REDIS_URL`.
pub(crate) struct RedisStore {
    redis: LazyRedis,
    prefix: String,
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RedisStore")
    }
}

/// A session as Redis keeps it.
pub(crate) struct Stored {
    pub(crate) csrf: String,
    pub(crate) created: i64,
    pub(crate) seen: i64,
    pub(crate) user_id: i64,
    pub(crate) username: String,
    /// Absent in a session stored before accounts had emails.
    pub(crate) email: Option<String>,
    pub(crate) is_staff: bool,
    /// `false` in a session stored before superusers.
    pub(crate) is_superuser: bool,
}

fn unavailable(e: redis::RedisError) -> AuthError {
    tracing::error!(error = %e, "the accounts' Redis is unreachable");
    AuthError::Unavailable("the session store is unreachable; try again shortly".to_owned())
}

/// One login attempt: the count, and the milliseconds left in its
/// window (a key without an expiry, which nothing should leave, gets
/// one).
const ATTEMPT: &str = r"
local n = redis.call('INCR', KEYS[1])
local left = redis.call('PTTL', KEYS[1])
if n == 1 or left < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  left = tonumber(ARGV[1])
end
return {n, left}
";

impl RedisStore {
    pub(crate) fn new(url: &str, prefix: &str) -> Result<RedisStore, String> {
        Ok(RedisStore {
            redis: LazyRedis::open(url)?,
            prefix: prefix.to_owned(),
        })
    }

    async fn connection(&self) -> Result<redis::aio::ConnectionManager, AuthError> {
        self.redis.get().await.map_err(unavailable)
    }

    fn key(&self, digest: &str) -> String {
        format!("{}:session:{digest}", self.prefix)
    }

    fn index(&self, user_id: i64) -> String {
        format!("{}:user-sessions:{user_id}", self.prefix)
    }

    pub(crate) async fn create(
        &self,
        digest: &str,
        s: &Stored,
        ttl: u64,
        lifetime: u64,
    ) -> Result<(), AuthError> {
        let mut c = self.connection().await?;
        let key = self.key(digest);
        let index = self.index(s.user_id);
        let mut fields = vec![
            ("csrf", s.csrf.clone()),
            ("created", s.created.to_string()),
            ("seen", s.seen.to_string()),
            ("user", s.user_id.to_string()),
            ("name", s.username.clone()),
            ("staff", u8::from(s.is_staff).to_string()),
            ("superuser", u8::from(s.is_superuser).to_string()),
        ];
        if let Some(email) = &s.email {
            fields.push(("email", email.clone()));
        }
        redis::pipe()
            .atomic()
            .hset_multiple(&key, &fields)
            .expire(&key, i64::try_from(ttl.max(1)).unwrap_or(i64::MAX))
            .sadd(&index, digest)
            .expire(&index, i64::try_from(lifetime.max(1)).unwrap_or(i64::MAX))
            .query_async::<()>(&mut c)
            .await
            .map_err(unavailable)
    }

    pub(crate) async fn load(&self, digest: &str) -> Result<Option<Stored>, AuthError> {
        let mut c = self.connection().await?;
        let fields: std::collections::HashMap<String, String> =
            c.hgetall(self.key(digest)).await.map_err(unavailable)?;
        let get = |name: &str| fields.get(name).cloned();
        let num = |name: &str| get(name).and_then(|v| v.parse::<i64>().ok());
        Ok(
            match (
                get("csrf"),
                num("created"),
                num("seen"),
                num("user"),
                get("name"),
            ) {
                (Some(csrf), Some(created), Some(seen), Some(user_id), Some(username)) => {
                    Some(Stored {
                        csrf,
                        created,
                        seen,
                        user_id,
                        username,
                        email: get("email"),
                        is_staff: get("staff").as_deref() == Some("1"),
                        is_superuser: get("superuser").as_deref() == Some("1"),
                    })
                }
                _ => None,
            },
        )
    }

    pub(crate) async fn touch(&self, digest: &str, at: i64, ttl: u64) -> Result<(), AuthError> {
        let mut c = self.connection().await?;
        let key = self.key(digest);
        redis::pipe()
            .atomic()
            .hset(&key, "seen", at.to_string())
            .expire(&key, i64::try_from(ttl.max(1)).unwrap_or(i64::MAX))
            .query_async::<()>(&mut c)
            .await
            .map_err(unavailable)
    }

    pub(crate) async fn delete(&self, digest: &str) -> Result<(), AuthError> {
        let mut c = self.connection().await?;
        let key = self.key(digest);
        let user: Option<i64> = c.hget(&key, "user").await.map_err(unavailable)?;
        let mut pipe = redis::pipe();
        pipe.atomic().del(&key);
        if let Some(user) = user {
            pipe.srem(self.index(user), digest);
        }
        pipe.query_async::<()>(&mut c).await.map_err(unavailable)
    }

    pub(crate) async fn delete_all(&self, user_id: i64) -> Result<(), AuthError> {
        let mut c = self.connection().await?;
        let index = self.index(user_id);
        let digests: Vec<String> = c.smembers(&index).await.map_err(unavailable)?;
        let mut pipe = redis::pipe();
        pipe.atomic();
        for d in &digests {
            pipe.del(self.key(d));
        }
        pipe.del(&index);
        pipe.query_async::<()>(&mut c).await.map_err(unavailable)
    }

    fn failures_key(&self, key: &str) -> String {
        format!("{}:login-failures:{key}", self.prefix)
    }

    /// Counts a login attempt for `key`: the count and the milliseconds
    /// left in its window (which starts at its first attempt), in one
    /// atomic step, so that attempts made at once on any server are each
    /// counted and each read their own count.
    pub(crate) async fn attempt(
        &self,
        key: &str,
        window: Duration,
    ) -> Result<(u64, i64), AuthError> {
        let mut c = self.connection().await?;
        let millis = u64::try_from(window.as_millis()).unwrap_or(u64::MAX).max(1);
        redis::Script::new(ATTEMPT)
            .key(self.failures_key(key))
            .arg(millis)
            .invoke_async::<(u64, i64)>(&mut c)
            .await
            .map_err(unavailable)
    }

    pub(crate) async fn clear(&self, key: &str) -> Result<(), AuthError> {
        let mut c = self.connection().await?;
        c.del::<_, ()>(self.failures_key(key))
            .await
            .map_err(unavailable)
    }
}
