use super::*;
use crate::config::TlsFiles;

#[test]
fn every_setting_has_a_field() {
    let fields: Vec<String> = probe::field_shapes::<Raw>()
        .expect("a struct")
        .into_iter()
        .map(|(f, _)| variable(f))
        .collect();
    let mut names: Vec<&str> = KNOWN
        .iter()
        .chain(UNPREFIXED)
        .copied()
        .filter(|n| *n != "TERN_CONFIG")
        .collect();
    let mut read: Vec<&str> = fields.iter().map(String::as_str).collect();
    names.sort_unstable();
    read.sort_unstable();
    assert_eq!(names, read);
}

#[test]
fn bad_values_name_the_setting() {
    for (name, value) in [
        ("TERN_ADDR", "nowhere"),
        ("TERN_ENV", "staging"),
        ("TERN_WORKERS", "many"),
        ("TERN_WORKERS", "0"),
        ("TERN_MAX_BODY_BYTES", "-1"),
        ("TERN_REQUEST_TIMEOUT", "soon"),
        ("TERN_MAX_HEAD_BYTES", "100"),
        ("TRUSTED_PROXIES", "10.0.0.0/99"),
        ("TERN_TYPO", "1"),
    ] {
        let err = Config::from_settings([(name, value)]).expect_err(name);
        assert_eq!(err.setting(), name);
    }
}

/// The messages a person reads at startup, word for word as they were
/// before the settings were read through serde.
#[test]
fn messages_say_what_the_value_should_be() {
    for (name, value, message) in [
        (
            "TERN_ADDR",
            "nowhere",
            "`nowhere` is not an address like 127.0.0.1:3000",
        ),
        (
            "TERN_ENV",
            " Staging ",
            "`Staging` is neither `development` nor `production`",
        ),
        ("TERN_WORKERS", "many", "`many` is not a whole number"),
        ("TERN_WORKERS", "0", "must be at least 1"),
        (
            "TERN_RUNTIME",
            "Per-Core",
            "`Per-Core` is neither `multi-thread` nor `per-core`",
        ),
        ("TERN_HTTP1", "h1", "`h1` is neither `tern` nor `hyper`"),
        (
            "TERN_INVALID_RESPONSES",
            "log",
            "`log` is neither `send` nor `fail`",
        ),
        ("TERN_OPENAPI", "maybe", "`maybe` is not true or false"),
        ("TRUSTED_PROXY_HEADER", "x y", "`x y` is not a header name"),
        (
            "TRUSTED_PROXIES",
            "127.0.0.1, 10.0.0.0/99",
            "`10.0.0.0/99` is not an IP address or CIDR block like 10.0.0.0/8",
        ),
        (
            "TERN_REQUEST_ID_HEADER",
            "a:b",
            "`a:b` is not a header name",
        ),
        (
            "TERN_HEALTH_PATH",
            "health",
            "`health` must start with `/` (or be `off`)",
        ),
        (
            "TERN_READY_PATH",
            "ready",
            "`ready` must start with `/` (or be `off`)",
        ),
        (
            "TERN_LOG_FORMAT",
            "xml",
            "`xml` is neither `text` nor `json`",
        ),
        ("TERN_METRICS", "maybe", "`maybe` is not true or false"),
        (
            "TERN_METRICS_PATH",
            "metrics",
            "`metrics` must be a path starting with `/`, such as /metrics",
        ),
        (
            "METRICS_TOKEN",
            "short token",
            "is 11 characters; it must be at least 16 printable characters without spaces",
        ),
        ("TERN_MAX_BODY_BYTES", "-1", "`-1` is not a whole number"),
        (
            "TERN_MAX_H2_STREAMS",
            "5000000000",
            "`5000000000` is not a whole number",
        ),
        (
            "TERN_MAX_HEAD_BYTES",
            "100",
            "must be at least 8192 (hyper's smallest read buffer)",
        ),
        (
            "TERN_MAX_FORM_DEPTH",
            "257",
            "must be at most 256 (each level is a level of recursion when the form is read)",
        ),
        (
            "TERN_REQUEST_TIMEOUT",
            "soon",
            "`soon` is not a duration like 30s, 500ms, 2m, 12h or 14d",
        ),
        (
            "TERN_TLS_CERT",
            "cert.pem",
            "is not set, but TERN_TLS_CERT is: HTTPS needs both",
        ),
    ] {
        let err = Config::from_settings([(name, value)]).expect_err(name);
        let setting = if name == "TERN_TLS_CERT" {
            "TERN_TLS_KEY"
        } else {
            name
        };
        assert_eq!(
            err.to_string(),
            format!("{setting}: {message}"),
            "{name}={value}"
        );
    }
    let err = Config::from_settings([("TERN_TLS_KEY", "key.pem")]).expect_err("key");
    assert_eq!(
        err.to_string(),
        "TERN_TLS_CERT: is not set, but TERN_TLS_KEY is: HTTPS needs both"
    );
    // The first wrong setting, in the order they are checked.
    for (settings, first) in [
        ([("TERN_WORKERS", "0"), ("TERN_ADDR", "x")], "TERN_ADDR"),
        (
            [("TERN_WRITE_TIMEOUT", "x"), ("TERN_TLS_CERT", "c.pem")],
            "TERN_TLS_KEY",
        ),
        (
            [("TERN_MAX_HEADERS", "x"), ("TERN_TLS_KEY", "k.pem")],
            "TERN_MAX_HEADERS",
        ),
    ] {
        let err = Config::from_settings(settings).expect_err(first);
        assert_eq!(err.setting(), first);
    }
}

