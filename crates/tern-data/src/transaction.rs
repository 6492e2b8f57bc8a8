//! A transaction per request: begun by the `Tx` extractor, committed when
//! the handler's answer is a success, rolled back when it is not.

use std::sync::Arc;

use sqlx::{Postgres, Sqlite};
use tern::{middleware::Next, IntoResponse, Request, Response};
use tern_core::extract::FromRequestParts;
use tokio::sync::{Mutex, MutexGuard};

use crate::{DataError, Database, Pool};

/// An open transaction on either database.
#[derive(Debug)]
pub enum Transaction {
    /// SQLite.
    Sqlite(sqlx::Transaction<'static, Sqlite>),
    /// PostgreSQL.
    Postgres(sqlx::Transaction<'static, Postgres>),
}

impl Transaction {
    async fn commit(self) -> Result<(), sqlx::Error> {
        match self {
            Transaction::Sqlite(t) => t.commit().await,
            Transaction::Postgres(t) => t.commit().await,
        }
    }

    async fn rollback(self) -> Result<(), sqlx::Error> {
        match self {
            Transaction::Sqlite(t) => t.rollback().await,
            Transaction::Postgres(t) => t.rollback().await,
        }
    }
}

/// Where the middleware keeps the request's transaction.
#[derive(Clone, Default)]
struct Slot(Arc<Mutex<Option<Transaction>>>);

/// The request's transaction (an extractor). Every statement run through
/// it is committed together when the handler's answer has a status below
/// 400, and rolled back otherwise (an error, a panic caught as a 500, a
/// `4xx`). It needs the [`transactions`] middleware:
///
/// ```no_run
/// use tern::{App, routing::post, StatusCode};
/// use tern_data::{with_tx, DataError, Database, Tx};
///
/// async fn transfer(tx: Tx) -> Result<StatusCode, DataError> {
///     let mut t = tx.lock().await;
///     with_tx!(&mut *t, c => {
///         tern_data::sqlx::query("UPDATE accounts SET balance = balance - 10 WHERE id = 1")
///             .execute(&mut **c).await?;
///         tern_data::sqlx::query("UPDATE accounts SET balance = balance + 10 WHERE id = 2")
///             .execute(&mut **c).await?;
///     });
///     Ok(StatusCode::NO_CONTENT) // both, or (on an error) neither
/// }
///
/// let app = App::new()
///     .settings::<Database>("database")
///     .route("/transfer", post(transfer))
///     .route_layer(tern_data::transactions());
/// ```
pub struct Tx(Slot);

impl std::fmt::Debug for Tx {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Tx")
    }
}

/// The transaction, locked for the statements of one step.
pub struct TxGuard<'a>(MutexGuard<'a, Option<Transaction>>);

impl std::ops::Deref for TxGuard<'_> {
    type Target = Transaction;
    fn deref(&self) -> &Transaction {
        // The extractor fills the slot before the handler runs, and only
        // the middleware empties it, after the handler.
        self.0
            .as_ref()
            .unwrap_or_else(|| unreachable!("the transaction is open while the handler runs"))
    }
}

impl std::ops::DerefMut for TxGuard<'_> {
    fn deref_mut(&mut self) -> &mut Transaction {
        self.0
            .as_mut()
            .unwrap_or_else(|| unreachable!("the transaction is open while the handler runs"))
    }
}

impl Tx {
    /// The transaction, for some statements (`with_tx!` runs one body on
    /// either database).
    pub async fn lock(&self) -> TxGuard<'_> {
        TxGuard(self.0 .0.lock().await)
    }
}

impl<S: Send + Sync> FromRequestParts<S> for Tx {
    type Rejection = Response;

    async fn from_request_parts(
        parts: &mut http::request::Parts,
        state: &S,
    ) -> Result<Self, Response> {
        let Some(slot) = parts.extensions.get::<Slot>().cloned() else {
            return Err(DataError::Config(
                "`Tx` needs the transactions middleware: `.route_layer(tern_data::transactions())`"
                    .to_owned(),
            )
            .into_response());
        };
        let tern::settings::Settings(db) =
            tern::settings::Settings::<Database>::from_request_parts(parts, state)
                .await
                .map_err(IntoResponse::into_response)?;
        let mut held = slot.0.lock().await;
        if held.is_none() {
            // `Pool::begin` is these two steps (`Transaction::begin` is
            // public, though left out of sqlx's docs); taken apart so
            // that the wait for the connection is timed alone.
            let begun = match db.pool() {
                Pool::Sqlite(p) => match crate::metrics::acquire(p).await {
                    Ok(c) => sqlx::Transaction::begin(c, None)
                        .await
                        .map(Transaction::Sqlite),
                    Err(e) => Err(e),
                },
                Pool::Postgres(p) => match crate::metrics::acquire(p).await {
                    Ok(c) => sqlx::Transaction::begin(c, None)
                        .await
                        .map(Transaction::Postgres),
                    Err(e) => Err(e),
                },
            };
            *held = Some(begun.map_err(|e| DataError::Sqlx(e).into_response())?);
        }
        drop(held);
        Ok(Tx(slot))
    }
}

/// The middleware that ends each request's transaction: commit when the
/// answer's status is below 400 (a failed commit turns the answer into
/// the error's), roll back otherwise. Add it with `App::route_layer`.
pub fn transactions() -> impl tern::routing::LayerBounds {
    tern::middleware::from_fn(end)
}

async fn end(mut req: Request, next: Next) -> Response {
    let slot = Slot::default();
    req.extensions_mut().insert(slot.clone());
    let res = next.run(req).await;
    let open = slot.0.lock().await.take();
    let Some(tx) = open else { return res };
    if res.status().as_u16() < 400 {
        if let Err(e) = tx.commit().await {
            return DataError::Sqlx(e).into_response();
        }
    } else if let Err(e) = tx.rollback().await {
        tracing::warn!(error = %e, "a rollback failed (the connection is discarded)");
    }
    res
}

/// Runs `$body` with `$c` bound to the open transaction (`&mut
/// sqlx::Transaction` of whichever database); `&mut **$c` is the
/// connection to run statements on.
#[macro_export]
macro_rules! with_tx {
    ($tx:expr, $c:ident => $body:expr) => {
        match $tx {
            $crate::transaction::Transaction::Sqlite($c) => $body,
            $crate::transaction::Transaction::Postgres($c) => $body,
        }
    };
}
