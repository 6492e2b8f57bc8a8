//! What the soak runs against: a fresh PostgreSQL schema, two showcase
//! processes on it sharing one Redis, and nginx in front of them on
//! loopback.

use std::{
    fs::File,
    net::SocketAddr,
    path::{Path, PathBuf},
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

use anyhow::{bail, ensure, Context, Result};
use tern_data::Backend;

use crate::{client::Client, process::free_addr};

/// How long a showcase may take to answer `/ready`, and nginx to listen.
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// nginx's idle upstream connections close after this long: the soak's
/// check for connections left open waits for it (the documented config
/// says 50 s, to stay under Tern's 60 s keep-alive; a shorter time only
/// makes the check quicker).
pub(super) const UPSTREAM_IDLE: Duration = Duration::from_secs(5);

/// The settings every showcase process of a run shares.
pub(super) struct Shared {
    /// `DATABASE_URL`: the run's schema.
    pub(super) database: String,
    /// The Redis of sessions, the rate limit and the chat's bus.
    pub(super) redis: String,
    /// Names the run's keys and channel in Redis.
    pub(super) tag: String,
    /// `METRICS_TOKEN`.
    pub(super) token: String,
    /// `SHOWCASE_ADMIN_PASSWORD`.
    pub(super) password: String,
}

impl Shared {
    fn envs(&self) -> Vec<(&'static str, String)> {
        vec![
            ("DATABASE_URL", self.database.clone()),
            // A fixed pool: its connections are open before the first
            // count of file descriptors and stay open.
            ("DATABASE_MIN_CONNECTIONS", "4".into()),
            ("DATABASE_MAX_CONNECTIONS", "4".into()),
            (
                "SECRET_KEY",
                "the soak's shared secret key for both showcase processes".into(),
            ),
            ("SHOWCASE_ADMIN_PASSWORD", self.password.clone()),
            // Counted in Redis by both processes, never refusing: the
            // soak's load comes from one address.
            ("SHOWCASE_REDIS_URL", self.redis.clone()),
            ("SHOWCASE_RATE_LIMIT", "1000000".into()),
            ("AUTH_STORE", "redis".into()),
            ("AUTH_REDIS_URL", self.redis.clone()),
            ("AUTH_REDIS_PREFIX", self.tag.clone()),
            // The run's logins leave Redis within the hour.
            ("AUTH_SESSION_LIFETIME", "1h".into()),
            ("REALTIME_BACKEND", "redis".into()),
            ("REALTIME_URL", self.redis.clone()),
            ("REALTIME_CHANNEL", self.tag.clone()),
            ("TRUSTED_PROXY_HEADER", "X-Forwarded-For".into()),
            ("TRUSTED_PROXIES", "127.0.0.1".into()),
            ("TERN_METRICS", "on".into()),
            ("METRICS_TOKEN", self.token.clone()),
            ("TERN_LOG_FORMAT", "json".into()),
            ("TERN_ACCESS_LOG", "true".into()),
        ]
    }

    /// The settings as written in the report (secrets left out).
    pub(super) fn public_envs(&self) -> Vec<(String, String)> {
        self.envs()
            .into_iter()
            .filter(|(k, _)| {
                !matches!(
                    *k,
                    "SECRET_KEY" | "METRICS_TOKEN" | "SHOWCASE_ADMIN_PASSWORD"
                )
            })
            .map(|(k, v)| (k.to_owned(), v))
            .collect()
    }
}

/// A fresh schema of the database at `POSTGRES_URL` (as `tern-bench
/// data` and `admin` make theirs), in a runtime of its own.
pub(super) fn fresh_schema() -> Result<String> {
    ensure!(
        std::env::var("POSTGRES_URL").is_ok_and(|u| !u.is_empty()),
        "POSTGRES_URL is not set: the soak runs the showcase on PostgreSQL"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(tern_data::testing::fresh(Backend::Postgres))
        .context("POSTGRES_URL is not set")
}

/// Drops the schema `fresh_schema` made.
pub(super) fn drop_schema(url: &str) -> Result<()> {
    let (Ok(admin), Some(schema)) = (
        std::env::var("POSTGRES_URL"),
        url.rsplit_once("search_path]=").map(|(_, s)| s.to_owned()),
    ) else {
        return Ok(());
    };
    ensure!(
        schema
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_'),
        "unexpected schema name {schema}"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async {
        let pool = tern_data::sqlx::PgPool::connect(&admin).await?;
        tern_data::sqlx::raw_sql(tern_data::sqlx::AssertSqlSafe(format!(
            "DROP SCHEMA IF EXISTS {schema} CASCADE"
        )))
        .execute(&pool)
        .await?;
        pool.close().await;
        Ok::<_, anyhow::Error>(())
    })
}

/// `REDIS_URL` with its database number replaced by `db`: the soak's
/// keys (the rate limit's among them, whose name the showcase fixes)
/// never meet another run's in database 0.
pub(super) fn redis_url(base: &str, db: u32) -> String {
    let (scheme, rest) = base.split_once("://").unwrap_or(("redis", base));
    let authority = rest.split(['/', '?']).next().unwrap_or(rest);
    format!("{scheme}://{authority}/{db}")
}

/// Deletes the run's keys (`{tag}:*`: sessions) from `redis` with
/// `redis-cli`: how many. Without `redis-cli` they expire on their own
/// (`AUTH_SESSION_LIFETIME=1h`).
pub(super) fn forget_keys(redis: &str, tag: &str) -> Result<u64> {
    let scan = Command::new("redis-cli")
        .args(["-u", redis, "--scan", "--pattern"])
        .arg(format!("{tag}:*"))
        .output()
        .context("cannot run redis-cli")?;
    ensure!(scan.status.success(), "redis-cli --scan failed");
    let text = String::from_utf8_lossy(&scan.stdout);
    let keys: Vec<&str> = text.lines().filter(|k| !k.is_empty()).collect();
    for batch in keys.chunks(200) {
        let status = Command::new("redis-cli")
            .args(["-u", redis, "DEL"])
            .args(batch)
            .stdout(Stdio::null())
            .status()?;
        ensure!(status.success(), "redis-cli DEL failed");
    }
    Ok(keys.len() as u64)
}

/// One showcase process, its JSON log in a file.
pub(super) struct Showcase {
    child: Child,
    /// Where it listens (directly: the soak scrapes it there).
    pub(super) addr: SocketAddr,
    /// Its log (stdout and stderr).
    pub(super) log: PathBuf,
}

impl Showcase {
    /// Starts `binary` with the shared settings, and waits for `/ready`.
    pub(super) fn start(
        binary: &Path,
        shared: &Shared,
        dir: &Path,
        name: &str,
    ) -> Result<Showcase> {
        let addr = free_addr()?;
        let log = dir.join(format!("{name}.log"));
        let out = File::create(&log)?;
        let child = Command::new(binary)
            .env("TERN_ADDR", addr.to_string())
            .envs(shared.envs())
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .with_context(|| format!("cannot start {}", binary.display()))?;
        let mut showcase = Showcase { child, addr, log };
        showcase.wait_ready()?;
        Ok(showcase)
    }

    fn wait_ready(&mut self) -> Result<()> {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait()? {
                bail!(
                    "the showcase exited ({status}) before it was ready: see {}",
                    self.log.display()
                );
            }
            let ready = Client::connect(self.addr)
                .and_then(|mut c| c.send("GET", "/ready", &[("Connection", "close")], None))
                .is_ok_and(|r| r.status == 200);
            if ready {
                return Ok(());
            }
            ensure!(
                started.elapsed() < START_TIMEOUT,
                "the showcase on {} was not ready within {START_TIMEOUT:?}: see {}",
                self.addr,
                self.log.display()
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// The process ID.
    pub(super) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Sends `SIGTERM` and waits for the exit (killed after 15 s).
    pub(super) fn stop(mut self) {
        terminate(&mut self.child, Duration::from_secs(15));
    }
}

impl Drop for Showcase {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `SIGTERM`, then `SIGKILL` after `grace`.
fn terminate(child: &mut Child, grace: Duration) {
    let _ = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status();
    let started = Instant::now();
    while started.elapsed() < grace {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// nginx in front of the showcases: the documented config
/// (`docs/deployment/nginx.conf`) on plain HTTP on loopback, with
/// `proxy_next_upstream off` so that each request reaches one process
/// once and the counts can match.
pub(super) struct Nginx {
    child: Child,
    /// Where it listens.
    pub(super) addr: SocketAddr,
    /// Its access log (the documented `tern` format).
    pub(super) access_log: PathBuf,
}

/// Where nginx is installed.
pub(super) fn nginx_binary() -> Result<&'static str> {
    ["/usr/sbin/nginx", "/usr/bin/nginx"]
        .into_iter()
        .find(|p| Path::new(p).exists())
        .context("nginx is not installed (`apt-get install -y nginx-light`)")
}

/// The soak's nginx config: `docs/deployment/nginx.conf`'s `http` block
/// without TLS, on `listen`, its files in `dir`.
pub(super) fn nginx_conf(dir: &Path, listen: SocketAddr, upstreams: &[SocketAddr]) -> String {
    let d = dir.display();
    // The master switches its workers to `nobody` when it runs as root;
    // they write the scratch directory, so they stay root there.
    let user = if running_as_root() {
        "user root;\n"
    } else {
        ""
    };
    let servers: String = upstreams
        .iter()
        .map(|a| format!("        server {a} max_fails=0;\n"))
        .collect();
    let idle = UPSTREAM_IDLE.as_secs();
    let headers = "\
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_set_header X-Forwarded-Proto $scheme;
            proxy_set_header X-Request-Id $request_id;
            proxy_set_header traceparent \"\";\n";
    format!(
        "{user}worker_processes 1;
daemon off;
pid {d}/nginx.pid;
error_log {d}/nginx-error.log warn;

events {{
    worker_connections 4096;
}}

http {{
    log_format tern '$remote_addr [$time_iso8601] \"$request\" $status '
                    '$body_bytes_sent $request_time $upstream_addr $request_id';
    access_log {d}/nginx-access.log tern;
    client_body_temp_path {d}/body;
    proxy_temp_path {d}/proxy;
    fastcgi_temp_path {d}/fastcgi;
    uwsgi_temp_path {d}/uwsgi;
    scgi_temp_path {d}/scgi;
    client_max_body_size 2m;
    server_tokens off;

    map $http_upgrade $connection_upgrade {{
        default upgrade;
        ''      '';
    }}

    upstream tern {{
{servers}        keepalive 32;
        keepalive_timeout {idle}s;
    }}

    server {{
        listen {listen};
        proxy_http_version 1.1;
        proxy_set_header Host $http_host;
        proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        proxy_set_header X-Forwarded-Proto $scheme;
        proxy_set_header X-Request-Id $request_id;
        proxy_set_header traceparent \"\";
        proxy_set_header Connection \"\";
        proxy_connect_timeout 5s;
        # Never a second try: each request is counted by one process.
        proxy_next_upstream off;

        location / {{
            proxy_pass http://tern;
        }}

        location /chat/socket {{
            proxy_pass http://tern;
{headers}            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_read_timeout 120s;
            proxy_send_timeout 120s;
        }}

        location /chat/events {{
            proxy_pass http://tern;
            proxy_buffering off;
            proxy_cache off;
            proxy_read_timeout 120s;
        }}
    }}
}}
"
    )
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(2))
            == Some("0")
    })
}

impl Nginx {
    /// Writes the config into `dir`, checks it with `nginx -t`, starts
    /// nginx and waits until it listens.
    pub(super) fn start(dir: &Path, upstreams: &[SocketAddr]) -> Result<Nginx> {
        let binary = nginx_binary()?;
        let addr = free_addr()?;
        let conf = dir.join("nginx.conf");
        std::fs::write(&conf, nginx_conf(dir, addr, upstreams))?;
        let test = Command::new(binary)
            .arg("-t")
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(dir)
            .output()?;
        ensure!(
            test.status.success(),
            "nginx -t refused {}: {}",
            conf.display(),
            String::from_utf8_lossy(&test.stderr)
        );
        let child = Command::new(binary)
            .arg("-c")
            .arg(&conf)
            .arg("-p")
            .arg(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()?;
        let mut nginx = Nginx {
            child,
            addr,
            access_log: dir.join("nginx-access.log"),
        };
        let started = Instant::now();
        while !crate::run::listening(addr) {
            if let Some(status) = nginx.child.try_wait()? {
                bail!(
                    "nginx exited ({status}): see {}/nginx-error.log",
                    dir.display()
                );
            }
            ensure!(
                started.elapsed() < START_TIMEOUT,
                "nginx did not listen on {addr} within {START_TIMEOUT:?}"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        Ok(nginx)
    }

    /// The access log's lines, those whose status is outside 1xx-3xx
    /// but `499`, and the `499`s (the client left before the answer: wrk
    /// stopping with requests in flight).
    pub(super) fn access_counts(&self) -> (u64, u64, u64) {
        let Ok(text) = std::fs::read_to_string(&self.access_log) else {
            return (0, 0, 0);
        };
        let mut lines = 0;
        let mut bad = 0;
        let mut left = 0;
        for line in text.lines() {
            lines += 1;
            let status = line
                .rsplit_once("\" ")
                .and_then(|(_, rest)| rest.split_whitespace().next())
                .and_then(|s| s.parse::<u16>().ok());
            match status {
                Some(100..=399) => {}
                Some(499) => left += 1,
                _ => bad += 1,
            }
        }
        (lines, bad, left)
    }

    /// Stops nginx (`SIGTERM`: the master stops its workers).
    pub(super) fn stop(mut self) {
        terminate(&mut self.child, Duration::from_secs(5));
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        if let Ok(None) = self.child.try_wait() {
            terminate(&mut self.child, Duration::from_secs(5));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redis_database_is_replaced() {
        for (base, want) in [
            ("redis://127.0.0.1:6379/", "redis://127.0.0.1:6379/15"),
            ("redis://127.0.0.1:6379", "redis://127.0.0.1:6379/15"),
            ("redis://127.0.0.1:6379/0", "redis://127.0.0.1:6379/15"),
            ("redis://:pw@db:6379/2?x=1", "redis://:pw@db:6379/15"),
        ] {
            assert_eq!(redis_url(base, 15), want, "{base}");
        }
    }

    #[test]
    fn nginx_config_never_retries_and_proxies_both() {
        let a = SocketAddr::from(([127, 0, 0, 1], 3001));
        let b = SocketAddr::from(([127, 0, 0, 1], 3002));
        let conf = nginx_conf(Path::new("/tmp/x"), a, &[a, b]);
        assert!(conf.contains("proxy_next_upstream off;"));
        assert!(conf.contains("server 127.0.0.1:3002 max_fails=0;"));
        assert!(conf.contains("listen 127.0.0.1:3001;"));
        assert!(conf.contains("proxy_buffering off;"));
    }
}
