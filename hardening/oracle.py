#!/usr/bin/env python3
"""llhttp as an oracle for Tern's HTTP/1.1 parsing.

Generates several thousand raw requests (valid ones, then mutations of
request lines, header names and values, Content-Length and
Transfer-Encoding combinations, chunk sizes and extensions, obs-fold, bare
CR and LF, NULs, overlong fields), asks llhttp (Node's parser, strict
mode) whether each is one valid request, sends each on its own connection
to a running Tern server, and checks:

- every request llhttp rejects gets a 4xx/5xx or a closed connection from
  Tern, never a 2xx (unless the case is in the allowlist, with its reason);
- every request llhttp accepts gets a 2xx (unless allowlisted);
- Tern never answers more requests than llhttp parsed (no request is read
  as two: the smuggling property).

usage: oracle.py HOST:PORT [--cases N] [--seed S] [--report FILE]
The target must answer 2xx to any GET/HEAD/DELETE/OPTIONS and to any
POST/PUT/PATCH with any body (examples/hardening-target does).
Exit status 1 on any violation; the report lists every case.
"""
import argparse
import concurrent.futures
import json
import random
import re
import socket
import sys
import time

import llhttp

from allowlist import excuse

TIMEOUT = 0.6


class Counting(llhttp.Request):
    """llhttp in strict mode (no lenient flag set), counting requests."""

    def __init__(self):
        super().__init__()
        self.messages = 0

    def on_message_complete(self):
        self.messages += 1


def llhttp_verdict(raw):
    """(state, messages, error): state is 'valid' (the bytes are exactly
    `messages` complete requests), 'invalid' (an error after `messages`
    complete requests) or 'incomplete' (the last request is unfinished)."""
    parser = Counting()
    try:
        parser.execute(raw)
    except llhttp.Error as e:
        return "invalid", parser.messages, f"{type(e).__name__}: {e}"
    if ends_at_boundary(raw, parser.messages):
        return "valid", parser.messages, ""
    return "incomplete", parser.messages, ""


PROBE = b"GET /probe HTTP/1.1\r\nHost: x\r\n\r\n"


def ends_at_boundary(raw, messages):
    """Whether `raw` ends exactly after its `messages` requests: a complete
    request appended to it must then parse as one more."""
    if messages == 0:
        return False
    parser = Counting()
    try:
        parser.execute(raw + PROBE)
    except llhttp.Error:
        return False
    return parser.messages == messages + 1


STATUS = re.compile(rb"HTTP/1\.[01] (\d{3}) ")


REQUEST_LINE = re.compile(rb"(?:^|\n)([!#$%&'*+\-.^_`|~0-9A-Za-z]+) [^ \r\n]+ HTTP/")

# Statuses that mean "this is not a request I can parse or frame"; any other
# (404, 405, ...) means the request was parsed and routed.
REJECT = {400, 411, 413, 414, 431, 501, 505}


def read_responses(sock, want, heads=()):
    """Reads responses until `want` complete ones, EOF or a quiet timeout.
    Returns (statuses, closed)."""
    buf = b""
    statuses = []
    closed = False
    deadline = time.monotonic() + TIMEOUT * 3
    while time.monotonic() < deadline:
        # parse complete responses out of buf
        while True:
            head_end = buf.find(b"\r\n\r\n")
            if head_end < 0:
                break
            m = STATUS.match(buf)
            if not m:
                return statuses + [-1], closed  # garbage from the server
            head = buf[:head_end].decode("latin-1").lower()
            lm = re.search(r"\r\ncontent-length: *(\d+)", head)
            length = int(lm.group(1)) if lm else 0
            if len(statuses) < len(heads) and heads[len(statuses)]:
                length = 0  # the answer to a HEAD request has no body
            if len(buf) < head_end + 4 + length:
                break
            statuses.append(int(m.group(1)))
            buf = buf[head_end + 4 + length:]
        if want and len(statuses) >= want:
            break
        sock.settimeout(TIMEOUT)
        try:
            chunk = sock.recv(65536)
        except socket.timeout:
            break
        except ConnectionResetError:
            closed = True
            break
        if not chunk:
            closed = True
            break
        buf += chunk
    return statuses, closed


def send(addr, raw, want):
    # Which of the requests are HEAD (their answers carry no body).
    heads = [m.group(1) == b"HEAD" for m in REQUEST_LINE.finditer(raw)]
    with socket.create_connection(addr, timeout=2) as s:
        try:
            s.sendall(raw)
        except (BrokenPipeError, ConnectionResetError):
            return [], True
        return read_responses(s, want, heads)


