//! Starting the showcase binary and talking to it over raw sockets.
#![allow(dead_code)]

use std::{
    io::{Read, Write},
    net::{TcpListener, TcpStream},
    path::PathBuf,
    process::{Child, Command, Stdio},
    time::{Duration, Instant},
};

pub(crate) const BIN: &str = env!("CARGO_BIN_EXE_showcase");
/// A random 32-character secret key (as `tern` prints one).
pub(crate) const STRONG: &str = "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ";
/// The password of the `admin` account every `Showcase` starts with.
pub(crate) const ADMIN_PASSWORD: &str = "correct horse battery staple";

/// A running showcase process; killed when dropped.
pub(crate) struct Showcase {
    pub(crate) child: Child,
    pub(crate) port: u16,
    pub(crate) dir: PathBuf,
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn scratch(tag: &str) -> PathBuf {
    static N: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = N.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let dir = std::env::temp_dir().join(format!("tern-attacks-{tag}-{}-{n}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

impl Showcase {
    /// The showcase in production (`TERN_ENV=production`, a strong
    /// `SECRET_KEY`, `ALLOWED_HOSTS=127.0.0.1,localhost`) on a SQLite
    /// database of its own (unless `envs` names `DATABASE_URL`), with an
    /// `admin` account whose password is [`ADMIN_PASSWORD`]. `envs` come
    /// last and may override any of these.
    pub(crate) fn production(tag: &str, envs: &[(&str, &str)]) -> Showcase {
        let dir = scratch(tag);
        let sqlite = format!("sqlite://{}/app.db", dir.display());
        let mut base: Vec<(String, String)> = vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ("DATABASE_URL".into(), sqlite),
            ("TERN_ENV".into(), "production".into()),
            ("SECRET_KEY".into(), STRONG.into()),
            ("ALLOWED_HOSTS".into(), "127.0.0.1,localhost".into()),
        ];
        for (k, v) in envs {
            base.retain(|(bk, _)| bk != k);
            base.push(((*k).into(), (*v).into()));
        }
        // The tables and the account, through the app's own commands (in
        // production nothing is migrated at start).
        let migrate = Command::new(BIN)
            .env_clear()
            .envs(base.iter().map(|(k, v)| (k, v)))
            .arg("migrate")
            .output()
            .unwrap();
        assert!(
            migrate.status.success(),
            "migrate: {}",
            String::from_utf8_lossy(&migrate.stderr)
        );
        let mut add = Command::new(BIN)
            .env_clear()
            .envs(base.iter().map(|(k, v)| (k, v)))
            .args(["createsuperuser", "--username", "admin", "--password-stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        add.stdin
            .take()
            .unwrap()
            .write_all(format!("{ADMIN_PASSWORD}\n").as_bytes())
            .unwrap();
        let out = add.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success() || stderr.contains("exists"),
            "createsuperuser: {stderr}"
        );
        Self::spawn(dir, &base)
    }

    /// The showcase with exactly these settings (plus `PATH` and
    /// `TERN_ADDR`), in development unless they say otherwise.
    pub(crate) fn with(tag: &str, envs: &[(&str, &str)]) -> Showcase {
        let dir = scratch(tag);
        let mut base: Vec<(String, String)> = vec![
            ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            (
                "DATABASE_URL".into(),
                format!("sqlite://{}/app.db", dir.display()),
            ),
        ];
        for (k, v) in envs {
            base.retain(|(bk, _)| bk != k);
            base.push(((*k).into(), (*v).into()));
        }
        Self::spawn(dir, &base)
    }

    fn spawn(dir: PathBuf, envs: &[(String, String)]) -> Showcase {
        let port = free_port();
        let mut child = Command::new(BIN)
            .env_clear()
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .env("TERN_ADDR", format!("127.0.0.1:{port}"))
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Ok(res) = request(
                port,
                "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            ) {
                if res.starts_with("HTTP/1.1 200") {
                    break;
                }
            }
            if let Some(status) = child.try_wait().unwrap() {
                let mut stderr = String::new();
                let _ = child.stderr.take().unwrap().read_to_string(&mut stderr);
                panic!("the showcase exited with {status}: {stderr}");
            }
            assert!(Instant::now() < deadline, "the showcase did not answer");
            std::thread::sleep(Duration::from_millis(50));
        }
        Showcase { child, port, dir }
    }

    /// The process's resident memory in KiB (`/proc/PID/status`).
    pub(crate) fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap()
    }

    /// Sends `raw` (a whole request) on a new connection and reads until
    /// the server closes it (send `Connection: close`).
    pub(crate) fn raw(&self, raw: &str) -> String {
        request(self.port, raw).unwrap()
    }

    /// Logs `username` in with a form post: the session cookie
    /// (`name=value`) and the status.
    pub(crate) fn login(&self, username: &str, password: &str) -> (u16, Option<String>) {
        let body = format!(
            "username={}&password={}",
            form_encode(username),
            form_encode(password)
        );
        let res = self.raw(&format!(
            "POST /auth/login HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
        (status(&res), cookie(&res, "tern_session"))
    }
}

impl Drop for Showcase {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One request on a new connection; the whole answer as text.
pub(crate) fn request(port: u16, raw: &str) -> std::io::Result<String> {
    let mut s = TcpStream::connect(("127.0.0.1", port))?;
    s.set_read_timeout(Some(Duration::from_secs(30)))?;
    s.write_all(raw.as_bytes())?;
    let mut out = Vec::new();
    s.read_to_end(&mut out)?;
    Ok(String::from_utf8_lossy(&out).into_owned())
}

/// The status code of an answer.
pub(crate) fn status(res: &str) -> u16 {
    res.get(9..12).and_then(|s| s.parse().ok()).unwrap_or(0)
}

/// A header's value (the first, names compared without case).
pub(crate) fn header<'a>(res: &'a str, name: &str) -> Option<&'a str> {
    let head = res.split("\r\n\r\n").next()?;
    head.lines().skip(1).find_map(|l| {
        let (n, v) = l.split_once(':')?;
        n.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

/// The answer's body.
pub(crate) fn body(res: &str) -> &str {
    res.split_once("\r\n\r\n").map(|(_, b)| b).unwrap_or("")
}

/// `name=value` of a `Set-Cookie` for `name`.
pub(crate) fn cookie(res: &str, name: &str) -> Option<String> {
    let head = res.split("\r\n\r\n").next()?;
    head.lines().find_map(|l| {
        let (n, v) = l.split_once(':')?;
        if !n.trim().eq_ignore_ascii_case("set-cookie") {
            return None;
        }
        let pair = v.trim().split(';').next()?.trim();
        pair.starts_with(&format!("{name}="))
            .then(|| pair.to_owned())
    })
}

/// `application/x-www-form-urlencoded` of one value.
pub(crate) fn form_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'*' => {
                (b as char).to_string()
            }
            b' ' => "+".to_owned(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A fresh PostgreSQL database of its own (`POSTGRES_URL`'s server), or
/// `None` (and a line saying so) when `POSTGRES_URL` is not set.
pub(crate) fn fresh_postgres() -> Option<String> {
    // .ci/run sets it.
    tern::test::service_url("POSTGRES_URL")?;
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(tern_data::testing::fresh(tern_data::Backend::Postgres))
}
