#!/usr/bin/env python3
"""Connection floods: many keep-alive connections held, then the limit.

1. Held: opens N connections to a target started with the default
   `TERN_MAX_CONNECTIONS` (10,000), each completing one request, holds
   them, checks a probe is still answered, and records the server's RSS
   before and with them (per connection).
2. Over the limit: a target started with `TERN_MAX_CONNECTIONS=LIMIT`
   gets LIMIT + EXTRA connections: the first LIMIT are served, the extra
   ones are closed at accept (a clean EOF or reset, never a hang); memory
   stays bounded; once they all go, new connections are served again.

The file-descriptor limit is raised for this process (and for the server
by hardening/run.sh, `ulimit -n`); docs/configuration.md tells users how.

usage: flood.py BINARY [--connections 10000] [--limit 1000 --extra 500]
"""
import argparse
import resource
import selectors
import signal
import socket
import sys
import time

from common import free_port, report, rss_kib, start

REQUEST = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"


def open_many(port, n, timeout=20.0):
    """Opens n connections and sends one request on each; returns
    (served, refused, pending) socket lists after reading their answers."""
    sel = selectors.DefaultSelector()
    socks = []
    served, refused = [], []
    for i in range(n):
        s = socket.socket()
        s.setblocking(False)
        try:
            s.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        socks.append(s)
        sel.register(s, selectors.EVENT_WRITE, {"state": "connecting", "buf": b""})
        if i % 500 == 499:
            drive(sel, 0.05, served, refused)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and sel.get_map():
        drive(sel, 0.2, served, refused)
    pending = [k.fileobj for k in list(sel.get_map().values())]
    for s in pending:
        sel.unregister(s)
    return served, refused, pending


def drive(sel, wait, served, refused):
    for key, events in sel.select(wait):
        s, data = key.fileobj, key.data
        if data["state"] == "connecting":
            try:
                s.send(REQUEST)
                data["state"] = "sent"
                sel.modify(s, selectors.EVENT_READ, data)
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                sel.unregister(s)
                refused.append(s)
        else:
            try:
                chunk = s.recv(4096)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                chunk = b""
            if not chunk:
                sel.unregister(s)
                refused.append(s)
                continue
            data["buf"] += chunk
            if b"\r\n\r\n" in data["buf"] and data["buf"].endswith(b"ok"):
                sel.unregister(s)
                served.append(s)


def probe(port):
    start_t = time.monotonic()
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        ok = s.recv(64).startswith(b"HTTP/1.1 200")
    return ok, time.monotonic() - start_t


def held(binary, n):
    port = free_port()
    # Room for the probe above the held connections.
    server = start(binary, port, TERN_MAX_CONNECTIONS=str(n + 100))
    time.sleep(0.3)
    before = rss_kib(server.pid)
    served, refused, pending = open_many(port, n)
    time.sleep(1.0)
    during = rss_kib(server.pid)
    ok, latency = probe(port)
    problems = []
    if len(served) != n:
        problems.append(f"{len(served)} of {n} connections served ({len(refused)} closed, {len(pending)} pending)")
    if not ok:
        problems.append("the probe was not answered while the connections were held")
    for s in served + refused + pending:
        s.close()
    server.send_signal(signal.SIGTERM)
    rc = server.wait(timeout=60)
    if rc != 0:
        problems.append(f"exit {rc}")
    per = (during - before) / max(len(served), 1)
    return problems, (f"{len(served)} keep-alive connections held; RSS {before / 1024:.1f} MiB -> "
                      f"{during / 1024:.1f} MiB ({per:.1f} KiB per connection); probe answered in "
                      f"{latency * 1000:.1f} ms")


def over_limit(binary, limit, extra):
    port = free_port()
    server = start(binary, port, TERN_MAX_CONNECTIONS=str(limit))
    time.sleep(0.3)
    before = rss_kib(server.pid)
    served, refused, pending = open_many(port, limit + extra)
    during = rss_kib(server.pid)
    problems = []
    if len(served) != limit:
        problems.append(f"{len(served)} served, expected exactly the limit {limit}")
    if len(refused) != extra:
        problems.append(f"{len(refused)} closed at accept, expected {extra}")
    if pending:
        problems.append(f"{len(pending)} connections neither served nor closed (a hang)")
    for s in served + refused + pending:
        s.close()
    time.sleep(1.0)
    # Recovery: the slots are free again.
    again, again_refused, again_pending = open_many(port, limit)
    if len(again) != limit:
        problems.append(f"after the flood, {len(again)} of {limit} new connections served")
    for s in again + again_refused + again_pending:
        s.close()
    after = rss_kib(server.pid)
    server.send_signal(signal.SIGTERM)
    rc = server.wait(timeout=60)
    if rc != 0:
        problems.append(f"exit {rc}")
    return problems, (f"limit {limit}, {limit + extra} connections: {len(served)} served, {len(refused)} closed "
                      f"at accept, {len(pending)} hung; then {len(again)} of {limit} served again; RSS "
                      f"{before / 1024:.1f} -> {during / 1024:.1f} -> {after / 1024:.1f} MiB")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--connections", type=int, default=10000)
    ap.add_argument("--limit", type=int, default=1000)
    ap.add_argument("--extra", type=int, default=500)
    a = ap.parse_args()
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = a.connections + 1024
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(want, hard), hard))
    failed = 0
    for name, run in [("held", lambda: held(a.binary, a.connections)),
                      ("over the limit", lambda: over_limit(a.binary, a.limit, a.extra))]:
        failed += report(name, *run())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
