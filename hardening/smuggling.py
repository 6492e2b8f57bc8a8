#!/usr/bin/env python3
"""Request smuggling against a running Tern server (examples/hardening-target).

Each case sends, on one connection, a request with ambiguous or hostile
framing whose body hides a second request (`GET /smuggled`), then a normal
`GET /next`. The target names every request it serves in `x-seen`, so the
check sees exactly which requests the server believed it received:

- `/smuggled` must never be served;
- the ambiguous request gets a 4xx/5xx (and the connection closes), or is
  served as exactly one request whose body is the whole hidden part;
- nothing after a rejected request on the same connection is served.

Cases: CL.TE, TE.CL, TE.TE with obfuscated Transfer-Encoding (case,
whitespace, tabs, vertical tab, duplicated, comma lists, `chunked` not
last, obs-fold, bare LF), duplicated and conflicting Content-Length,
bodies after a 413, Expect: 100-continue refused, chunk-size overflow.

usage: smuggling.py HOST:PORT [--max-body N]
(--max-body is the target's TERN_MAX_BODY_BYTES, for the 413 cases.)
Exit status 1 on any violation.
"""
import argparse
import re
import socket
import sys
import time

SMUGGLED = b"GET /smuggled HTTP/1.1\r\nHost: localhost\r\n\r\n"
NEXT = b"GET /next HTTP/1.1\r\nHost: localhost\r\n\r\n"


def chunk(data):
    return b"%x\r\n" % len(data) + data + b"\r\n"


