//! [`Socket`] over a real TCP pair and over an in-memory pipe: waiting
//! holds no buffer, a read takes what is there, the end reads as 0.

use std::{future::poll_fn, time::Duration};

use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};

use super::*;

/// Whether `socket` becomes ready within a short wait.
async fn ready_soon<S: Socket>(socket: &mut S) -> bool {
    tokio::time::timeout(
        Duration::from_millis(100),
        poll_fn(|cx| socket.poll_read_ready(cx)),
    )
    .await
    .map(|r| r.unwrap())
    .is_ok()
}

/// Whether nothing comes to read: not ready within a short wait, or
/// ready spuriously (a new socket may be: the first reactor event) but a
/// read would block, and then not ready again.
async fn nothing_comes<S: Socket>(socket: &mut S) -> bool {
    for _ in 0..2 {
        if !ready_soon(socket).await {
            return true;
        }
        match socket.try_read_buf(&mut BytesMut::new()) {
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            Err(e) => panic!("{e}"),
            Ok(_) => return false,
        }
    }
    false
}

/// Waits for readiness, then reads; again on a spurious readiness.
async fn read_some<S: Socket>(socket: &mut S, buf: &mut BytesMut) -> usize {
    loop {
        poll_fn(|cx| socket.poll_read_ready(cx)).await.unwrap();
        match socket.try_read_buf(buf) {
            Ok(n) => return n,
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("{e}"),
        }
    }
}

/// The same story for any socket: nothing to read (not ready, and a read
/// would block), bytes (ready, read whole, appended), the end (0).
async fn the_story<S: Socket, P: AsyncWrite + Unpin>(socket: &mut S, mut peer: P) {
    assert!(nothing_comes(socket).await, "bytes with nothing sent");
    let mut buf = BytesMut::new();
    match socket.try_read_buf(&mut buf) {
        Err(e) => assert_eq!(e.kind(), io::ErrorKind::WouldBlock),
        Ok(n) => panic!("read {n} bytes of nothing"),
    }

    peer.write_all(b"GET / HTTP/1.1\r\n").await.unwrap();
    peer.flush().await.unwrap();
    let mut buf = take_read();
    let mut got = 0;
    while got < 16 {
        got += read_some(socket, &mut buf).await;
    }
    assert_eq!(&buf[..], b"GET / HTTP/1.1\r\n");

    // A second read appends to what the buffer holds.
    peer.write_all(b"host: x\r\n\r\n").await.unwrap();
    peer.flush().await.unwrap();
    while buf.len() < 27 {
        read_some(socket, &mut buf).await;
    }
    assert_eq!(&buf[..], b"GET / HTTP/1.1\r\nhost: x\r\n\r\n");
    assert!(
        nothing_comes(socket).await,
        "bytes after everything was read"
    );

    peer.shutdown().await.unwrap();
    drop(peer);
    let mut end = BytesMut::with_capacity(64);
    assert_eq!(read_some(socket, &mut end).await, 0);
    assert!(end.is_empty());
}

#[tokio::test]
async fn over_tcp() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (mut server, _) = listener.accept().await.unwrap();
    the_story(&mut server, client).await;
}

/// A read over TCP that takes less than the room it had drained the
/// socket: the readiness is cleared with it, so waiting again costs no
/// read that says `EAGAIN` (one system call per request fewer, measured
/// with `perf stat` on the bench peer). More bytes make it ready again,
/// and a read that fills its room leaves it ready.
#[tokio::test]
async fn a_short_read_over_tcp_leaves_the_socket_not_ready() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let mut client = tokio::net::TcpStream::connect(listener.local_addr().unwrap())
        .await
        .unwrap();
    let (mut server, _) = listener.accept().await.unwrap();
    let noop = &mut Context::from_waker(Waker::noop());
    for round in 0..4 {
        client.write_all(b"GET / HTTP/1.1\r\n\r\n").await.unwrap();
        assert!(ready_soon(&mut server).await, "round {round}");
        let mut buf = BytesMut::with_capacity(4096);
        // The trait's read (the inherent `TcpStream::try_read_buf` is
        // what it replaced).
        assert_eq!(
            Socket::try_read_buf(&mut server, &mut buf).unwrap(),
            18,
            "round {round}"
        );
        assert!(
            server.poll_read_ready(noop).is_pending(),
            "round {round}: still ready after a read that drained the socket"
        );
    }
    // A read that fills its room: the socket may hold more, and says so.
    client.write_all(&[b'x'; 100]).await.unwrap();
    assert!(ready_soon(&mut server).await);
    let mut buf = BytesMut::with_capacity(10);
    let room = buf.capacity();
    assert_eq!(Socket::try_read_buf(&mut server, &mut buf).unwrap(), room);
    assert!(server.poll_read_ready(noop).is_ready());
}

