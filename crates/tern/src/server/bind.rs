//! The listening socket.

use std::{io, net::SocketAddr};

/// Binds a listening socket on `addr`.
///
/// An address another socket already listens on is an error
/// (`AddrInUse`), as with every other server: a second app started on
/// the same port by mistake must not split the first one's requests with
/// it. The per-core runtime does not need the port twice: it binds once
/// and gives each worker a duplicate of this socket (`try_clone`).
///
/// With `reuse_port` (`TERN_REUSE_PORT`, on Unix) the socket is opened
/// with `SO_REUSEPORT`, so that a new process can take the port over
/// while the old one drains (a restart without refused connections). The
/// kernel then shares the port only among sockets that all set it and
/// belong to the same user. With the sysctl `net.ipv4.tcp_migrate_req=1`,
/// connections still queued on the old process's socket when it closes
/// move to the new one instead of being reset (`docs/hardening.md`).
pub(super) fn bind(addr: SocketAddr, reuse_port: bool) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // On Unix, `SO_REUSEADDR` only lets a restart bind while the old
    // process's connections sit in TIME_WAIT; it never lets two sockets
    // listen on one port. On Windows it would (port hijacking): not there.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    #[cfg(unix)]
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    #[cfg(not(unix))]
    if reuse_port {
        return Err(io::Error::new(
            io::ErrorKind::Unsupported,
            "TERN_REUSE_PORT needs SO_REUSEPORT, which this platform does not have",
        ));
    }
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}
