#!/usr/bin/env python3
"""HTTP/2 (h2c) under load and floods, against a running Tern server.

1. h2load (Debian nghttp2-client) drives many streams per connection:
   every request must succeed.
2. Floods, each on its own connection with hand-built frames, while a
   probe request on another connection must keep being answered within
   1 s and the server's RSS must stay bounded:
   - rapid reset (CVE-2023-44487): HEADERS then RST_STREAM, 20,000 times;
   - CONTINUATION flood (CVE-2024-27316 class): one HEADERS without
     END_HEADERS, then CONTINUATION frames, 16 MiB in all;
   - SETTINGS flood: 100,000 SETTINGS frames, never reading the ACKs;
   - PING flood: 100,000 PINGs, never reading the answers;
   - a window that never opens: a request for a large body with a zero
     flow-control window (the server must not buffer without bound).
   Each flood must end with the server closing that connection (GOAWAY
   or a close) or, for floods the protocol allows, with the server having
   bounded the work; never with the server slowed for others.

usage: h2_floods.py HOST:PORT PID
"""
import argparse
import re
import socket
import struct
import subprocess
import sys
import threading
import time

from common import rss_kib

PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
DATA, HEADERS, RST_STREAM, SETTINGS, PING, GOAWAY, WINDOW_UPDATE, CONTINUATION = 0, 1, 3, 4, 6, 7, 8, 9
END_STREAM, END_HEADERS, ACK = 0x1, 0x4, 0x1


def frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def header_block(path=b"/"):
    # HPACK: :method GET (static 2), :scheme http (6), :path (literal,
    # name index 4), :authority (literal, name index 1).
    return b"\x82\x86" + b"\x04" + bytes([len(path)]) + path + b"\x01\x09localhost"


