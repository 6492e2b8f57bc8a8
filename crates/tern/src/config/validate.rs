//! What a usable configuration is: the checks of [`Config::validate`]
//! (production's secret and hosts, TLS files, limits), how guessable a
//! `SECRET_KEY` may be, and the rules on single values that loading
//! applies as it reads them.

use std::path::PathBuf;

use super::{strength, Config, ConfigError, Environment, TlsFiles};

/// Values that appear in tutorials and templates: never a real secret.
pub(crate) const EXAMPLE_SECRETS: &[&str] = &[
    "changeme",
    "change-me",
    "change_me",
    "secret",
    "secret-key",
    "secret_key",
    "secretkey",
    "your-secret-key",
    "your_secret_key",
    "yoursecretkey",
    "mysecret",
    "my-secret-key",
    "development",
    "insecure",
    "password",
    "example",
    "test",
    "tern",
    "key",
    "your",
    "my",
    "replace-me",
    "please-change-me",
    "0123456789",
    "1234567890",
    "abcdefghijklmnopqrstuvwxyz",
];

pub(crate) const GENERATE_HINT: &str =
    "generate one with the app's `secret-key` command (`<app> secret-key`), or \
     `openssl rand -base64 48`";

impl Config {
    /// Checks the configuration before the server starts.
    ///
    /// In production: `SECRET_KEY` must be set, at least 32 bytes and not
    /// guessable (an estimated 128 bits: words, sequences and repeats
    /// count for little, see docs/configuration.md); `ALLOWED_HOSTS` must be
    /// set. In every environment, limits must be usable.
    pub fn validate(&self) -> Result<(), ConfigError> {
        if self.env == Environment::Production {
            let Some(key) = &self.secret_key else {
                return Err(ConfigError::new(
                    "SECRET_KEY",
                    format!(
                        "is not set; production needs at least 32 random bytes: {GENERATE_HINT}"
                    ),
                ));
            };
            check_secret(key.as_bytes())?;
            if self.allowed_hosts.is_empty() {
                return Err(ConfigError::new(
                    "ALLOWED_HOSTS",
                    "is not set; in production list the host names this server answers (e.g. `example.com,.example.com`), or `*` to allow any",
                ));
            }
            if self.metrics && self.metrics_token.is_none() {
                return Err(ConfigError::new(
                    "METRICS_TOKEN",
                    "is not set, and TERN_METRICS is on; in production the metrics need a token \
                     of at least 16 characters that the scraper sends as \
                     `Authorization: Bearer <token>` (or set TERN_METRICS=off)",
                ));
            }
        } else if let Some(key) = &self.secret_key {
            if key.as_bytes().len() < 32 {
                return Err(ConfigError::new(
                    "SECRET_KEY",
                    format!(
                        "is {} bytes; it must be at least 32: {GENERATE_HINT}",
                        key.as_bytes().len()
                    ),
                ));
            }
        }
        if let Some(files) = &self.tls {
            #[cfg(feature = "tls")]
            crate::tls::acceptor(files)?;
            #[cfg(not(feature = "tls"))]
            return Err(ConfigError::new(
                "TERN_TLS_CERT",
                format!(
                    "is set ({}), but this build of Tern has no TLS: enable the `tls` feature of the `tern` crate",
                    files.cert.display()
                ),
            ));
        }
        if let Some(cors) = &self.cors {
            #[cfg(not(feature = "cors"))]
            {
                let _ = cors;
                return Err(ConfigError::new(
                    "CORS_ALLOWED_ORIGINS",
                    "is set, but this build of Tern has no CORS: enable the `cors` feature of the `tern` crate",
                ));
            }
            #[cfg(feature = "cors")]
            if self.env == Environment::Production && cors.allow_credentials {
                use super::CorsList;
                for (any, name) in [
                    (
                        cors.allowed_origins == CorsList::Any,
                        "CORS_ALLOWED_ORIGINS",
                    ),
                    (
                        cors.allowed_methods == CorsList::Any,
                        "CORS_ALLOWED_METHODS",
                    ),
                    (
                        cors.allowed_headers == CorsList::Any,
                        "CORS_ALLOWED_HEADERS",
                    ),
                ] {
                    if any {
                        return Err(ConfigError::new(
                            "CORS_ALLOW_CREDENTIALS",
                            format!(
                                "is on with {name}=*: in production a page of any site could \
                                 call the app with its user's cookies; list what is allowed instead"
                            ),
                        ));
                    }
                }
            }
        }
        if self.limits.max_connections == 0 {
            return Err(ConfigError::new(
                "TERN_MAX_CONNECTIONS",
                "must be at least 1",
            ));
        }
        if self.limits.max_head_bytes < 8192 {
            return Err(ConfigError::new(
                "TERN_MAX_HEAD_BYTES",
                "must be at least 8192",
            ));
        }
        Ok(())
    }
}

