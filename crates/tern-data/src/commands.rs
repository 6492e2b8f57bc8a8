//! The data layer on the app's command line: [`install`] adds the
//! `migrate` command, migrations at start in development, and the
//! database's lines of the `check` checklist; [`reencrypt`] makes the
//! command that finishes a key rotation.

use std::sync::Arc;

use tern::{
    command::{clap, BoxError, Command, Finding, Invocation},
    App, AppService,
};

use crate::{model::Model, Database, Migrations, Pool};

/// Loads the [`Database`] settings (prefix `database`) and gives the app
/// what it needs to manage its tables, from `migrations` (the app's and
/// its batteries', applied in this order):
///
/// - the command `migrate` (`--plan` lists what it would apply);
/// - at start, in development (or with `DATABASE_MIGRATE_ON_START=true`),
///   the migrations not applied yet;
/// - in `check`: where the database is (the SQLite default is one
///   process's), whether it answers, and migrations not applied;
/// - the pool's metrics in the app's `/metrics`, in every build of the
///   app ([`Database::record_metrics`], from `App::on_build`);
/// - the readiness check `database` (`/ready`: a connection from the
///   pool within a second).
///
/// ```no_run
/// static MIGRATIONS: tern_data::Migrations = tern_data::migrations!("tests/migrations");
///
/// let app = tern::App::new();
/// let app = tern_data::install(app, [&MIGRATIONS]);
/// tern::run(app).unwrap(); // `my-app migrate`, `my-app check`, or serve
/// ```
pub fn install<S, I>(app: App<S>, migrations: I) -> App<S>
where
    S: Clone + Send + Sync + 'static,
    I: IntoIterator<Item = &'static Migrations>,
{
    let migrations: Arc<[&'static Migrations]> = migrations.into_iter().collect();
    let on_start = Arc::clone(&migrations);
    let checked = Arc::clone(&migrations);
    let command = Arc::clone(&migrations);
    // The families exist from the start (at zero); the pool is metered
    // from when it is made, in every build of the app (`on_build`).
    drop(crate::metrics::PoolMeter::register(app.metrics()));
    app.settings::<Database>("database")
        .command(Command::new(
            clap::Command::new("migrate")
                .about(
                    "Applies the migrations not applied yet, in order, each in a transaction \
                     (DATABASE_URL)",
                )
                .arg(
                    clap::Arg::new("plan")
                        .long("plan")
                        .action(clap::ArgAction::SetTrue)
                        .help("Lists the migrations not applied yet, and applies none"),
                ),
            move |call: Invocation| migrate(call, Arc::clone(&command)),
        ))
        .on_build(|app: &AppService| {
            if let Some(db) = app.settings::<Database>() {
                db.record_metrics(app.metrics());
            }
        })
        .on_start(move |app: AppService| {
            let migrations = Arc::clone(&on_start);
            async move {
                let db = database(&app)?;
                if db.migrate_on_start(app.config().is_production()) {
                    for m in migrations.iter() {
                        let pending = db.pending(m).await?;
                        db.migrate(m).await?;
                        for name in pending {
                            tracing::info!(migration = name, "applied at start");
                        }
                    }
                }
                Ok(())
            }
        })
        .check(move |app: AppService| check(app, Arc::clone(&checked)))
        // `/ready`: a connection from the pool (sqlx checks an idle one
        // before handing it out), within the probe's second.
        .ready_check("database", |ctx: tern::RequestContext| async move {
            match ctx.settings::<Database>() {
                Some(db) => db.check().await.map_err(|e| e.to_string()),
                None => Ok(()),
            }
        })
}

fn database(app: &AppService) -> Result<Arc<Database>, BoxError> {
    app.settings::<Database>()
        .ok_or_else(|| "the app does not load `tern_data::Database` settings".into())
}

async fn migrate(call: Invocation, migrations: Arc<[&'static Migrations]>) -> Result<(), BoxError> {
    let db = database(call.app())?;
    let plan = call.args().get_flag("plan");
    println!("database: {}", db.shown());
    let mut applied = 0;
    for m in migrations.iter() {
        let pending = db.pending(m).await?;
        if plan {
            for name in &pending {
                println!("  would apply {name}");
            }
            applied += pending.len();
            continue;
        }
        for name in &pending {
            println!("  applying {name}");
        }
        db.migrate(m).await?;
        applied += pending.len();
    }
    match (plan, applied) {
        (_, 0) => println!("nothing to apply: every migration is applied"),
        (true, n) => println!("{n} to apply (nothing applied: --plan)"),
        (false, n) => println!("applied {n} migration(s)"),
    }
    db.pool().close().await;
    Ok(())
}

async fn check(app: AppService, migrations: Arc<[&'static Migrations]>) -> Vec<Finding> {
    let db = match database(&app) {
        Ok(db) => db,
        Err(e) => return vec![Finding::fail("DATABASE_URL", e.to_string())],
    };
    let mut out = vec![if db.is_default() {
        Finding::warn(
            "DATABASE_URL",
            "is not set: the SQLite file data/app.db serves one process; for several, set \
             DATABASE_URL=postgres://...",
        )
    } else {
        Finding::ok("DATABASE_URL", db.shown().to_owned())
    }];
    if let Err(e) = db.check().await {
        out.push(Finding::fail(
            "DATABASE_URL",
            format!("{} does not answer: {e}", db.shown()),
        ));
        return out;
    }
    let mut pending = Vec::new();
    for m in migrations.iter() {
        match db.pending(m).await {
            Ok(names) => pending.extend(names),
            Err(e) => {
                out.push(Finding::fail("migrations", e.to_string()));
                return out;
            }
        }
    }
    out.push(match pending.first() {
        None => Finding::ok("migrations", "all applied"),
        Some(first) if !db.migrate_on_start(true) => Finding::fail(
            "migrations",
            format!(
                "{} not applied (first: {first}): run the `migrate` command before serving",
                pending.len()
            ),
        ),
        Some(first) => Finding::warn(
            "migrations",
            format!(
                "{} not applied (first: {first}); DATABASE_MIGRATE_ON_START applies them at start",
                pending.len()
            ),
        ),
    });
    out
}

/// A `reencrypt` command: rewrites every row of each model added with
/// [`Reencrypt::model`] under the newest key of `FIELD_ENCRYPTION_KEY`
/// (see [`encryption`](crate::encryption)), printing how many rows of
/// each it wrote.
///
/// ```no_run
/// # use tern_data::Model;
/// # #[derive(Model, serde::Serialize, serde::Deserialize)]
/// # #[model(table = "patients")]
/// # struct Patient { #[model(primary_key)] id: i64, notes: tern_data::Encrypted<String> }
/// let app = tern::App::new()
///     .settings::<tern_data::FieldKeys>("field_encryption")
///     .command(tern_data::reencrypt().model::<Patient>().command());
/// ```
pub fn reencrypt() -> Reencrypt {
    Reencrypt { models: Vec::new() }
}

type Rewrite = fn(
    Pool,
) -> std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<u64, crate::DataError>> + Send>,
>;

/// The models a `reencrypt` command rewrites; see [`reencrypt`].
#[derive(Debug, Default)]
pub struct Reencrypt {
    models: Vec<(&'static str, Rewrite)>,
}

impl Reencrypt {
    /// Adds a model with encrypted fields.
    pub fn model<M: Model + Send + Unpin + 'static>(mut self) -> Self {
        self.models.push((M::TABLE, |pool| {
            Box::pin(async move { crate::encryption::reencrypt::<M>(&pool).await })
        }));
        self
    }

    /// The command.
    pub fn command(self) -> Command {
        let models: Arc<[(&'static str, Rewrite)]> = self.models.into();
        Command::new(
            clap::Command::new("reencrypt").about(
                "Rewrites every encrypted field with the newest key of FIELD_ENCRYPTION_KEY \
                 (the end of a key rotation)",
            ),
            move |call: Invocation| {
                let models = Arc::clone(&models);
                async move {
                    let keys = call.settings::<crate::FieldKeys>()?;
                    let current = keys.current().ok_or(
                        "FIELD_ENCRYPTION_KEY has no key: set `kid:base64,...`, the new key first",
                    )?;
                    println!("rewriting with the key `{current}`");
                    let db = database(call.app())?;
                    for (table, rewrite) in models.iter() {
                        let written = rewrite(db.pool().clone()).await?;
                        println!("{table}: rewrote {written} row(s)");
                    }
                    db.pool().close().await;
                    Ok(())
                }
            },
        )
    }
}
