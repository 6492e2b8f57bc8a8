#!/usr/bin/env python3
"""Graceful restart and shutdown with nothing lost.

1. Restart under load: wrk drives the target; a second instance starts on
   the same port (both with TERN_REUSE_PORT=true, which sets SO_REUSEPORT;
   without it the second would refuse to start, the address being in
   use); the first gets SIGTERM and drains. wrk
   must see no non-2xx answer and no socket error other than refused
   connections, the old process must exit 0, and the new one must serve
   afterwards. With `net.ipv4.tcp_migrate_req=1` (set here when the kernel
   allows it), connections still queued on the old socket move to the new
   one; without it they would be reset.
2. Shutdown with work in flight: a slow upload (a body sent over about two
   seconds) and a slow download (a large body read in small pieces) are in
   progress when the server gets SIGTERM; both must complete (the upload
   answered 200 with the right length, the download whole), and the
   process must exit 0 once they are done, within its shutdown timeout.

usage: restart.py BINARY [--seconds 8]
"""
import argparse
import re
import signal
import socket
import subprocess
import sys
import threading
import time

from common import free_port, report, start


def migrate_requests():
    path = "/proc/sys/net/ipv4/tcp_migrate_req"
    try:
        with open(path, "w") as f:
            f.write("1")
        return "on"
    except OSError as e:
        return f"unavailable ({e.strerror})"


def restart_under_load(binary, seconds):
    port = free_port()
    # Port sharing is opt-in: both instances ask for it.
    old = start(binary, port, TERN_REUSE_PORT="true")
    wrk = subprocess.Popen(["wrk", "-t1", "-c32", f"-d{seconds}s", f"http://127.0.0.1:{port}/"],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    time.sleep(seconds / 4)
    new = start(binary, port, TERN_REUSE_PORT="true")
    time.sleep(0.5)
    # `start` returns as soon as the port answers, which the old instance
    # does: the new one must still be running, i.e. it did bind.
    if new.poll() is not None:
        old.kill()
        wrk.kill()
        return [f"the new instance exited with {new.returncode} instead of sharing the port"], \
            "the restart could not begin"
    old.send_signal(signal.SIGTERM)
    try:
        old_rc = old.wait(timeout=40)
    except subprocess.TimeoutExpired:
        old.kill()
        old_rc = "did not exit"
    out, _ = wrk.communicate(timeout=seconds + 30)
    problems = []
    requests = int(re.search(r"(\d+) requests in", out).group(1))
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    connect, read, write, timeout = map(int, errors.groups()) if errors else (0, 0, 0, 0)
    if non2xx:
        problems.append(f"{non2xx.group(1)} non-2xx answers")
    if read or write or timeout:
        problems.append(f"socket errors: read {read}, write {write}, timeout {timeout}")
    if old_rc != 0:
        problems.append(f"the old process exited with {old_rc}")
    # The new instance serves on its own now.
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=2) as s:
            s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
            if not s.recv(64).startswith(b"HTTP/1.1 200"):
                problems.append("the new instance did not answer 200")
    except OSError as e:
        problems.append(f"the new instance did not answer: {e}")
    new.send_signal(signal.SIGTERM)
    new.wait(timeout=40)
    summary = (f"{requests} requests under wrk -c32; old instance exit {old_rc}; "
               f"refused connections {connect}; read/write/timeout errors {read}/{write}/{timeout}; "
               f"non-2xx {non2xx.group(1) if non2xx else 0}")
    return problems, summary


def slow_upload(port, size, seconds, result):
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.sendall(b"POST /upload HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size)
            pieces = 20
            for i in range(pieces):
                s.sendall(b"u" * (size // pieces))
                time.sleep(seconds / pieces)
            s.sendall(b"u" * (size - (size // pieces) * pieces))
            data = b""
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
                if data.count(b"\r\n\r\n") and data.endswith(b"bytes"):
                    break
            result["upload"] = data
    except OSError as e:
        result["upload"] = f"error: {e}".encode()


def slow_download(port, kib, seconds, result):
    started = time.monotonic()
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 16384)
            s.sendall(b"GET /big/%d HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n" % kib)
            data = b""
            step = max(kib * 1024 // 40, 4096)
            while True:
                chunk = s.recv(step)
                if not chunk:
                    break
                data += chunk
                time.sleep(seconds / 40)
            result["download"] = data
            result["download_s"] = time.monotonic() - started
    except OSError as e:
        result["download"] = f"error: {e}".encode()


def shutdown_with_work_in_flight(binary):
    port = free_port()
    server = start(binary, port, TERN_SHUTDOWN_TIMEOUT="20s", TERN_REQUEST_TIMEOUT="20s")
    result = {}
    size, kib = 512 * 1024, 8 * 1024
    threads = [threading.Thread(target=slow_upload, args=(port, size, 2.0, result)),
               threading.Thread(target=slow_download, args=(port, kib, 2.0, result))]
    for t in threads:
        t.start()
    time.sleep(0.5)
    began = time.monotonic()
    server.send_signal(signal.SIGTERM)
    for t in threads:
        t.join(timeout=30)
    try:
        rc = server.wait(timeout=30)
    except subprocess.TimeoutExpired:
        server.kill()
        rc = "did not exit"
    took = time.monotonic() - began
    problems = []
    up = result.get("upload", b"")
    if not (up.startswith(b"HTTP/1.1 200") and up.endswith(b"read %d bytes" % size)):
        problems.append(f"the upload was not answered whole: {up[:80]!r}...{up[-40:]!r}")
    down = result.get("download", b"")
    head_end = down.find(b"\r\n\r\n")
    body = down[head_end + 4:] if head_end >= 0 else b""
    if not down.startswith(b"HTTP/1.1 200") or len(body) != kib * 1024:
        problems.append(f"the download got {len(body)} of {kib * 1024} bytes")
    if rc != 0:
        problems.append(f"the server exited with {rc}")
    up_ok = up.startswith(b"HTTP/1.1 200") and up.endswith(b"read %d bytes" % size)
    summary = (f"a {size // 1024} KiB upload sent over 2 s and an {kib // 1024} MiB download read slowly "
               f"(took {result.get('download_s', 0):.1f} s) were in flight at SIGTERM: upload "
               f"{'answered whole' if up_ok else 'CUT'}, download {len(body)} of {kib * 1024} bytes; "
               f"the server exited {rc} {took:.1f} s after SIGTERM (shutdown timeout 20 s)")
    return problems, summary


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("--seconds", type=int, default=8)
    a = ap.parse_args()
    print(f"tcp_migrate_req: {migrate_requests()}")
    failed = 0
    for name, run in [("restart under load", lambda: restart_under_load(a.binary, a.seconds)),
                      ("shutdown with work in flight", lambda: shutdown_with_work_in_flight(a.binary))]:
        failed += report(name, *run())
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