#[tokio::test]
async fn over_an_in_memory_pipe() {
    let (client, server) = tokio::io::duplex(1024);
    let mut server = Buffered::new(server);
    the_story(&mut server, client).await;
    assert!(matches!(server.held, Held::End));
}

#[tokio::test]
async fn an_idle_buffered_socket_holds_no_buffer() {
    let (_client, server) = tokio::io::duplex(1024);
    let mut server = Buffered::new(server);
    assert!(!ready_soon(&mut server).await);
    assert!(matches!(server.held, Held::Nothing));
    // The buffer it read into went back to this thread's pool.
    let pooled = super::super::POOL.with(|p| p.borrow().read.len());
    assert_eq!(pooled, 1);
}

#[tokio::test]
async fn bytes_read_while_waiting_are_handed_over_without_a_copy() {
    let (mut client, server) = tokio::io::duplex(1024);
    let mut server = Buffered::new(server);
    client.write_all(b"hello").await.unwrap();
    poll_fn(|cx| server.poll_read_ready(cx)).await.unwrap();
    let Held::Bytes(held) = &server.held else {
        panic!("nothing held: {:?}", server.held);
    };
    let at = held.as_ptr();
    let mut buf = BytesMut::new();
    assert_eq!(server.try_read_buf(&mut buf).unwrap(), 5);
    assert_eq!((&buf[..], buf.as_ptr()), (&b"hello"[..], at));

    // Into a buffer that holds bytes already: appended.
    client.write_all(b", world").await.unwrap();
    assert_eq!(read_some(&mut server, &mut buf).await, 7);
    assert_eq!(&buf[..], b"hello, world");
}

#[tokio::test]
async fn a_buffered_socket_still_reads_and_writes_as_a_stream() {
    let (mut client, server) = tokio::io::duplex(1024);
    let mut server = Buffered::new(server);
    client.write_all(b"upgrade, then frames").await.unwrap();
    poll_fn(|cx| server.poll_read_ready(cx)).await.unwrap();
    // Held bytes come first through AsyncRead, then the stream's own.
    let mut first = [0u8; 7];
    server.read_exact(&mut first).await.unwrap();
    assert_eq!(&first, b"upgrade");
    let (inner, held) = server.into_inner();
    assert_eq!(&held[..], b", then frames");
    let mut server = Buffered::new(inner);
    server.write_all(b"101").await.unwrap();
    let mut answer = [0u8; 3];
    client.read_exact(&mut answer).await.unwrap();
    assert_eq!(&answer, b"101");
    client.write_all(b"!").await.unwrap();
    drop(client);
    let mut rest = Vec::new();
    server.read_to_end(&mut rest).await.unwrap();
    assert_eq!(rest, b"!");
}

/// A TLS pair over TCP on localhost, with a self-signed certificate.
#[cfg(feature = "tls")]
async fn tls_pair() -> (
    tokio_rustls::server::TlsStream<tokio::net::TcpStream>,
    tokio_rustls::client::TlsStream<tokio::net::TcpStream>,
) {
    use std::sync::Arc;

    use rustls_pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer, ServerName};

    let key = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
    let cert = key.cert.der().clone();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let server_config = rustls::ServerConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(
            vec![cert.clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.signing_key.serialize_der())),
        )
        .unwrap();
    let mut roots = rustls::RootCertStore::empty();
    roots.add(cert).unwrap();
    let client_config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let tcp = tokio::net::TcpStream::connect(listener.local_addr().unwrap());
    let (tcp, accepted) = tokio::join!(tcp, listener.accept());
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(server_config));
    let connector = tokio_rustls::TlsConnector::from(Arc::new(client_config));
    let name = ServerName::try_from("localhost").unwrap();
    let (client, server) = tokio::join!(
        connector.connect(name, tcp.unwrap()),
        acceptor.accept(accepted.unwrap().0)
    );
    (server.unwrap(), client.unwrap())
}

#[cfg(feature = "tls")]
#[tokio::test]
async fn over_tls() {
    let (mut server, client) = tls_pair().await;
    the_story(&mut server, client).await;
}

/// rustls decrypts a whole record (up to 16 KiB) at once: what a small
/// buffer did not take stays in rustls, and must read as ready although
/// the TCP socket has nothing more.
#[cfg(feature = "tls")]
#[tokio::test]
async fn over_tls_plaintext_left_in_rustls_is_ready() {
    let (mut server, mut client) = tls_pair().await;
    let sent: Vec<u8> = (0..40_000u32).map(|i| (i % 251) as u8).collect();
    client.write_all(&sent).await.unwrap();
    client.flush().await.unwrap();
    let mut got = Vec::new();
    while got.len() < sent.len() {
        let mut small = BytesMut::with_capacity(512);
        let n = tokio::time::timeout(Duration::from_secs(5), read_some(&mut server, &mut small))
            .await
            .expect("bytes rustls holds are ready");
        assert!(n > 0 && n <= 512);
        got.extend_from_slice(&small);
    }
    assert_eq!(got, sent);
}