#[test]
fn durations_and_numbers() {
    let c = Config::from_settings([
        ("TERN_REQUEST_TIMEOUT", "500ms"),
        ("TERN_KEEP_ALIVE_TIMEOUT", "2m"),
        ("TERN_HEADER_READ_TIMEOUT", "7"),
        ("TERN_MAX_BODY_BYTES", "1_000_000"),
        ("TERN_HEALTH_PATH", "off"),
    ])
    .expect("valid");
    assert_eq!(c.timeouts.request, Duration::from_millis(500));
    assert_eq!(c.timeouts.keep_alive, Duration::from_secs(120));
    assert_eq!(c.timeouts.header_read, Duration::from_secs(7));
    assert_eq!(c.limits.max_body_bytes, 1_000_000);
    assert_eq!(c.health_path, None);
}

#[test]
fn every_value_is_read_and_empty_means_unset() {
    let c = Config::from_settings([
        ("TERN_ADDR", " 0.0.0.0:8080 "),
        ("TERN_ENV", "PROD"),
        ("TERN_WORKERS", "3"),
        ("TERN_RUNTIME", "per-core"),
        ("TERN_REUSE_PORT", "yes"),
        ("TERN_HTTP1", "hyper"),
        ("TERN_INVALID_RESPONSES", "fail"),
        ("TERN_OPENAPI", "on"),
        ("SECRET_KEY", " spaced "),
        ("ALLOWED_HOSTS", "A.com, .b.com,,"),
        ("TRUSTED_PROXY_HEADER", "X-Forwarded-For"),
        ("TRUSTED_PROXIES", "10.0.0.0/8"),
        ("TERN_REQUEST_ID_HEADER", "x-trace"),
        ("TERN_ACCESS_LOG", "1"),
        ("TERN_MAX_HEADERS", "7"),
        ("TERN_MAX_MULTIPART_FIELD_BYTES", "8"),
        ("TERN_MAX_MULTIPART_PARTS", "9"),
        ("TERN_MAX_FORM_FIELDS", "10"),
        ("TERN_MAX_FORM_DEPTH", "11"),
        ("TERN_MAX_CONNECTIONS", "12"),
        ("TERN_MAX_H2_STREAMS", "13"),
        ("TERN_TLS_CERT", "c.pem"),
        ("TERN_TLS_KEY", "k.pem"),
        ("TERN_WRITE_TIMEOUT", "1h"),
        ("TERN_SHUTDOWN_TIMEOUT", "1d"),
        ("TERN_MAX_BODY_BYTES", ""),
        ("TERN_HEALTH_PATH", "   "),
    ])
    .expect("valid");
    assert_eq!(c.addr.port(), 8080);
    assert!(c.is_production());
    assert!(c.security_headers, "on by default in production");
    assert_eq!(c.workers, 3);
    assert_eq!(c.runtime, RuntimeMode::PerCore);
    assert!(c.reuse_port);
    assert_eq!(c.http1, Http1Engine::Hyper);
    assert_eq!(c.invalid_responses, InvalidResponses::Fail);
    assert_eq!(c.openapi, Some(true));
    assert_eq!(
        c.secret_key.as_ref().map(SecretKey::as_bytes),
        Some(&b" spaced "[..])
    );
    let hosts: Vec<&str> = c.allowed_hosts.iter().map(HostPattern::as_str).collect();
    assert_eq!(hosts, ["a.com", ".b.com"]);
    assert_eq!(
        c.trusted_proxy_header.as_ref().map(HeaderName::as_str),
        Some("x-forwarded-for")
    );
    assert_eq!(c.trusted_proxies.len(), 1);
    assert_eq!(c.request_id_header, "x-trace");
    assert!(c.access_log);
    let l = &c.limits;
    assert_eq!(
        (
            l.max_headers,
            l.max_multipart_field_bytes,
            l.max_multipart_parts,
            l.max_form_fields
        ),
        (7, 8, 9, 10)
    );
    assert_eq!(
        (l.max_form_depth, l.max_connections, l.max_h2_streams),
        (11, 12, 13)
    );
    assert_eq!(
        l.max_body_bytes,
        Limits::default().max_body_bytes,
        "empty is unset"
    );
    assert_eq!(c.health_path.as_deref(), Some("/health"), "blank is unset");
    assert_eq!(
        c.tls,
        Some(TlsFiles {
            cert: "c.pem".into(),
            key: "k.pem".into()
        })
    );
    assert_eq!(c.timeouts.write, Duration::from_secs(3600));
    assert_eq!(c.timeouts.shutdown, Duration::from_secs(86_400));
    let c = Config::from_settings([("TERN_ENV", "production"), ("TERN_SECURITY_HEADERS", "off")])
        .expect("valid");
    assert!(!c.security_headers);
}