# ---------------------------------------------------------------- generation

BASE = [
    (b"GET", b"/", b"", []),
    (b"GET", b"/a/b?x=1&y=2", b"", []),
    (b"HEAD", b"/", b"", []),
    (b"DELETE", b"/items/7", b"", []),
    (b"POST", b"/echo", b"hello", [(b"Content-Type", b"text/plain")]),
    (b"PUT", b"/items/7", b'{"a":1}', [(b"Content-Type", b"application/json")]),
]


def build(method=b"GET", target=b"/", version=b"HTTP/1.1", headers=None, body=b"",
          sep=b"\r\n", line_sep=b" "):
    headers = headers if headers is not None else [(b"Host", b"localhost")]
    out = method + line_sep + target + line_sep + version + sep
    for name, value in headers:
        out += name + b": " + value + sep
    return out + sep + body


def cl_headers(body, extra=()):
    return [(b"Host", b"localhost"), (b"Content-Length", str(len(body)).encode())] + list(extra)


def chunked(body, size_fmt="{:x}", ext=b"", sep=b"\r\n", last=b"0"):
    out = b""
    if body:
        out += size_fmt.format(len(body)).encode() + ext + sep + body + sep
    return out + last + sep + sep


def generate(rng, n):
    cases = []

    def add(category, raw):
        cases.append({"category": category, "raw": raw})

    # Valid requests, in many shapes.
    for method, target, body, extra in BASE:
        headers = [(b"Host", b"localhost")] + extra
        if body:
            headers.append((b"Content-Length", str(len(body)).encode()))
        add("valid", build(method, target, headers=headers, body=body))
        if body:
            add("valid.chunked", build(method, target, headers=[(b"Host", b"localhost"),
                (b"Transfer-Encoding", b"chunked")] + extra, body=chunked(body)))
    add("valid.http10", build(version=b"HTTP/1.0", headers=[]))
    add("valid.two_pipelined", build() + build(target=b"/second"))
    add("valid.absolute_form", build(target=b"http://localhost/abs"))
    add("valid.many_headers", build(headers=[(b"Host", b"localhost")] +
        [(b"X-H%d" % i, b"v%d" % i) for i in range(50)]))
    add("valid.header_value_tab", build(headers=[(b"Host", b"localhost"), (b"X-A", b"a\tb")]))
    add("valid.empty_header_value", build(headers=[(b"Host", b"localhost"), (b"X-A", b"")]))
    add("valid.chunk_extension", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Transfer-Encoding", b"chunked")], body=chunked(b"abc", ext=b";name=value")))

    # Request line.
    for m in [b"G ET", b"GET\x00", b"", b"GE(T", b"\x7fGET", b"get", b"PRI", b"GET\t"]:
        add("line.method", build(method=m))
    for t in [b"", b"/a b", b"/\x00", b"/\x7f", b"/%", b"/\xff", b"*", b"//", b"/a#frag",
              b"/" + b"a" * 70000]:
        add("line.target", build(target=t))
    for v in [b"HTTP/1.2", b"HTTP/2.0", b"HTTP/1", b"http/1.1", b"HTTP/1.1 ", b"HTTP/01.1",
              b"HTTP/1.1x", b"HTTPS/1.1", b""]:
        add("line.version", build(version=v))
    add("line.tab_separator", build(line_sep=b"\t"))
    add("line.double_space", build(line_sep=b"  "))
    add("line.leading_crlf", b"\r\n" + build())
    add("line.bare_lf_line_end", b"GET / HTTP/1.1\nHost: localhost\r\n\r\n")

    # Header names.
    for name in [b"Bad Name", b"Bad\x00", b"", b"B@d(", b"X-\x7f", b" X-Lead", b"X-A ",
                 b"X-\xff", b"X:Colon", b"\tX-Tab"]:
        add("header.name", build(headers=[(b"Host", b"localhost"), (name, b"v")]))
    add("header.space_before_colon", b"GET / HTTP/1.1\r\nHost: localhost\r\nX-A : v\r\n\r\n")
    add("header.no_colon", b"GET / HTTP/1.1\r\nHost: localhost\r\nNoColon\r\n\r\n")
    add("header.overlong_name", build(headers=[(b"Host", b"localhost"), (b"X" * 70000, b"v")]))

    # Header values.
    for v in [b"a\x00b", b"a\rb", b"a\nb", b"a\x7fb", b"\x01", b"a\x1fb", b"\xff\xfe"]:
        add("header.value_ctl", build(headers=[(b"Host", b"localhost"), (b"X-A", v)]))
    add("header.obs_fold", b"GET / HTTP/1.1\r\nHost: localhost\r\nX-A: a\r\n b\r\n\r\n")
    add("header.obs_fold_tab", b"GET / HTTP/1.1\r\nHost: localhost\r\nX-A: a\r\n\tb\r\n\r\n")
    add("header.overlong_value", build(headers=[(b"Host", b"localhost"), (b"X-A", b"v" * 70000)]))
    add("header.bare_cr_end", b"GET / HTTP/1.1\r\nHost: localhost\rX-A: v\r\n\r\n")
    add("header.bare_lf_end", b"GET / HTTP/1.1\r\nHost: localhost\nX-A: v\r\n\r\n")
    add("header.too_many", build(headers=[(b"Host", b"localhost")] +
        [(b"X-H%d" % i, b"v") for i in range(500)]))

    # Content-Length.
    body = b"hello"
    for v in [b"5, 5", b"+5", b"-5", b"0x5", b"5 5", b"05", b" 5", b"5\t", b"99999999999999999999999",
              b"", b"abc", b"5.0"]:
        add("cl.value", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
            (b"Content-Length", v)], body=body))
    add("cl.duplicate_same", build(b"POST", b"/echo", headers=cl_headers(body, [(b"Content-Length", b"5")]), body=body))
    add("cl.duplicate_different", build(b"POST", b"/echo", headers=cl_headers(body, [(b"Content-Length", b"6")]), body=body + b"X"))
    add("cl.shorter_than_body", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Content-Length", b"3")], body=body))
    add("cl.get_with_body", build(b"GET", b"/", headers=cl_headers(body), body=body))

    # Transfer-Encoding.
    cbody = chunked(body)
    for te in [b"chunked", b"Chunked", b"CHUNKED", b" chunked", b"chunked ", b"\tchunked",
               b"chunked, chunked", b"gzip, chunked", b"chunked, gzip", b"identity",
               b"gzip", b"xchunked", b"chunked\x00", b"chu nked", b"", b"chunked;q=1"]:
        add("te.value", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
            (b"Transfer-Encoding", te)], body=cbody))
    add("te.duplicate", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Transfer-Encoding", b"chunked"), (b"Transfer-Encoding", b"chunked")], body=cbody))
    add("te.cl_and_te", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Content-Length", b"5"), (b"Transfer-Encoding", b"chunked")], body=cbody))
    add("te.te_and_cl", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Transfer-Encoding", b"chunked"), (b"Content-Length", b"5")], body=cbody))
    add("te.http10_chunked", build(b"POST", b"/echo", version=b"HTTP/1.0",
        headers=[(b"Transfer-Encoding", b"chunked")], body=cbody))

    # Chunk sizes and extensions.
    for fmt in ["{:X}", "0{:x}", "{:x} ", " {:x}", "+{:x}", "-{:x}", "0x{:x}"]:
        add("chunk.size_format", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
            (b"Transfer-Encoding", b"chunked")], body=chunked(body, size_fmt=fmt)))
    for size in [b"fffffffffffffffffff", b"g", b"", b"1" * 40]:
        add("chunk.size_value", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
            (b"Transfer-Encoding", b"chunked")], body=size + b"\r\n" + body + b"\r\n0\r\n\r\n"))
    for ext in [b";", b";a", b";a=", b";a=\"q\"", b"; a=b", b";a=b;c=d", b";\x00", b";a=b c"]:
        add("chunk.extension", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
            (b"Transfer-Encoding", b"chunked")], body=chunked(body, ext=ext)))
    add("chunk.bare_lf", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Transfer-Encoding", b"chunked")], body=chunked(body, sep=b"\n")))
    add("chunk.missing_crlf_after_data", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Transfer-Encoding", b"chunked")], body=b"5\r\nhelloXX0\r\n\r\n"))
    add("chunk.trailer", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Transfer-Encoding", b"chunked")], body=b"5\r\nhello\r\n0\r\nX-T: v\r\n\r\n"))
    add("chunk.bad_trailer", build(b"POST", b"/echo", headers=[(b"Host", b"localhost"),
        (b"Transfer-Encoding", b"chunked")], body=b"5\r\nhello\r\n0\r\nBad Trailer\r\n\r\n"))

    # Random mutations of valid requests, to reach "several thousand".
    seeds = [c["raw"] for c in cases if c["category"].startswith("valid")]
    alphabet = [b"\x00", b"\r", b"\n", b"\t", b" ", b":", b";", b",", b"\x7f", b"\xff", b"0",
                b"a", b"\r\n", b"\r\n\r\n", b"chunked", b"Content-Length: 1\r\n",
                b"Transfer-Encoding: chunked\r\n"]
    while len(cases) < n:
        raw = bytearray(rng.choice(seeds))
        for _ in range(rng.randint(1, 3)):
            op = rng.random()
            pos = rng.randrange(len(raw) + 1)
            if op < 0.4:
                raw[pos:pos] = rng.choice(alphabet)
            elif op < 0.7 and raw:
                del raw[pos:pos + rng.randint(1, 3)]
            elif raw:
                raw[min(pos, len(raw) - 1)] = rng.randrange(256)
        add("mutation", bytes(raw))
    return cases


def check(addr, case):
    raw = case["raw"]
    state, messages, error = llhttp_verdict(raw)
    want = messages + (1 if state == "invalid" else 0)
    statuses, closed = send(addr, raw, want)
    accepted = sum(1 for s in statuses if s not in REJECT)
    rejected = any(s in REJECT for s in statuses[messages:]) or closed
    case.update(llhttp=state, messages=messages, llhttp_error=error,
                statuses=statuses, closed=closed)
    problems = []
    excused = []
    if accepted > messages:
        # Accepting one request llhttp rejects is excusable by a rule; more
        # than one would be a request read as two.
        # An excused difference lets Tern answer each request line of the
        # input; a request hidden in a body is judged by smuggling.py.
        lines = len(REQUEST_LINE.findall(raw))
        rule = excuse("accepts", raw) if state == "invalid" and accepted <= max(lines, messages + 1) else None
        if rule:
            excused.append(rule)
        else:
            problems.append(f"Tern accepted {accepted} requests where llhttp parsed {messages}")
    if state == "valid" and accepted < messages:
        rule = excuse("rejects", raw)
        if rule:
            excused.append(rule)
        else:
            problems.append(f"llhttp accepts it but Tern answered {statuses}")
    if state == "invalid" and not rejected and accepted <= messages:
        # Neither a rejection nor a close: Tern is still waiting for more
        # bytes (its header or request timeout ends it). Not an
        # acceptance, so not a violation, but reported.
        case["waited"] = True
    case["excused"] = excused
    case["problems"] = problems
    case["allowlisted"] = bool(excused)
    case["ok"] = not problems
    return case


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("--cases", type=int, default=3000)
    ap.add_argument("--seed", type=int, default=20261130)
    ap.add_argument("--report")
    a = ap.parse_args()
    host, port = a.addr.rsplit(":", 1)
    addr = (host, int(port))
    cases = generate(random.Random(a.seed), a.cases)
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        results = list(pool.map(lambda c: check(addr, c), cases))
    counts = {}
    for r in results:
        key = (r["llhttp"], "ok" if r["ok"] else "FAIL")
        counts[key] = counts.get(key, 0) + 1
    failures = [r for r in results if not r["ok"]]
    allowlisted = [r for r in results if r.get("allowlisted")]
    print(f"llhttp {llhttp.version}; {len(results)} cases (seed {a.seed})")
    for (v, s), n in sorted(counts.items()):
        print(f"  llhttp {v:<10} {s:<4} {n}")
    waited = [r for r in results if r.get("waited")]
    print(f"  llhttp-invalid requests Tern neither answered nor closed within {TIMEOUT * 3:.1f} s "
          f"(left to its timeouts): {len(waited)}")
    rules = {}
    for r in allowlisted:
        for name in r["excused"]:
            rules[name] = rules.get(name, 0) + 1
    print(f"  allowlisted differences: {len(allowlisted)}")
    for name, n in sorted(rules.items(), key=lambda x: -x[1]):
        print(f"    {n:5} {name}")
    for r in failures[:40]:
        print(f"FAIL {r['category']}: {r['problems']} llhttp={r['llhttp']}/{r['messages']} {r['llhttp_error']} "
              f"statuses={r.get('statuses')} raw={r['raw'][:120]!r}")
    if a.report:
        with open(a.report, "w") as f:
            json.dump([{**r, "raw": r["raw"].decode("latin-1")[:300]} for r in results], f, indent=1)
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
