//! The listening socket.

use std::{io, net::SocketAddr};

/// Binds a listening socket with `SO_REUSEPORT` (on Unix): the per-core
/// workers share the port, and a new process can take the port over while
/// the old one drains (a restart without refused connections; Linux lets
/// only the same user share a port this way). With the sysctl
/// `net.ipv4.tcp_migrate_req=1`, connections still queued on the old
/// process's socket when it closes move to the new one instead of being
/// reset (`docs/hardening.md`).
pub(super) fn bind(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    use socket2::{Domain, Protocol, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    #[cfg(unix)]
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(4096)?;
    Ok(socket.into())
}
