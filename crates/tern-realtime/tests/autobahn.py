#!/usr/bin/env python3
"""The Autobahn WebSocket cases (kosoku) against an echo server.

    autobahn.py KOSOKU SERVER_BINARY [OUT_DIR]

Starts SERVER_BINARY (a Tern app echoing on every path, as
examples/websocket does) on a free port, runs every case except the
permessage-deflate ones (12.*, 13.*: no compression is offered, so
kosoku reports them UNIMPLEMENTED), prints the count of each verdict and
fails on any FAILED case or when fewer cases ran than expected.
"""
import collections
import json
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    kosoku, binary = sys.argv[1], sys.argv[2]
    out = sys.argv[3] if len(sys.argv) > 3 else "target/autobahn"
    port = free_port()
    env = dict(os.environ)
    env.update(
        TERN_ADDR=f"127.0.0.1:{port}",
        # Case 9.* sends messages and frames of up to 16 MiB.
        WEBSOCKET_MAX_MESSAGE=str(20 * 1024 * 1024),
        WEBSOCKET_MAX_FRAME=str(20 * 1024 * 1024),
    )
    server = subprocess.Popen([binary], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        deadline = time.time() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if server.poll() is not None or time.time() > deadline:
                    sys.exit(f"the echo server did not start: {server.stderr.read().decode()}")
                time.sleep(0.1)
        run = subprocess.run(
            [kosoku, "-o", out, "-p", "2", "-x", "12.*", "-x", "13.*", f"127.0.0.1:{port}"],
            capture_output=True,
            text=True,
            timeout=1200,
        )
    finally:
        server.terminate()
        server.wait(timeout=20)
    with open(os.path.join(out, "index.json")) as f:
        index = json.load(f)
    verdicts = collections.Counter()
    failed = []
    for cases in index.values():
        for case, result in cases.items():
            verdicts[result["behavior"]] += 1
            if result["behavior"] == "FAILED" or result.get("behaviorClose") == "FAILED":
                failed.append((case, result))
    total = sum(verdicts.values())
    print(f"autobahn (kosoku): {total} cases: " + ", ".join(f"{k} {v}" for k, v in sorted(verdicts.items())))
    if failed:
        for case, result in failed:
            print(f"  FAILED {case}: {result}")
        sys.exit(f"{len(failed)} Autobahn cases FAILED")
    if total < 300:
        sys.exit(f"only {total} cases ran:\n{run.stdout[-2000:]}\n{run.stderr[-2000:]}")


if __name__ == "__main__":
    main()
