#!/usr/bin/env python3
"""Whether a WebSocket echo server bounds a message sent in fragments.

Starts BINARY (env TERN_ADDR, as autobahn.py does; limits of 20 MiB per
message and per frame in WEBSOCKET_MAX_MESSAGE and _MAX_FRAME), sends one
binary message of three 8 MiB fragments (24 MiB: each frame under the
frame limit, the message over the message limit) and prints the answer: a
close with its code (1009: the limit holds) or the whole message echoed
(no bound on a fragmented message), and the server's peak RSS.
Loopback only; one connection.

usage: ws_fragment_limit.py BINARY
"""
import base64, os, socket, struct, subprocess, sys, time

LIMIT = 20 << 20
FRAGMENT = 8 << 20

binary = sys.argv[1]
with socket.socket() as s:
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
env = dict(os.environ, TERN_ADDR=f"127.0.0.1:{port}", TERN_WORKERS="1",
           WEBSOCKET_MAX_MESSAGE=str(LIMIT), WEBSOCKET_MAX_FRAME=str(LIMIT))
proc = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def frame(opcode, fin, payload):
    # Masked with the zero key, so the payload goes as it is.
    head = bytes([(0x80 if fin else 0) | opcode, 0x80 | 127]) + struct.pack(">Q", len(payload))
    return head + b"\0\0\0\0" + payload


try:
    deadline = time.time() + 20
    while True:
        try:
            conn = socket.create_connection(("127.0.0.1", port))
            break
        except OSError:
            if time.time() > deadline:
                raise
            time.sleep(0.1)
    key = base64.b64encode(os.urandom(16)).decode()
    conn.sendall(f"GET / HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                 f"Sec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n".encode())
    data = b""
    while b"\r\n\r\n" not in data:
        data += conn.recv(4096)
    head, _, data = data.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 101"), head
    fragment = b"\x5a" * FRAGMENT
    try:
        for opcode, fin in [(2, False), (0, False), (0, True)]:
            conn.sendall(frame(opcode, fin, fragment))
    except OSError as e:
        print(f"sending stopped: {e}")
    conn.settimeout(10)

    def need(n):
        global data
        while len(data) < n:
            chunk = conn.recv(1 << 20)
            if not chunk:
                raise EOFError("the connection ended")
            data += chunk

    try:
        need(2)
        opcode, length, start = data[0] & 0x0F, data[1] & 0x7F, 2
        if length == 126:
            need(4)
            length, start = struct.unpack(">H", data[2:4])[0], 4
        elif length == 127:
            need(10)
            length, start = struct.unpack(">Q", data[2:10])[0], 10
        if opcode == 8:
            need(start + length)
            code = struct.unpack(">H", data[start:start + 2])[0] if length >= 2 else None
            print(f"answer: close {code} {data[start + 2:start + length][:80]!r}")
        else:
            print(f"answer: opcode {opcode}, {length} bytes: the whole {3 * FRAGMENT}-byte message echoed")
    except (EOFError, OSError) as e:
        print(f"answer: none, the connection ended without a close ({e})")
    with open(f"/proc/{proc.pid}/status") as f:
        peak = next(int(line.split()[1]) for line in f if line.startswith("VmHWM:"))
    print(f"server peak RSS: {peak // 1024} MiB")
finally:
    proc.terminate()
    proc.wait(timeout=30)
