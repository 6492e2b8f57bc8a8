//! The `check` command: the production checklist.

use std::fmt;

use super::CheckHook;
use crate::{app::App, config::Config, server::Error};

/// How a line of the checklist came out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Fine for production.
    Ok,
    /// Allowed, but worth a look (the line says why).
    Warn,
    /// Production would refuse it, or it is unsafe: `check` exits with 1.
    Fail,
}

/// One line of the `check` command's checklist: the setting it is about
/// and what to do. Never put a secret's value in `says`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// How it came out.
    pub verdict: Verdict,
    /// The setting (`SECRET_KEY`, `DATABASE_URL`, ...).
    pub setting: String,
    /// What was found; for a failure, what to set.
    pub says: String,
}

impl Finding {
    /// A line that passes.
    pub fn ok(setting: impl Into<String>, says: impl Into<String>) -> Self {
        Finding::new(Verdict::Ok, setting, says)
    }

    /// A line worth a look that does not fail the check.
    pub fn warn(setting: impl Into<String>, says: impl Into<String>) -> Self {
        Finding::new(Verdict::Warn, setting, says)
    }

    /// A line that fails the check: `says` tells what to set.
    pub fn fail(setting: impl Into<String>, says: impl Into<String>) -> Self {
        Finding::new(Verdict::Fail, setting, says)
    }

