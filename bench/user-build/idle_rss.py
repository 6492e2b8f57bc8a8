#!/usr/bin/env python3
"""RSS per idle keep-alive connection of several server binaries, measured
side by side in one run (Python's standard library only).

Each round starts every server afresh (the order rotates from round to
round), makes one warm-up request, reads its VmRSS, opens N HTTP/1.1
keep-alive connections that each get one answer to `GET PATH`, waits
half a second, reads VmRSS again and stops the server. The figure is
(after - before) / N, in KiB. This is the bench lab's method
(`tern-bench run --idle-connections`, crates/tern-bench/src/run.rs
`idle_rss`), with a fresh process per round so that rounds do not inherit
each other's heap.

usage: idle_rss.py [--connections N] [--rounds R] [--path /] NAME=BINARY[,VAR=VALUE...]...

A server named twice with different settings is measured as two servers
(`tern-hyper=BIN,TERN_HTTP1=hyper`): the settings go into its environment.

It replaces bench/scripts/idle_conn_rss.py (one binary, one round; the
figure of commit 90916a4): `idle_rss.py --rounds 1 --path /json tern=BINARY`.
Prints one line per measurement and a summary table (median, min, max);
exits non-zero when a server does not start or a request is not answered
200.
"""
import argparse
import os
import signal
import socket
import statistics
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def vm_rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for pid {pid}")


def read_answer(sock):
    """Reads one HTTP/1.1 answer (content-length or chunked); returns its
    status code."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("connection closed before the answer's head")
        buf += chunk
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    status = int(lines[0].split()[1])
    fields = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        fields[k.strip().lower()] = v.strip()
    if "content-length" in fields:
        want = int(fields["content-length"])
        while len(body) < want:
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed inside the body")
            body += chunk
    elif "chunked" in fields.get("transfer-encoding", ""):
        while not body.endswith(b"0\r\n\r\n"):
            chunk = sock.recv(65536)
            if not chunk:
                raise RuntimeError("connection closed inside the chunked body")
            body += chunk
    return status


def request(sock, path):
    sock.sendall(f"GET {path} HTTP/1.1\r\nhost: localhost\r\n\r\n".encode())
    return read_answer(sock)


def start(binary, port, log, extra=()):
    env = dict(os.environ)
    env.update(extra)
    env.update({
        "TERN_ADDR": f"127.0.0.1:{port}",
        "RUST_LOG": "warn",
        # Longer than any round: no connection may be closed for being idle
        # before the second reading.
        "TERN_KEEP_ALIVE_TIMEOUT": "600s",
    })
    proc = subprocess.Popen([binary], env=env, stdout=log, stderr=subprocess.STDOUT)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{binary} exited with {proc.returncode} (log: {log.name})")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return proc
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError(f"{binary} did not listen on {port} within 30 s (log: {log.name})")


def stop(proc):
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=15)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def measure(name, server, n, path, logdir):
    binary, extra = server
    port = free_port()
    with open(os.path.join(logdir, f"idle-{name}.log"), "a") as log:
        proc = start(binary, port, log, extra)
        conns = []
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as warm:
                status = request(warm, path)
                if status != 200:
                    raise RuntimeError(f"{name}: GET {path} answered {status}")
            time.sleep(0.2)
            before = vm_rss_kib(proc.pid)
            for _ in range(n):
                s = socket.create_connection(("127.0.0.1", port), timeout=10)
                conns.append(s)
                status = request(s, path)
                if status != 200:
                    raise RuntimeError(f"{name}: GET {path} answered {status}")
            time.sleep(0.5)
            after = vm_rss_kib(proc.pid)
        finally:
            for s in conns:
                s.close()
            stop(proc)
    return before, after


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--connections", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--path", default="/")
    ap.add_argument("--logdir", default=".")
    ap.add_argument("servers", nargs="+", metavar="NAME=BINARY[,VAR=VALUE...]")
    a = ap.parse_args()
    servers = []
    for s in a.servers:
        name, sep, rest = s.partition("=")
        binary, *settings = rest.split(",")
        extra = [v.partition("=")[::2] for v in settings]
        if not sep or not name or not os.access(binary, os.X_OK) or any(not k for k, _ in extra):
            ap.error(f"not NAME=BINARY[,VAR=VALUE...] with an executable binary: {s}")
        servers.append((name, (binary, extra)))
    if a.connections < 1 or a.rounds < 1:
        ap.error("--connections and --rounds must be at least 1")

    per = {name: [] for name, _ in servers}
    for r in range(a.rounds):
        order = servers[r % len(servers):] + servers[:r % len(servers)]
        for name, binary in order:
            try:
                before, after = measure(name, binary, a.connections, a.path, a.logdir)
            except (RuntimeError, OSError) as e:
                print(f"idle_rss: {name}, round {r + 1}: {e}", file=sys.stderr)
                sys.exit(1)
            kib = (after - before) / a.connections
            per[name].append(kib)
            print(f"round {r + 1} {name:8} VmRSS {before} -> {after} KiB: "
                  f"{kib:.2f} KiB per idle connection", flush=True)

    print(f"\nRSS per idle keep-alive connection, {a.connections} connections, "
          f"GET {a.path} once on each, {a.rounds} round(s), a fresh process per round:")
    print(f"| build | median KiB | min | max | rounds |")
    print(f"|---|--:|--:|--:|---|")
    for name, _ in servers:
        v = per[name]
        print(f"| {name} | {statistics.median(v):.1f} | {min(v):.1f} | {max(v):.1f} | "
              f"{', '.join(f'{x:.2f}' for x in v)} |")


if __name__ == "__main__":
    main()
