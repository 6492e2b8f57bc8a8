#![allow(clippy::unwrap_used, missing_docs)]
mod common;
use hyper_util::{
    rt::{TokioExecutor, TokioIo, TokioTimer},
    server::conn::auto,
};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

async fn probe(addr: std::net::SocketAddr, bytes: &[u8]) {
    let mut s = tokio::net::TcpStream::connect(addr).await.unwrap();
    s.write_all(bytes).await.unwrap();
    let mut buf = vec![0u8; 65536];
    for _ in 0..2 {
        match tokio::time::timeout(Duration::from_millis(300), s.read(&mut buf)).await {
            Ok(Ok(n)) => println!("read {n}: {:?}", String::from_utf8_lossy(&buf[..n])),
            Ok(Err(e)) => println!("err {e}"),
            Err(_) => println!("quiet"),
        }
    }
}

fn connection_builder(config: &tern::Config, variant: u32) -> auto::Builder<TokioExecutor> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .timer(TokioTimer::new())
        .header_read_timeout(config.timeouts.header_read)
        .keep_alive(true)
        .max_buf_size(config.limits.max_head_bytes)
        .max_headers(config.limits.max_headers)
        .pipeline_flush(variant != 1);
    if variant != 2 {
        builder
            .http2()
            .timer(TokioTimer::new())
            .max_concurrent_streams(config.limits.max_h2_streams)
            .max_header_list_size(u32::try_from(config.limits.max_head_bytes).unwrap_or(u32::MAX))
            .max_pending_accept_reset_streams(Some(64))
            .max_local_error_reset_streams(Some(256));
    }
    if variant == 3 {
        builder.http1().header_read_timeout(None);
    }
    builder
}

#[tokio::test]
async fn probe_hyper() {
    for variant in 0..4 {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        tokio::spawn(async move {
            let config = common::config();
            let builder = Arc::new(connection_builder(&config, variant));
            let limit = Arc::new(tokio::sync::Semaphore::new(config.limits.max_connections));
            let (_stop_tx, stop_rx) = tokio::sync::watch::channel(false);
            loop {
                let (stream, _) = listener.accept().await.unwrap();
                let Ok(permit) = Arc::clone(&limit).try_acquire_owned() else {
                    continue;
                };
                let _ = stream.set_nodelay(true);
                let appsvc = tern::App::new()
                    .route("/", tern::routing::get(|| async { "ok" }))
                    .build_with(common::config())
                    .unwrap();
                let svc =
                    hyper::service::service_fn(move |req: http::Request<hyper::body::Incoming>| {
                        let f = appsvc
                            .call(req.map(|b| tern::body::Body::from_incoming(b, 1000)), None);
                        async move { Ok::<_, std::convert::Infallible>(f.await) }
                    });
                let builder = Arc::clone(&builder);
                let mut stop = stop_rx.clone();
                let keep_alive = config.timeouts.keep_alive;
                tokio::spawn(async move {
                    let conn = builder.serve_connection_with_upgrades(TokioIo::new(stream), svc);
                    tokio::pin!(conn);
                    let mut closing = false;
                    let deadline = tokio::time::Instant::now() + keep_alive;
                    loop {
                        tokio::select! {
                            r = conn.as_mut() => { println!("conn done {r:?}"); break },
                            _ = stop.wait_for(|s| *s), if !closing && false => {
                                conn.as_mut().graceful_shutdown();
                                closing = true;
                            }
                            () = tokio::time::sleep_until(deadline), if !closing && false => {
                                    conn.as_mut().graceful_shutdown();
                                    closing = true;
                            }
                        }
                    }
                    drop(permit);
                });
            }
        });
        println!("variant {variant}");
        probe(addr, b"GET / HTTP/9.9\r\nHost: x\r\n\r\n").await;
    }
}
