"""What the hardening checks share: ports, starting a target, its memory,
and the one-line verdict each check prints."""
import os
import socket
import subprocess
import sys
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start(binary, port, **env):
    """Starts `binary` on 127.0.0.1:`port` with extra settings and waits
    until it accepts connections. Its output is discarded (never a pipe
    nobody reads, which would stall a server that logs)."""
    e = dict(os.environ, TERN_ADDR=f"127.0.0.1:{port}", RUST_LOG="error", **env)
    p = subprocess.Popen([binary], env=e, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return p
        except OSError:
            time.sleep(0.05)
    p.kill()
    sys.exit(f"{binary} did not start on port {port}")


def report(name, problems, summary):
    """Prints a check's verdict; True when it failed."""
    print(f"{'FAIL' if problems else 'ok  '} {name}: {summary}")
    for p in problems:
        print(f"     {p}")
    return bool(problems)
