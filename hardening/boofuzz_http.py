#!/usr/bin/env python3
"""boofuzz mutating HTTP/1.1 requests over a real socket, bounded.

A grammar of request line, headers (Host, Content-Type, Content-Length,
Transfer-Encoding, a cookie, a custom header) and a body; boofuzz mutates
one element at a time (strings, delimiters, numbers) for CASES test cases.
After every case a probe request on a fresh connection must get a 200
within 1 s: a case after which the server stops answering is a failure,
written out as a regression case. The server's process must still be
alive at the end.

usage: boofuzz_http.py HOST:PORT PID [--cases 1500]
"""
import argparse
import io
import os
import socket
import sys
import time

from boofuzz import (FuzzLoggerText, Request, Session, Target, TCPSocketConnection, Block,
                     Delim, Group, Static, String, Size)

failures = []
DB = "target/hardening-boofuzz/boofuzz.db"


def probe(addr):
    try:
        with socket.create_connection(addr, timeout=1) as s:
            s.settimeout(1)
            s.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
            return s.recv(64).startswith(b"HTTP/1.1 200")
    except OSError:
        return False


def grammar():
    return Request("http", children=(
        Group(name="method", values=["GET", "POST", "PUT", "HEAD", "OPTIONS", "DELETE"]),
        Delim(name="sp1", default_value=" "),
        String(name="path", default_value="/items/7"),
        Static(name="q", default_value="?"),
        String(name="query", default_value="a=1&tag[]=x"),
        Delim(name="sp2", default_value=" "),
        String(name="version", default_value="HTTP/1.1"),
        Static(name="crlf1", default_value="\r\n"),
        Static(name="host-name", default_value="Host"),
        Delim(name="colon1", default_value=":"),
        Delim(name="sp3", default_value=" "),
        String(name="host", default_value="localhost"),
        Static(name="crlf2", default_value="\r\n"),
        Static(name="ct-name", default_value="Content-Type"),
        Delim(name="colon2", default_value=":"),
        String(name="content-type", default_value=" application/json"),
        Static(name="crlf3", default_value="\r\n"),
        String(name="te-name", default_value="X-Trace"),
        Delim(name="colon3", default_value=":"),
        String(name="te", default_value=" 1"),
        Static(name="crlf4", default_value="\r\n"),
        Static(name="cookie-name", default_value="Cookie: "),
        String(name="cookie", default_value="session=abc; theme=dark"),
        Static(name="crlf5", default_value="\r\n"),
        Static(name="cl-name", default_value="Content-Length: "),
        Size(name="cl", block_name="body", output_format="ascii", fuzzable=True),
        Static(name="crlf6", default_value="\r\n\r\n"),
        Block(name="body", children=(
            String(name="json", default_value='{"name":"tea","tags":["a","b"]}'),
        )),
    ))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("pid", type=int)
    ap.add_argument("--cases", type=int, default=1500)
    a = ap.parse_args()
    host, port = a.addr.rsplit(":", 1)
    addr = (host, int(port))

    def after_case(target, fuzz_data_logger, session, sock, *args, **kwargs):
        if not probe(addr):
            time.sleep(0.5)
            if not probe(addr):
                failures.append((session.total_mutant_index, session.last_send))

    log = io.StringIO()
    # One run per file: boofuzz appends to an existing database.
    if os.path.exists(DB):
        os.remove(DB)
    session = Session(
        target=Target(connection=TCPSocketConnection(host, int(port), send_timeout=2.0, recv_timeout=0.3)),
        index_end=a.cases,
        web_port=None,
        keep_web_open=False,
        fuzz_loggers=[FuzzLoggerText(file_handle=log)],
        post_test_case_callbacks=[after_case],
        receive_data_after_each_request=True,
        ignore_connection_reset=True,
        ignore_connection_aborted=True,
        crash_threshold_request=10**9,
        crash_threshold_element=10**9,
        # boofuzz's own record of the run (every case sent), under target/
        # with the other artefacts; by default it would land in
        # ./boofuzz-results/ in the source tree.
        db_filename=DB,
    )
    session.connect(grammar())
    started = time.monotonic()
    session.fuzz()
    took = time.monotonic() - started
    alive = os.path.exists(f"/proc/{a.pid}") and probe(addr)
    cases = session.total_mutant_index
    print(f"{'ok  ' if not failures and alive else 'FAIL'} boofuzz {cases} cases in {took:.0f} s; "
          f"server alive and answering: {alive}; cases after which it stopped answering: {len(failures)}")
    os.makedirs("target/hardening-boofuzz", exist_ok=True)
    for i, (index, data) in enumerate(failures[:20]):
        path = f"target/hardening-boofuzz/case-{index}.bin"
        with open(path, "wb") as f:
            f.write(data or b"")
        print(f"     case {index} written to {path}")
    sys.exit(0 if not failures and alive else 1)


if __name__ == "__main__":
    main()
