//! The login throttle: attempts counted per account and client address
//! in the database (or Redis), so every process sees the same counts.
//!
//! An attempt is counted *before* its password is verified, in one
//! atomic step that also reads the count back (an upsert `RETURNING` it
//! in SQL, `INCR` in Redis): of any number of attempts made at once, from
//! any number of processes, at most `AUTH_LOGIN_FAILURES` within a window
//! are evaluated, and the rest are refused (`429`) without hashing. A
//! success forgets the count. (Counting after the hash, as this did
//! before, let a parallel burst pass the check before its first failure
//! was counted: 149 of 150 guesses were evaluated.)

use sha2::{Digest, Sha256};
use std::net::IpAddr;
use tern_data::{with_pool, Pool};

#[cfg(feature = "redis")]
use crate::settings::Store;
use crate::{users::now, Accounts, AuthError};

/// The counter's key: a digest of the account and the address (neither
/// is stored as such).
fn key(username: &str, ip: IpAddr) -> String {
    let mut h = Sha256::new();
    h.update(username.trim().to_lowercase().as_bytes());
    h.update([0]);
    h.update(ip.to_string().as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Counts an attempt for the account from `ip`, then answers whether it
/// may be evaluated: `429` (`Retry-After`: the rest of the window) once
/// the window holds more than `AUTH_LOGIN_FAILURES` attempts. A window
/// starts at the first attempt after the last one ended.
pub(crate) async fn attempt(
    pool: &Pool,
    accounts: &Accounts,
    username: &str,
    ip: IpAddr,
) -> Result<(), AuthError> {
    let (count, left_ms) = count(pool, accounts, &key(username, ip)).await?;
    if count > u64::from(accounts.login_failures) {
        let left = u64::try_from(left_ms).unwrap_or(0).div_ceil(1000).max(1);
        return Err(AuthError::Throttled(left));
    }
    Ok(())
}

/// Adds one to the count of `key`: the count, and the milliseconds left
/// in its window.
async fn count(pool: &Pool, accounts: &Accounts, key: &str) -> Result<(u64, i64), AuthError> {
    #[cfg(feature = "redis")]
    if let Store::Redis(redis) = &accounts.store {
        return redis.attempt(key, accounts.login_window).await;
    }
    let window = i64::try_from(accounts.login_window.as_secs()).unwrap_or(i64::MAX);
    let at = now();
    // One statement: two attempts at once, in one process or two, are
    // two counts, and each reads its own. (The column keeps its name from
    // when it counted failures; it counts attempts. Past the limit it
    // stops growing: a refused attempt changes nothing.)
    let sql = "INSERT INTO tern_login_failures (key, window_start, failures) VALUES ($1, $2, 1) \
               ON CONFLICT (key) DO UPDATE SET \
               failures = CASE WHEN tern_login_failures.window_start + $3 <= $2 THEN 1 \
                               WHEN tern_login_failures.failures > $4 THEN tern_login_failures.failures \
                               ELSE tern_login_failures.failures + 1 END, \
               window_start = CASE WHEN tern_login_failures.window_start + $3 <= $2 THEN $2 \
                                   ELSE tern_login_failures.window_start END \
               RETURNING window_start, failures";
    let (start, failures): (i64, i32) = with_pool!(pool, p => {
        tern_data::sqlx::query_as(sql)
            .bind(key)
            .bind(at)
            .bind(window)
            .bind(i64::from(accounts.login_failures))
            .fetch_one(p)
            .await?
    });
    let left_s = start.saturating_add(window).saturating_sub(at);
    Ok((
        u64::try_from(failures).unwrap_or(0),
        left_s.saturating_mul(1000),
    ))
}

/// Forgets the attempts after a successful login.
pub(crate) async fn succeeded(
    pool: &Pool,
    accounts: &Accounts,
    username: &str,
    ip: IpAddr,
) -> Result<(), AuthError> {
    #[cfg(feature = "redis")]
    if let Store::Redis(redis) = &accounts.store {
        return redis.clear(&key(username, ip)).await;
    }
    let _ = accounts;
    let sql = "DELETE FROM tern_login_failures WHERE key = $1";
    with_pool!(pool, p => {
        tern_data::sqlx::query(sql).bind(key(username, ip)).execute(p).await?.rows_affected()
    });
    Ok(())
}
