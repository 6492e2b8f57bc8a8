//! HTTPS (the `tls` feature): HTTP/2 and HTTP/1.1 chosen by ALPN over a
//! real TLS handshake, and startup errors that name the TLS setting.
#![cfg(feature = "tls")]
#![allow(clippy::unwrap_used, missing_docs)]

mod common;

use std::{path::PathBuf, sync::Arc};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rustls_pki_types::{pem::PemObject, CertificateDer, ServerName};
use tern::{config::TlsFiles, routing::get, App};
use tokio::net::TcpStream;

struct Cert {
    files: TlsFiles,
    pem: String,
}

fn self_signed(dir: &str) -> Cert {
    let dir = std::env::temp_dir().join(format!("tern-tls-{dir}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let key = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let (cert, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, key.cert.pem()).unwrap();
    std::fs::write(&key_path, key.signing_key.serialize_pem()).unwrap();
    Cert {
        files: TlsFiles {
            cert,
            key: key_path,
        },
        pem: key.cert.pem(),
    }
}

async fn connect(
    addr: std::net::SocketAddr,
    pem: &str,
    alpn: &[&[u8]],
) -> tokio_rustls::client::TlsStream<TcpStream> {
    let mut roots = rustls::RootCertStore::empty();
    roots
        .add(CertificateDer::from_pem_slice(pem.as_bytes()).unwrap())
        .unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = TcpStream::connect(addr).await.unwrap();
    connector
        .connect(ServerName::try_from("localhost").unwrap(), tcp)
        .await
        .unwrap()
}

fn app() -> App {
    App::new()
        .route(
            "/",
            get(|v: http::Version| async move { format!("hello over {v:?}") }),
        )
        .route(
            "/scheme",
            get(|s: tern::extract::Scheme| async move { s.as_str() }),
        )
}

#[tokio::test]
async fn alpn_chooses_http2_or_http11() {
    let cert = self_signed("alpn");
    let mut config = common::config();
    config.tls = Some(cert.files.clone());
    let server = common::spawn_with(app(), config).await;

    let tls = connect(server.addr, &cert.pem, &[b"h2", b"http/1.1"]).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"h2"[..]));
    let (mut sender, conn) =
        hyper::client::conn::http2::handshake(TokioExecutor::new(), TokioIo::new(tls))
            .await
            .unwrap();
    tokio::spawn(conn);
    let req = http::Request::get("https://localhost/")
        .body(Full::<Bytes>::default())
        .unwrap();
    let res = sender.send_request(req).await.unwrap();
    assert_eq!(res.version(), http::Version::HTTP_2);
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "hello over HTTP/2.0");

    let tls = connect(server.addr, &cert.pem, &[b"http/1.1"]).await;
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tls))
        .await
        .unwrap();
    tokio::spawn(conn);
    let req = http::Request::get("/")
        .header("host", "localhost")
        .body(Full::<Bytes>::default())
        .unwrap();
    let res = sender.send_request(req).await.unwrap();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "hello over HTTP/1.1");
    // HTTP/1.1 names no scheme: the connection is TLS, so `https` (what
    // the CSRF and WebSocket origin checks compare an `Origin` with).
    let req = http::Request::get("/scheme")
        .header("host", "localhost")
        .body(Full::<Bytes>::default())
        .unwrap();
    let res = sender.send_request(req).await.unwrap();
    let body = res.into_body().collect().await.unwrap().to_bytes();
    assert_eq!(body, "https");

    // A plain-text request on the TLS port gets no HTTP answer.
    let raw = common::raw(
        server.addr,
        b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
        std::time::Duration::from_secs(2),
    )
    .await;
    assert!(!raw.starts_with(b"HTTP/1.1 200"));
    server.shutdown().await;
}

#[test]
fn bad_tls_files_name_the_setting() {
    let cert = self_signed("bad");
    let mut config = tern::Config::default();
    config.tls = Some(TlsFiles {
        cert: PathBuf::from("/nonexistent/cert.pem"),
        key: cert.files.key.clone(),
    });
    assert_eq!(config.validate().unwrap_err().setting(), "TERN_TLS_CERT");
    config.tls = Some(TlsFiles {
        cert: cert.files.cert.clone(),
        key: cert.files.cert.clone(),
    });
    assert_eq!(config.validate().unwrap_err().setting(), "TERN_TLS_KEY");
    let other = self_signed("other");
    config.tls = Some(TlsFiles {
        cert: cert.files.cert.clone(),
        key: other.files.key,
    });
    assert_eq!(config.validate().unwrap_err().setting(), "TERN_TLS_KEY");
    config.tls = Some(cert.files);
    config.validate().unwrap();
}
