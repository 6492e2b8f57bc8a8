//! HTTPS: rustls with ALPN (`h2`, `http/1.1`), behind the `tls` feature.

use std::sync::Arc;

use rustls_pki_types::{pem::PemObject, CertificateDer, PrivateKeyDer};
use tokio_rustls::TlsAcceptor;

use crate::config::{ConfigError, TlsFiles};

/// Loads the certificate chain and key, and builds the acceptor. Errors
/// name the setting whose file is wrong.
pub(crate) fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, ConfigError> {
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<_, _>>())
        .map_err(|e| {
            ConfigError::new(
                "TERN_TLS_CERT",
                format!(
                    "{} is not a readable PEM certificate chain: {e}",
                    files.cert.display()
                ),
            )
        })?;
    if certs.is_empty() {
        return Err(ConfigError::new(
            "TERN_TLS_CERT",
            format!("{} holds no certificate", files.cert.display()),
        ));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key).map_err(|e| {
        ConfigError::new(
            "TERN_TLS_KEY",
            format!(
                "{} is not a readable PEM private key: {e}",
                files.key.display()
            ),
        )
    })?;
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::new("TERN_TLS_CERT", format!("TLS setup failed: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| {
            ConfigError::new(
                "TERN_TLS_KEY",
                format!("the key does not fit the certificate, or is unsupported: {e}"),
            )
        })?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}
