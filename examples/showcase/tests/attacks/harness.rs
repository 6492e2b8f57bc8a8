//! The production showcase the attacks run against, on top of the
//! tests' shared support (re-exported: the attack modules take both with
//! `use super::harness::*`).
#![allow(dead_code)]

use std::{io::Write, path::PathBuf, process::Stdio};

pub(crate) use crate::support::*;

/// The password of the `admin` account every `Showcase` starts with.
pub(crate) const ADMIN_PASSWORD: &str = "correct horse battery staple";

impl Showcase {
    /// The showcase in production (`TERN_ENV=production`, a strong
    /// `SECRET_KEY`, `ALLOWED_HOSTS=127.0.0.1,localhost`) on a SQLite
    /// database of its own (unless `envs` names `DATABASE_URL`), with an
    /// `admin` account whose password is [`ADMIN_PASSWORD`]. `envs` come
    /// last and may override any of these.
    pub(crate) fn production(tag: &str, envs: &[(&str, &str)]) -> Showcase {
        let dir = scratch(&format!("attacks-{tag}"));
        let mut base: Vec<(String, String)> = vec![
            ("DATABASE_URL".into(), sqlite(&dir)),
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
        let migrate = isolated()
            .envs(base.iter().map(|(k, v)| (k, v)))
            .arg("migrate")
            .output()
            .unwrap();
        assert!(
            migrate.status.success(),
            "migrate: {}",
            String::from_utf8_lossy(&migrate.stderr)
        );
        let mut add = isolated()
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
        Self::answering(dir, &base)
    }

    /// The showcase with exactly these settings (plus `PATH` and
    /// `TERN_ADDR`), in development unless they say otherwise.
    pub(crate) fn with(tag: &str, envs: &[(&str, &str)]) -> Showcase {
        let dir = scratch(&format!("attacks-{tag}"));
        let mut base: Vec<(String, String)> = vec![("DATABASE_URL".into(), sqlite(&dir))];
        for (k, v) in envs {
            base.retain(|(bk, _)| bk != k);
            base.push(((*k).into(), (*v).into()));
        }
        Self::answering(dir, &base)
    }

    /// Started in `dir` with `envs`, once `/health` answers 200.
    fn answering(dir: PathBuf, envs: &[(String, String)]) -> Showcase {
        let mut command = isolated();
        command
            .envs(envs.iter().map(|(k, v)| (k, v)))
            .current_dir(&dir)
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        Showcase::spawn_until(command, dir, |port| {
            request(
                port,
                "GET /health HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n",
            )
            .ok()
            .filter(|res| res.starts_with("HTTP/1.1 200"))
        })
    }

    /// The process's resident memory in KiB (`/proc/PID/status`).
    pub(crate) fn rss_kib(&self) -> u64 {
        rss_kib_of(self.child.id()).unwrap()
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
        let res = self.raw(&login_form(&body));
        (status(&res), cookie(&res, "tern_session"))
    }
}

/// The resident memory of process `pid` in KiB (`/proc/PID/status`);
/// `None` once it is gone.
pub(crate) fn rss_kib_of(pid: u32) -> Option<u64> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}