def probe_h1(addr):
    start = time.monotonic()
    with socket.create_connection(addr, timeout=5) as s:
        s.sendall(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        ok = s.recv(64).startswith(b"HTTP/1.1 200")
    return ok, time.monotonic() - start


def read_frames(sock, seconds):
    """Reads frames for up to `seconds`; returns (kinds seen, closed, GOAWAY error code)."""
    sock.settimeout(0.2)
    buf = b""
    kinds = {}
    goaway = None
    closed = False
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            continue
        except (ConnectionResetError, BrokenPipeError):
            closed = True
            break
        if not chunk:
            closed = True
            break
        buf += chunk
        while len(buf) >= 9:
            length = int.from_bytes(buf[:3], "big")
            if len(buf) < 9 + length:
                break
            kind = buf[3]
            kinds[kind] = kinds.get(kind, 0) + 1
            if kind == GOAWAY and length >= 8:
                goaway = int.from_bytes(buf[13:17], "big")
            buf = buf[9 + length:]
    return kinds, closed, goaway


def flood(addr, name, frames_iter, read_after=3.0, window=None):
    """Sends the flood's frames (stopping when the server closes), then
    reads what the server says."""
    s = socket.create_connection(addr, timeout=5)
    settings = frame(SETTINGS, 0, 0, b"" if window is None else struct.pack(">HI", 4, window))
    s.sendall(PREFACE + settings)
    sent = 0
    refused = False
    try:
        for chunk in frames_iter:
            s.sendall(chunk)
            sent += 1
    except (BrokenPipeError, ConnectionResetError, socket.timeout):
        refused = True
    kinds, closed, goaway = read_frames(s, read_after)
    s.close()
    return {"name": name, "sent": sent, "stopped_early": refused, "closed": closed or refused,
            "goaway": goaway, "frames": kinds}


def rapid_reset(n=20000):
    batch = b""
    for i in range(n):
        sid = 2 * i + 1
        batch += frame(HEADERS, END_HEADERS | END_STREAM, sid, header_block())
        batch += frame(RST_STREAM, 0, sid, struct.pack(">I", 8))  # CANCEL
        if i % 200 == 199:
            yield batch
            batch = b""
    if batch:
        yield batch


def continuation_flood(total=16 * 1024 * 1024, size=16384):
    yield frame(HEADERS, 0, 1, header_block())
    junk = b"\x40\x05x-pad" + b"\x7f\x81\x7f" + b"a" * (size - 10)  # literal header, long value
    for _ in range(total // size):
        yield frame(CONTINUATION, 0, 1, junk[:size])


def settings_flood(n=100000):
    one = frame(SETTINGS, 0, 0, struct.pack(">HI", 3, 100))
    for _ in range(n // 1000):
        yield one * 1000


def ping_flood(n=100000):
    one = frame(PING, 0, 0, b"12345678")
    for _ in range(n // 1000):
        yield one * 1000


def zero_window():
    # Asks for a large body, then never opens the window (initial 0).
    for i in range(200):
        yield frame(HEADERS, END_HEADERS | END_STREAM, 2 * i + 1, header_block(b"/big/1024"))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("pid", type=int)
    a = ap.parse_args()
    host, port = a.addr.rsplit(":", 1)
    addr = (host, int(port))
    failed = 0

    # 1. Many streams per connection.
    out = subprocess.run(["h2load", "-n", "200000", "-c", "16", "-m", "100",
                          f"http://{a.addr}/"], capture_output=True, text=True, timeout=300).stdout
    m = re.search(r"requests: (\d+) total, (\d+) started, (\d+) done, (\d+) succeeded, (\d+) failed, (\d+) errored, (\d+) timeout", out)
    if not m or int(m.group(4)) != 200000 or any(int(m.group(i)) for i in (5, 6, 7)):
        print(f"FAIL h2load -c16 -m100: {m.group(0) if m else out[-400:]}")
        failed += 1
    else:
        rps = re.search(r"finished in [^,]+, ([\d.]+) req/s", out)
        print(f"ok   h2load 200,000 requests, 16 connections x 100 streams: all succeeded "
              f"({float(rps.group(1)):,.0f} req/s)")

    # 2. Floods, with a probe beside them.
    # Memory each flood may take: the floods of control frames nothing
    # beyond noise; the zero window at most what the client asked for (200
    # answers of 1 MiB, held until the connection goes: the bound is
    # TERN_MAX_H2_STREAMS x the answer's size per connection), and all of
    # it must be released when the connection closes.
    noise = 64 * 1024
    for name, frames, window, bound in [
        ("rapid reset: 20,000 HEADERS + RST_STREAM", rapid_reset, None, noise),
        ("CONTINUATION flood: 16 MiB of CONTINUATION frames", continuation_flood, None, noise),
        ("SETTINGS flood: 100,000 frames, ACKs never read", settings_flood, None, noise),
        ("PING flood: 100,000 frames, answers never read", ping_flood, None, noise),
        ("zero window: 200 streams of 1 MiB, window never opened", zero_window, 0,
         200 * 1024 + noise),
    ]:
        before = rss_kib(a.pid)
        stop = threading.Event()
        probes = []

        def probe_loop():
            while not stop.is_set():
                try:
                    probes.append(probe_h1(addr))
                except OSError:
                    probes.append((False, 9.9))
                time.sleep(0.05)

        prober = threading.Thread(target=probe_loop)
        prober.start()
        res = flood(addr, name, frames(), window=window)
        stop.set()
        prober.join()
        peak = rss_kib(a.pid)
        time.sleep(0.5)
        after = rss_kib(a.pid)
        problems = []
        worst = max((t for _, t in probes), default=0)
        if not probes or not all(ok for ok, _ in probes):
            problems.append(f"probes failed: {sum(1 for ok, _ in probes if not ok)} of {len(probes)}")
        if worst > 1.0:
            problems.append(f"a probe took {worst * 1000:.0f} ms")
        if peak - before > bound:
            problems.append(f"RSS grew by {(peak - before) / 1024:.1f} MiB (bound {bound / 1024:.0f} MiB)")
        if after - before > 16 * 1024:
            problems.append(f"RSS stayed {(after - before) / 1024:.1f} MiB up after the connection closed")
        ends_ok = res["closed"] or res["goaway"] is not None
        if name.startswith(("rapid", "CONTINUATION")) and not ends_ok:
            problems.append("the connection was neither closed nor sent GOAWAY")
        goaway = {None: "none", 0: "NO_ERROR", 1: "PROTOCOL_ERROR", 6: "FRAME_SIZE_ERROR",
                  11: "ENHANCE_YOUR_CALM"}.get(res["goaway"], str(res["goaway"]))
        print(f"{'FAIL' if problems else 'ok  '} {name}: {res['sent']} writes"
              f"{' (server stopped reading)' if res['stopped_early'] else ''}, GOAWAY {goaway}, "
              f"closed {res['closed']}; probes {len(probes)}, worst {worst * 1000:.1f} ms; "
              f"RSS {before / 1024:.1f} -> {peak / 1024:.1f} -> {after / 1024:.1f} MiB")
        for p in problems:
            print(f"     {p}")
        failed += bool(problems)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
