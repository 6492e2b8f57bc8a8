#!/usr/bin/env python3
"""Instructions per request of a real server over a real socket (callgrind).

Runs a peer binary under `valgrind --tool=callgrind`, drives it with wrk for
a fixed time, stops it with SIGTERM and divides the instructions the run
added over an idle run (start, no requests, stop; the median of three) by
the requests wrk completed. Deterministic enough to compare servers and commits on this
noisy machine, where wall-clock figures are not; callgrind slows the server
about 50x, so this counts work, not speed.

usage: server_instructions.py BINARY [PATH] [--seconds S] [--connections C]
example: bench/scripts/server_instructions.py bench/peers/target/release/peer-tern /user/42
"""
import argparse, os, re, signal, socket, subprocess, sys, tempfile, time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def run(binary, path, seconds, connections):
    port = free_port()
    out = tempfile.mktemp(prefix="tern-cg-", suffix=".out")
    env = dict(os.environ, BENCH_ADDR=f"127.0.0.1:{port}")
    server = subprocess.Popen(
        ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = server.stdout.readline()
    if "listening" not in line:
        server.kill()
        sys.exit(f"{binary} did not start: {line!r}")
    requests = 0
    if seconds == 0:
        # Let the server finish starting: a SIGTERM that comes before it
        # has set up its signal handler kills it at once, without the
        # graceful shutdown (and the teardown of its app) that ends every
        # loaded run (seen: peer-tern's idle runs at 67M instructions
        # against 83M, ~16M that were then counted as the requests').
        time.sleep(2)
    else:
        wrk = subprocess.run(
            ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", f"http://127.0.0.1:{port}{path}"],
            capture_output=True, text=True, check=True)
        m = re.search(r"(\d+) requests in", wrk.stdout)
        requests = int(m.group(1))
        if "Non-2xx" in wrk.stdout or "Socket errors" in wrk.stdout:
            sys.exit(f"wrk saw errors:\n{wrk.stdout}")
    server.send_signal(signal.SIGTERM)
    server.wait(timeout=120)
    text = open(out).read()
    os.unlink(out)
    total = int(re.search(r"^(?:totals|summary): (\d+)", text, re.M).group(1))
    return total, requests


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("binary")
    ap.add_argument("path", nargs="?", default="/plaintext")
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--connections", type=int, default=16)
    a = ap.parse_args()
    # The idle run (start, wait, stop) is the median of three, and the
    # three must agree: a run that differs from the others (a server
    # stopped before its start-up ended, see `run`) would put its
    # difference on the requests.
    idles = sorted(run(a.binary, a.path, 0, a.connections)[0] for _ in range(3))
    idle = idles[1]
    if idles[2] - idles[0] > idles[1] // 100:
        sys.exit(f"the idle runs disagree by more than 1%: {idles}")
    total, n = run(a.binary, a.path, a.seconds, a.connections)
    print(f"{os.path.basename(a.binary)} {a.path}: {n} requests, "
          f"{(total - idle) / n:,.0f} instructions per request "
          f"(callgrind, wrk -c{a.connections}, idle runs {', '.join(f'{i:,}' for i in idles)})")


if __name__ == "__main__":
    main()
