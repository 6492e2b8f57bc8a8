//! The login throttle: failed logins counted per account and client
//! address in the database, so every process sees the same counts.

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

/// `429` while the account and address have failed too often within the
/// window.
pub(crate) async fn check(
    pool: &Pool,
    accounts: &Accounts,
    username: &str,
    ip: IpAddr,
) -> Result<(), AuthError> {
    #[cfg(feature = "redis")]
    if let Store::Redis(redis) = &accounts.store {
        let (failures, left_ms) = redis.failures(&key(username, ip)).await?;
        if left_ms > 0 && failures >= accounts.login_failures {
            let left = u64::try_from(left_ms).unwrap_or(1000);
            return Err(AuthError::Throttled(left.div_ceil(1000)));
        }
        return Ok(());
    }
    let sql = "SELECT window_start, failures FROM tern_login_failures WHERE key = $1";
    let row: Option<(i64, i32)> = with_pool!(pool, p => {
        tern_data::sqlx::query_as(sql).bind(key(username, ip)).fetch_optional(p).await?
    });
    let window = i64::try_from(accounts.login_window.as_secs()).unwrap_or(i64::MAX);
    if let Some((start, failures)) = row {
        let left = start.saturating_add(window) - now();
        if left > 0 && u32::try_from(failures).unwrap_or(0) >= accounts.login_failures {
            return Err(AuthError::Throttled(u64::try_from(left).unwrap_or(1)));
        }
    }
    Ok(())
}

/// Counts a failure (a new window when the last one has ended).
pub(crate) async fn failed(
    pool: &Pool,
    accounts: &Accounts,
    username: &str,
    ip: IpAddr,
) -> Result<(), AuthError> {
    #[cfg(feature = "redis")]
    if let Store::Redis(redis) = &accounts.store {
        return redis.fail(&key(username, ip), accounts.login_window).await;
    }
    let window = i64::try_from(accounts.login_window.as_secs()).unwrap_or(i64::MAX);
    let at = now();
    // One statement, so that two processes counting at once both count.
    let sql = "INSERT INTO tern_login_failures (key, window_start, failures) VALUES ($1, $2, 1) \
               ON CONFLICT (key) DO UPDATE SET \
               failures = CASE WHEN tern_login_failures.window_start + $3 <= $2 THEN 1 \
                               ELSE tern_login_failures.failures + 1 END, \
               window_start = CASE WHEN tern_login_failures.window_start + $3 <= $2 THEN $2 \
                                   ELSE tern_login_failures.window_start END";
    with_pool!(pool, p => {
        tern_data::sqlx::query(sql)
            .bind(key(username, ip))
            .bind(at)
            .bind(window)
            .execute(p)
            .await?
            .rows_affected()
    });
    Ok(())
}

/// Forgets the failures after a successful login.
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