    fn new(verdict: Verdict, setting: impl Into<String>, says: impl Into<String>) -> Self {
        Finding {
            verdict,
            setting: setting.into(),
            says: says.into(),
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let verdict = match self.verdict {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "FAIL",
        };
        write!(f, "{verdict:<5} {:<22} {}", self.setting, self.says)
    }
}

/// Tern's own lines at start, in production: each `warn` or `FAIL` in
/// the log, and every line on `/metrics` as
/// `tern_check_findings{setting, verdict} 1`, so the operators who do not
/// run `check` see them too.
pub(crate) fn at_start(config: &Config, metrics: &crate::metrics::Metrics) {
    if !config.is_production() {
        return;
    }
    for finding in findings(config) {
        let verdict = match finding.verdict {
            Verdict::Ok => "ok",
            Verdict::Warn => "warn",
            Verdict::Fail => "fail",
        };
        if finding.verdict != Verdict::Ok {
            tracing::warn!(setting = %finding.setting, verdict, "{}", finding.says);
        }
        metrics
            .gauge(
                "tern_check_findings",
                "The production checklist's lines at start (the `check` command), by setting and verdict",
                &[("setting", &finding.setting), ("verdict", verdict)],
            )
            .set(1);
    }
}

/// Tern's own lines, judging `config` as production would.
pub(crate) fn findings(config: &Config) -> Vec<Finding> {
    let mut out = Vec::new();
    out.push(if config.is_production() {
        Finding::ok("TERN_ENV", "production")
    } else {
        Finding::fail(
            "TERN_ENV",
            "is `development`; set TERN_ENV=production where the app serves users (security \
             headers, no error details, these checks enforced at start)",
        )
    });
    // The rest as production would see it.
    let production = config.clone().production();
    out.push(match &production.secret_key {
        None => Finding::fail(
            "SECRET_KEY",
            format!(
                "is not set; production needs at least 32 random bytes: {}",
                crate::config::GENERATE_HINT
            ),
        ),
        Some(key) => match crate::config::check_secret(key.as_bytes()) {
            Ok(()) => Finding::ok(
                "SECRET_KEY",
                format!("set ({} bytes)", key.as_bytes().len()),
            ),
            Err(e) => Finding::fail("SECRET_KEY", e.message()),
        },
    });
    let hosts: Vec<&str> = config.allowed_hosts.iter().map(|h| h.as_str()).collect();
    out.push(if hosts.is_empty() {
        Finding::fail(
            "ALLOWED_HOSTS",
            "is not set; list the host names this server answers (e.g. \
             `example.com,.example.com`)",
        )
    } else if hosts.contains(&"*") {
        Finding::warn(
            "ALLOWED_HOSTS",
            "is `*`: any Host header is answered; list the names this server answers",
        )
    } else {
        Finding::ok("ALLOWED_HOSTS", hosts.join(", "))
    });
    let everyone = config
        .trusted_proxies
        .iter()
        .any(|net| net.prefix_len() == 0);
    out.push(match &config.trusted_proxy_header {
        Some(_) if everyone => Finding::fail(
            "TRUSTED_PROXIES",
            "includes every address (/0): any client can choose the address rate limits and \
             the login throttle see; list your proxies' addresses",
        ),
        Some(header) => Finding::ok(
            "TRUSTED_PROXY_HEADER",
            format!(
                "`{header}` believed from {}",
                config
                    .trusted_proxies
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        None if config.tls.is_none() => Finding::warn(
            "TRUSTED_PROXY_HEADER",
            "is not set: the client's address is the peer's; behind a proxy, set \
             TRUSTED_PROXY_HEADER (e.g. `X-Forwarded-For`) and TRUSTED_PROXIES, or rate limits \
             and the login throttle count the proxy as one client",
        ),
        None => Finding::ok(
            "TRUSTED_PROXY_HEADER",
            "not set: clients connect directly (TLS)",
        ),
    });
    out.push(if config.is_production() && !config.security_headers {
        Finding::fail(
            "TERN_SECURITY_HEADERS",
            "is off: remove TERN_SECURITY_HEADERS=false (HSTS, CSP, X-Frame-Options, ...)",
        )
    } else {
        Finding::ok(
            "TERN_SECURITY_HEADERS",
            "on in production (HSTS, CSP, X-Frame-Options, nosniff, Referrer-Policy)",
        )
    });
    out.push(match &config.tls {
        Some(files) => match production.validate() {
            Err(e) if e.setting().starts_with("TERN_TLS") => {
                Finding::fail(e.setting(), e.message())
            }
            _ => Finding::ok(
                "TERN_TLS_CERT",
                format!("HTTPS with {}", files.cert.display()),
            ),
        },
        None if config.trusted_proxy_header.is_some() => {
            Finding::ok("TERN_TLS_CERT", "not set: TLS ends at the proxy")
        }
        None => Finding::warn(
            "TERN_TLS_CERT",
            "is not set and no proxy is configured: serve behind a proxy that terminates TLS \
             (and set TRUSTED_PROXY_HEADER), or set TERN_TLS_CERT and TERN_TLS_KEY",
        ),
    });
    if config.metrics {
        out.push(match &config.metrics_token {
            Some(_) => Finding::ok(
                "METRICS_TOKEN",
                format!(
                    "set: {} needs `Authorization: Bearer <token>`",
                    config.metrics_path
                ),
            ),
            None => Finding::fail(
                "METRICS_TOKEN",
                "is not set and TERN_METRICS is on: set a token of at least 16 characters for \
                 the scraper",
            ),
        });
    }
    if config.http1 == crate::config::Http1Engine::Hyper {
        out.push(Finding::warn(
            "TERN_HTTP1",
            "is `hyper`: hyper's HTTP/1 server, the way back for one release (more memory per \
             connection, pipelined answers less batched); remove it unless Tern's own engine \
             broke something (and report what)",
        ));
    }
    if config.openapi == Some(true) {
        out.push(Finding::warn(
            "TERN_OPENAPI",
            "is on: the API document and its docs page are public in production",
        ));
    }
    // Limits and the rest of what the start checks.
    if let Err(e) = production.validate() {
        if !out.iter().any(|f| f.setting == e.setting()) {
            out.push(Finding::fail(e.setting(), e.message()));
        }
    }
    out
}

/// Runs the checklist, prints it, and fails when a line does.
pub(crate) async fn run<S>(app: App<S>, checks: &[CheckHook]) -> Result<(), Error>
where
    S: Clone + Send + Sync + 'static,
{
    let config = match super::configuration(&app) {
        Ok(config) => config,
        Err(e) => {
            let line = Finding::fail(e.setting().unwrap_or("configuration"), e.to_string());
            println!("{line}");
            return Err(Error::check(1));
        }
    };
    let mut lines = findings(&config);
    // The app's own settings, loaded as production loads them.
    let production = config.clone().production();
    let errors = app.settings_errors(&production);
    if errors.is_empty() {
        lines.push(Finding::ok(
            "settings",
            "the app's settings load for production",
        ));
    }
    lines.extend(
        errors
            .into_iter()
            .map(|e| Finding::fail(e.setting(), e.message())),
    );
    match app.build_with(production) {
        Ok(service) => {
            for check in checks {
                lines.extend(check(service.clone()).await);
            }
        }
        Err(e) => lines.push(Finding::fail(
            e.setting().unwrap_or("routes"),
            format!("the app does not build: {e}"),
        )),
    }
    println!("Production checklist:");
    for line in &lines {
        println!("  {line}");
    }
    let failed = lines.iter().filter(|l| l.verdict == Verdict::Fail).count();
    let warned = lines.iter().filter(|l| l.verdict == Verdict::Warn).count();
    if failed == 0 {
        println!("{} lines, {warned} to look at, none failed.", lines.len());
        Ok(())
    } else {
        println!(
            "{failed} failed: set what each FAIL line says; production refuses to start, or is \
             unsafe, until then."
        );
        Err(Error::check(failed))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn verdicts(settings: &[(&str, &str)]) -> Vec<(String, Verdict)> {
        findings(&Config::from_settings(settings.iter().copied()).unwrap())
            .into_iter()
            .map(|f| (f.setting, f.verdict))
            .collect()
    }

    #[test]
    fn development_defaults_fail_and_a_production_setup_passes() {
        let dev = verdicts(&[]);
        assert!(dev.contains(&("TERN_ENV".into(), Verdict::Fail)));
        assert!(dev.contains(&("SECRET_KEY".into(), Verdict::Fail)));
        assert!(dev.contains(&("ALLOWED_HOSTS".into(), Verdict::Fail)));
        let prod = verdicts(&[
            ("TERN_ENV", "production"),
            ("SECRET_KEY", "kq3v9S0yX2b7NwL4pT8rZ1cH6mJ5fD0aQeUuGiVoWx"),
            ("ALLOWED_HOSTS", "example.com"),
            ("TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
        ]);
        assert!(prod.iter().all(|(_, v)| *v == Verdict::Ok), "{prod:?}");
    }

    #[test]
    fn unsafe_values_fail_and_secrets_are_not_printed() {
        let secret = "changeme-changeme-changeme-changeme";
        let lines = findings(
            &Config::from_settings([
                ("TERN_ENV", "production"),
                ("SECRET_KEY", secret),
                ("ALLOWED_HOSTS", "*"),
                ("TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
                ("TRUSTED_PROXIES", "0.0.0.0/0"),
                ("TERN_SECURITY_HEADERS", "false"),
            ])
            .unwrap(),
        );
        let verdict = |s: &str| lines.iter().find(|f| f.setting == s).unwrap().verdict;
        assert_eq!(verdict("SECRET_KEY"), Verdict::Fail);
        assert_eq!(verdict("ALLOWED_HOSTS"), Verdict::Warn);
        assert_eq!(verdict("TRUSTED_PROXIES"), Verdict::Fail);
        assert_eq!(verdict("TERN_SECURITY_HEADERS"), Verdict::Fail);
        assert!(lines.iter().all(|f| !f.to_string().contains(secret)));
    }

    #[test]
    fn the_hyper_engine_is_a_warning() {
        let production = [
            ("TERN_ENV", "production"),
            ("SECRET_KEY", "kq3v9S0yX2b7NwL4pT8rZ1cH6mJ5fD0aQeUuGiVoWx"),
            ("ALLOWED_HOSTS", "example.com"),
            ("TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
        ];
        assert!(!verdicts(&production).iter().any(|(s, _)| s == "TERN_HTTP1"));
        let mut hyper = production.to_vec();
        hyper.push(("TERN_HTTP1", "hyper"));
        assert!(verdicts(&hyper).contains(&("TERN_HTTP1".into(), Verdict::Warn)));
    }
}