pub(crate) fn check_secret(key: &[u8]) -> Result<(), ConfigError> {
    if key.len() < 32 {
        return Err(ConfigError::new(
            "SECRET_KEY",
            format!(
                "is {} bytes; production needs at least 32: {GENERATE_HINT}",
                key.len()
            ),
        ));
    }
    // Not only length and a deny-list: an estimate of the guesses the key
    // would take (words, sequences, repeats; see `strength`).
    let bits = strength::estimate_bits(key);
    if bits < strength::MIN_BITS {
        return Err(ConfigError::new(
            "SECRET_KEY",
            format!(
                "is guessable: about {bits:.0} bits by Tern's estimate (words, sequences, repeats), \
                 production needs {:.0}; use 32 random bytes: {GENERATE_HINT}",
                strength::MIN_BITS
            ),
        ));
    }
    Ok(())
}

/// `TERN_WORKERS`: a server needs a thread to serve on.
pub(super) fn workers(n: usize) -> Result<usize, String> {
    if n == 0 {
        return Err("must be at least 1".to_owned());
    }
    Ok(n)
}

/// `TERN_MAX_HEAD_BYTES`: hyper cannot read a head into less.
pub(super) fn max_head_bytes(n: usize) -> Result<usize, String> {
    if n < 8192 {
        return Err("must be at least 8192 (hyper's smallest read buffer)".to_owned());
    }
    Ok(n)
}

/// `TERN_MAX_FORM_DEPTH`: the form reader recurses once per level.
pub(super) fn max_form_depth(n: usize) -> Result<usize, String> {
    if n > 256 {
        return Err(
            "must be at most 256 (each level is a level of recursion when the form is read)"
                .to_owned(),
        );
    }
    Ok(n)
}

/// `TERN_TLS_CERT` and `TERN_TLS_KEY`: both or neither; the error names
/// the one missing.
pub(super) fn tls_files(
    cert: Option<PathBuf>,
    key: Option<PathBuf>,
) -> Result<Option<TlsFiles>, ConfigError> {
    match (cert, key) {
        (Some(cert), Some(key)) => Ok(Some(TlsFiles { cert, key })),
        (None, None) => Ok(None),
        (Some(_), None) => Err(ConfigError::new(
            "TERN_TLS_KEY",
            "is not set, but TERN_TLS_CERT is: HTTPS needs both",
        )),
        (None, Some(_)) => Err(ConfigError::new(
            "TERN_TLS_CERT",
            "is not set, but TERN_TLS_KEY is: HTTPS needs both",
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prod(secret: &str) -> Result<(), ConfigError> {
        Config::from_settings([
            ("TERN_ENV", "production"),
            ("SECRET_KEY", secret),
            ("ALLOWED_HOSTS", "example.com"),
        ])?
        .validate()
    }

    #[test]
    fn production_secrets() {
        let strong = "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ";
        assert!(prod(strong).is_ok());
        for weak in [
            "short",
            "changemechangemechangemechangeme",
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "your-secret-key-your-secret-key-yes",
            "01010101010101010101010101010101",
            // Attempts around the rules: a repeated pattern with enough
            // distinct bytes, an example phrase padded or in other case,
            // a sequence.
            "abcdefghabcdefghabcdefghabcdefgh",
            "0123456789abcdef0123456789abcdef",
            "CHANGEME-changeme-ChangeMe-12345678",
            "  secret  secret  secret  secret  secret ",
            "Kx9!Kx9!Kx9!Kx9!Kx9!Kx9!Kx9!Kx9!",
        ] {
            let err = prod(weak).expect_err(weak);
            assert_eq!(err.setting(), "SECRET_KEY", "{weak}");
        }
        let missing = Config::from_settings([("TERN_ENV", "production")])
            .and_then(|c| c.validate())
            .expect_err("missing");
        assert_eq!(missing.setting(), "SECRET_KEY");
        assert!(missing.to_string().contains("openssl rand"));
        // Taken as written: an empty key is refused, not ignored.
        let empty = Config::from_settings([("SECRET_KEY", "")])
            .and_then(|c| c.validate())
            .expect_err("empty");
        assert_eq!(
            empty.to_string(),
            format!("SECRET_KEY: is 0 bytes; it must be at least 32: {GENERATE_HINT}")
        );
    }

    #[test]
    fn production_needs_allowed_hosts() {
        let err = Config::from_settings([
            ("TERN_ENV", "production"),
            ("SECRET_KEY", "q7Vv2l1Xb9kP0sYz4TgH8mN3cR6wE5uJ"),
        ])
        .and_then(|c| c.validate())
        .expect_err("no hosts");
        assert_eq!(err.setting(), "ALLOWED_HOSTS");
    }
}
