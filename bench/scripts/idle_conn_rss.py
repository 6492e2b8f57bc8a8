#!/usr/bin/env python3
"""RSS per idle keep-alive connection of a server binary.

Starts the server (env TERN_ADDR), opens N connections that each complete
one request and stay open, and reports (RSS after - RSS before) / N from
/proc/PID/status. Loopback only; bounded in count and time.

usage: idle_conn_rss.py BINARY [N] [PATH]
"""
import os, resource, socket, subprocess, sys, time

binary = sys.argv[1]
n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
path = sys.argv[3] if len(sys.argv) > 3 else "/json"
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
want = min(hard, n + 1024)
resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))

with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
env = dict(os.environ, TERN_ADDR=f"127.0.0.1:{port}", TERN_WORKERS="1",
           TERN_KEEP_ALIVE_TIMEOUT="300s", TERN_HEADER_READ_TIMEOUT="300s")
proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard)))

def rss_kib():
    with open(f"/proc/{proc.pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError("no VmRSS")

def request(sock):
    sock.sendall(f"GET {path} HTTP/1.1\r\nHost: localhost\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            raise RuntimeError("closed")
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int([l for l in head.split(b"\r\n") if l.lower().startswith(b"content-length:")][0].split(b":")[1])
    while len(body) < length:
        body += sock.recv(65536)
    assert head.startswith(b"HTTP/1.1 200"), head

try:
    deadline = time.time() + 20
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1) as s:
                request(s)
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)
    # Warm up allocator pools with the same number of short-lived connections.
    for _ in range(200):
        with socket.create_connection(("127.0.0.1", port)) as s:
            request(s)
    time.sleep(0.5)
    before = rss_kib()
    socks = []
    for _ in range(n):
        s = socket.create_connection(("127.0.0.1", port))
        request(s)
        socks.append(s)
    time.sleep(1.0)
    after = rss_kib()
    print(f"connections={n} rss_before_kib={before} rss_after_kib={after} "
          f"per_connection_kib={(after - before) / n:.2f}")
    for s in socks:
        s.close()
finally:
    proc.terminate()
    proc.wait(timeout=30)