def cases(max_body):
    out = []

    def add(name, raw, body_is=None, pipelined=False, refused=False):
        # `pipelined`: the framing is unambiguous and ends before
        # SMUGGLED, which is then simply the next request on the connection
        # (pipelining, not smuggling): it may be served, after the first.
        # `refused`: some request on the connection must get a 400.
        out.append((name, raw, body_is, pipelined, refused))

    # CL.TE: a front end using Content-Length would forward SMUGGLED as part
    # of the body; one using Transfer-Encoding would see it as a new request.
    te_body = b"0\r\n\r\n" + SMUGGLED
    for te_line in [
        b"Transfer-Encoding: chunked",
        b"Transfer-Encoding: Chunked",
        b"Transfer-Encoding:  chunked",
        b"Transfer-Encoding:\tchunked",
        b"Transfer-Encoding: chunked ",
        b"Transfer-Encoding: xchunked",
        b"Transfer-Encoding: chunked, identity",
        b"Transfer-Encoding: identity, chunked",
        b"Transfer-Encoding: gzip, chunked",
        b"Transfer-Encoding: \x0bchunked",
        b"Transfer-Encoding : chunked",
        b"Transfer-encoding: chunked",
        b"Transfer-Encoding: chunked\r\nTransfer-Encoding: identity",
        b"Transfer-Encoding: identity\r\nTransfer-Encoding: chunked",
        b"Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked",
        b"X-Pad: x\r\n Transfer-Encoding: chunked",
        b"X-Pad: x\nTransfer-Encoding: chunked",
        b"Transfer-Encoding\r\n : chunked",
        b"Transfer-Encoding: \"chunked\"",
    ]:
        add(f"CL.TE [{te_line.decode('latin-1')!r}]",
            b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n" % len(te_body)
            + te_line + b"\r\n\r\n" + te_body)
        # Alone, a Transfer-Encoding Tern accepts frames an empty body and
        # SMUGGLED is the next request; one it does not accept must be
        # refused, never read as Content-Length-less.
        add(f"TE only [{te_line.decode('latin-1')!r}]",
            b"POST /a HTTP/1.1\r\nHost: localhost\r\n" + te_line + b"\r\n\r\n" + te_body,
            pipelined=True)
    # TE.CL: the chunked body contains SMUGGLED; a short Content-Length would
    # end the body early and expose it.
    chunked_body = chunk(SMUGGLED) + b"0\r\n\r\n"
    add("TE.CL", b"POST /a HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
        b"Content-Length: 4\r\n\r\n" + chunked_body, body_is=len(SMUGGLED))
    add("TE.CL (CL first)", b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 4\r\n"
        b"Transfer-Encoding: chunked\r\n\r\n" + chunked_body, body_is=len(SMUGGLED))
    # Content-Length games.
    add("CL.CL conflicting", b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0\r\n"
        b"Content-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED)
    add("CL.CL conflicting (long first)", b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n"
        b"Content-Length: 0\r\n\r\n" % len(SMUGGLED) + SMUGGLED)
    add("CL list", b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0, %d\r\n\r\n"
        % len(SMUGGLED) + SMUGGLED)
    add("CL plus sign", b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: +%d\r\n\r\n"
        % len(SMUGGLED) + SMUGGLED)
    add("CL hex", b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 0x%x\r\n\r\n"
        % len(SMUGGLED) + SMUGGLED)
    add("CL overflow", b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: 18446744073709551617\r\n\r\n"
        + SMUGGLED)
    # Chunk sizes that overflow or lie.
    add("chunk size overflow", b"POST /a HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"10000000000000001\r\nx\r\n0\r\n\r\n" + SMUGGLED)
    add("chunk size negative", b"POST /a HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"-1\r\nx\r\n0\r\n\r\n" + SMUGGLED)
    add("chunk data longer than size", b"POST /a HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"1\r\nxx\r\n0\r\n\r\n" + SMUGGLED)
    # A body over the limit: the 413 must close the connection, since the
    # unread body could hold anything.
    big = SMUGGLED + b"x" * (max_body + 100)
    add("413 then the rest of the body", b"POST /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n"
        % len(big) + big)
    bigc = chunk(SMUGGLED + b"x" * (max_body + 100)) + b"0\r\n\r\n"
    add("413 chunked then the rest", b"POST /a HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n" + bigc)
    # Expect: 100-continue with a body the server never asked for.
    add("expect 100-continue, body sent anyway", b"POST /a HTTP/1.1\r\nHost: localhost\r\nExpect: 100-continue\r\n"
        b"Content-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED, body_is=len(SMUGGLED))
    # A GET with a body: the body is not a request.
    add("GET with a body", b"GET /a HTTP/1.1\r\nHost: localhost\r\nContent-Length: %d\r\n\r\n"
        % len(SMUGGLED) + SMUGGLED)
    # Two Host headers, then a request.
    add("two Host headers", b"GET /a HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n" + SMUGGLED)
    # Bare LFs (issue 9): a front end that does not end lines at a bare LF
    # reads one header where httparse reads two; Tern refuses them all (400,
    # closed), so nothing after them is served.
    add("bare LF in request line", b"GET /a HTTP/1.1\nHost: localhost\r\n\r\n" + SMUGGLED, refused=True)
    add("bare LF hides Content-Length", b"GET /a HTTP/1.1\r\nHost: localhost\r\nX: y\n"
        b"Content-Length: %d\r\n\r\n" % len(SMUGGLED) + SMUGGLED, refused=True)
    add("bare LF hides Transfer-Encoding", b"POST /a HTTP/1.1\r\nHost: localhost\r\n"
        b"Content-Length: %d\r\nX: y\nTransfer-Encoding: chunked\r\n\r\n" % len(te_body) + te_body, refused=True)
    add("bare LF ends the head", b"GET /a HTTP/1.1\r\nHost: localhost\r\n\n" + SMUGGLED, refused=True)
    add("bare LF in a trailer", b"POST /a HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
        b"1\r\nx\r\n0\r\nX-T: 1\nContent-Length: 5\r\n\r\n" + SMUGGLED, refused=True)
    add("bare LF in a pipelined second head", b"GET /a HTTP/1.1\r\nHost: localhost\r\n\r\n"
        b"GET /a HTTP/1.1\r\nHost: localhost\nX: y\r\n\r\n" + SMUGGLED, refused=True)
    return out


STATUS = re.compile(rb"HTTP/1\.[01] (\d{3})")


def exchange(addr, raw):
    """Sends raw then NEXT; returns [(status, seen)] and whether it closed."""
    with socket.create_connection(addr, timeout=2) as s:
        try:
            s.sendall(raw)
            time.sleep(0.05)
            s.sendall(NEXT)
        except (BrokenPipeError, ConnectionResetError):
            pass
        buf = b""
        closed = False
        deadline = time.monotonic() + 2.0
        s.settimeout(0.5)
        while time.monotonic() < deadline:
            try:
                data = s.recv(65536)
            except socket.timeout:
                break
            except ConnectionResetError:
                closed = True
                break
            if not data:
                closed = True
                break
            buf += data
    responses = []
    while True:
        end = buf.find(b"\r\n\r\n")
        if end < 0:
            break
        head = buf[:end]
        m = STATUS.match(head)
        if not m:
            responses.append((-1, "garbage"))
            break
        text = head.decode("latin-1")
        seen = re.search(r"\r\nx-seen: ([^\r]*)", text, re.I)
        length = re.search(r"\r\ncontent-length: *(\d+)", text, re.I)
        n = int(length.group(1)) if length else 0
        body = buf[end + 4:end + 4 + n]
        responses.append((int(m.group(1)), seen.group(1) if seen else None, body))
        buf = buf[end + 4 + n:]
    return responses, closed


def judge(name, responses, closed, body_is, pipelined, refused=False):
    seen = [r[1] for r in responses if r[1]]
    problems = []
    if refused and not any(r[0] == 400 for r in responses):
        problems.append(f"expected a 400, got {[r[0] for r in responses]}")
    if pipelined:
        # Served in order as separate requests, or refused.
        if "GET /smuggled" in seen and seen[:2] != [seen[0], "GET /smuggled"]:
            problems.append(f"served the second request out of order: {seen}")
    elif any(s and "/smuggled" in s for s in seen):
        problems.append("served the smuggled request")
    if responses and responses[0][0] == -1:
        problems.append("sent a malformed response")
    first = responses[0][0] if responses else None
    if first is not None and first >= 400:
        # Rejected: nothing after it may be served on this connection.
        if any(r[1] for r in responses[1:]):
            problems.append(f"served a request after rejecting one ({first})")
        if not closed:
            problems.append(f"kept the connection open after rejecting ({first})")
    elif first is not None and 200 <= first < 300:
        if responses[0][1] != "POST /a" and responses[0][1] != "GET /a":
            problems.append(f"the first answer was for {responses[0][1]}")
        if body_is is not None and responses[0][2] != b"read %d bytes" % body_is:
            problems.append(f"read the body as {responses[0][2]!r}, expected {body_is} bytes")
    elif first is None and not closed:
        problems.append("neither answered nor closed")
    outcome = ("rejected %d" % first if first and first >= 400 else
               "served %s" % ", ".join(s for s in seen) if seen else
               "closed without an answer" if closed else "no answer")
    return problems, outcome


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("--max-body", type=int, default=2 * 1024 * 1024)
    a = ap.parse_args()
    host, port = a.addr.rsplit(":", 1)
    addr = (host, int(port))
    failures = 0
    all_cases = cases(a.max_body)
    for name, raw, body_is, pipelined, refused in all_cases:
        responses, closed = exchange(addr, raw)
        problems, outcome = judge(name, responses, closed, body_is, pipelined, refused)
        mark = "FAIL" if problems else "ok  "
        print(f"{mark} {name}: {outcome}{' — ' + '; '.join(problems) if problems else ''}")
        failures += bool(problems)
    print(f"{len(all_cases)} smuggling cases, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
