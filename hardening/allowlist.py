"""Where Tern deliberately differs from llhttp's strict mode, and why.

Each rule names a direction: "accepts" (Tern answers one request that
llhttp rejects) or "rejects" (Tern refuses a request llhttp accepts), a
predicate on the raw request bytes, and the reason. A difference is excused
only when a rule of its direction matches; nothing can excuse Tern reading
more requests than llhttp does plus the one it accepted, nor answering a
request llhttp rejects when it is not the first on the connection.
docs/hardening.md repeats this table.
"""
import os
import re

# llhttp's strict method list (RFC 9110 and the registered extensions).
LLHTTP_METHODS = {
    b"DELETE", b"GET", b"HEAD", b"POST", b"PUT", b"CONNECT", b"OPTIONS", b"TRACE", b"COPY",
    b"LOCK", b"MKCOL", b"MOVE", b"PROPFIND", b"PROPPATCH", b"SEARCH", b"UNLOCK", b"BIND",
    b"REBIND", b"UNBIND", b"ACL", b"REPORT", b"MKACTIVITY", b"CHECKOUT", b"MERGE",
    b"M-SEARCH", b"NOTIFY", b"SUBSCRIBE", b"UNSUBSCRIBE", b"PATCH", b"PURGE", b"MKCALENDAR",
    b"LINK", b"UNLINK", b"SOURCE", b"QUERY",
}
TOKEN = re.compile(rb"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")


def head_of(raw):
    end = raw.find(b"\r\n\r\n")
    return raw if end < 0 else raw[:end]


def body_of(raw):
    end = raw.find(b"\r\n\r\n")
    return b"" if end < 0 else raw[end + 4:]


def method_is_other_token(raw):
    line = raw.lstrip(b"\r\n").split(b"\n", 1)[0]
    method = line.split(b" ", 1)[0]
    return bool(TOKEN.match(method)) and method not in LLHTTP_METHODS


def cl_with_ows(raw):
    return bool(re.search(rb"\r\ncontent-length:[ \t]*\d+[ \t]+\r\n", head_of(raw) + b"\r\n", re.I))


def duplicate_identical_cl(raw):
    values = re.findall(rb"\r\ncontent-length:[ \t]*([^\r\n]*)", head_of(raw), re.I)
    return len(values) > 1 and len(set(v.strip() for v in values)) == 1


def cl_and_te(raw):
    head = head_of(raw).lower()
    return b"\r\ncontent-length:" in head and b"\r\ntransfer-encoding:" in head


def chunk_extension_or_space(raw):
    if b"transfer-encoding" not in head_of(raw).lower():
        return False
    return bool(re.search(rb"(^|\n)[0-9a-fA-F]+[ \t;][^\r\n]*\r?\n", body_of(raw)))


def head_over_limit(raw, max_head=16 * 1024, max_headers=100):
    head = head_of(raw)
    return len(head) > max_head or head.count(b"\r\n") > max_headers


def malformed_percent(raw):
    target = raw.split(b" ", 2)[1] if raw.count(b" ") >= 2 else b""
    return bool(re.search(rb"%(?![0-9A-Fa-f]{2})", target))


def host_count_wrong(raw):
    head = head_of(raw)
    if not re.search(rb"HTTP/1\.1\r?\n", head.split(b"\n", 1)[0] + b"\n"):
        return False
    hosts = re.findall(rb"\r\nhost:", head, re.I)
    return len(hosts) != 1 and not re.match(rb"^\S+ [a-z]+://", head, re.I)


def request_line_extra_spaces(raw):
    for line in raw.split(b"\n"):
        line = line.rstrip(b"\r")
        if b" HTTP/" in line and (b"  " in line or line.endswith(b" ")):
            return True
    return False


def transfer_coding_not_chunked(raw):
    values = re.findall(rb"\r\ntransfer-encoding:[ \t]*([^\r\n]*)", head_of(raw), re.I)
    return any(v.strip().lower() != b"chunked" for v in values) or len(values) > 1


def unroutable_target(raw):
    # `*` (asterisk-form, for OPTIONS) and paths with empty segments reach
    # routing and get 404: parsed, not rejected.
    target = raw.split(b" ", 2)[1] if raw.count(b" ") >= 2 else b""
    return target == b"*" or b"//" in target


# RFC 9110 §7.2 `uri-host [ ":" port ]` as Tern reads it: a name of
# letters, digits, `-` and `_` in dot-separated labels (an IPv4 address is
# one), at most one trailing dot, or a bracketed IPv6 address; a port of 1
# to 5 digits, at most 65535.
HOST_OK = re.compile(rb"^(?:[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*\.?|\[[0-9A-Fa-f:.]+\])(?::([0-9]{1,5}))?$")


def host_not_uri_host(raw):
    values = re.findall(rb"\r\nhost:[ \t]*([^\r\n]*)", head_of(raw), re.I)
    for value in values:
        m = HOST_OK.match(value.strip(b" \t"))
        if not m or (m.group(1) is not None and int(m.group(1)) > 65535):
            return True
    return False


def version_not_http1(raw):
    # The request line (after CRLF empty lines) without ` HTTP/1.0` or
    # ` HTTP/1.1` at its end: HTTP/0.9's `GET /path` (llhttp takes it as
    # version 0.9), or `HTTP/2.0` on an HTTP/1 connection.
    line = raw.lstrip(b"\r\n").split(b"\n", 1)[0].rstrip(b"\r")
    return not (line.endswith(b" HTTP/1.1") or line.endswith(b" HTTP/1.0"))


def te_on_http10(raw):
    head = head_of(raw)
    return head.split(b"\n", 1)[0].rstrip(b"\r").endswith(b" HTTP/1.0") and \
        bool(re.search(rb"\r\ntransfer-encoding:", head, re.I))


def bare_cr_or_lf_before_request_line(raw):
    lead = raw[:len(raw) - len(raw.lstrip(b"\r\n"))]
    return lead.replace(b"\r\n", b"") != b""


def te_with_ows(raw):
    return bool(re.search(rb"\r\ntransfer-encoding:[^\r\n]*?[ \t]+\r\n", head_of(raw) + b"\r\n", re.I))


def chunk_lines(raw):
    """The chunk-size lines of a chunked body, read as the body's framing
    says (sizes that do not parse end the walk)."""
    if not re.search(rb"\r\ntransfer-encoding:[ \t]*chunked", head_of(raw), re.I):
        return []
    body, lines = body_of(raw), []
    while True:
        end = body.find(b"\r\n")
        if end < 0:
            return lines
        line = body[:end]
        lines.append(line)
        m = re.match(rb"[0-9a-fA-F]{1,16}", line)
        if not m:
            return lines
        size = int(m.group(0), 16)
        if size == 0:
            return lines
        body = body[end + 2 + size + 2:]


TOKEN_CHARS = rb"[!#$%&'*+\-.^_`|~0-9A-Za-z]+"
QUOTED = rb'"(?:[^"\\\r\n]|\\.)*"'
CHUNK_EXT = re.compile(rb"^[0-9a-fA-F]{1,16}(?:[ \t]*;[ \t]*" + TOKEN_CHARS +
                       rb"(?:[ \t]*=[ \t]*(?:" + TOKEN_CHARS + rb"|" + QUOTED + rb"))?)*$")


def chunk_extension_off_grammar(raw):
    return any(not CHUNK_EXT.match(line) for line in chunk_lines(raw)
               if re.match(rb"[0-9a-fA-F]+[ \t;]", line))


def framing_field_in_trailers(raw):
    body = body_of(raw)
    m = re.search(rb"(?:^|\r\n)0+(?:[ \t;][^\r\n]*)?\r\n(.*?)\r\n\r\n", body, re.S)
    return bool(m) and bool(re.search(rb"(?:^|\r\n)(?:content-length|transfer-encoding):",
                                      m.group(1), re.I))


def body_over_limit(raw, max_body=2 * 1024 * 1024):
    cl = re.search(rb"\r\ncontent-length:[ \t]*(\d+)", head_of(raw), re.I)
    if cl and int(cl.group(1)) > max_body:
        return True
    total = 0
    for line in chunk_lines(raw):
        m = re.match(rb"[0-9a-fA-F]{1,16}", line)
        total += int(m.group(0), 16) if m else 0
    return total > max_body


def request_line_of(raw):
    return raw.lstrip(b"\r\n").split(b"\n", 1)[0].rstrip(b"\r")


def target_form_wrong(raw):
    parts = request_line_of(raw).split(b" ")
    if len(parts) != 3:
        return False
    method, target = parts[0], parts[1]
    authority = not target.startswith(b"/") and b"://" not in target and target != b"*"
    if method == b"CONNECT":
        return not authority or not re.search(rb":[0-9]+$", target)
    scheme = target.split(b"://", 1)[0].lower() if b"://" in target else None
    return authority or (target == b"*" and method != b"OPTIONS") or \
        (scheme is not None and scheme not in (b"http", b"https"))


def target_host_not_uri_host(raw):
    parts = request_line_of(raw).split(b" ")
    if len(parts) != 3 or b"://" not in parts[1]:
        return False
    authority = parts[1].split(b"://", 1)[1].split(b"/", 1)[0].split(b"?", 1)[0]
    authority = authority.rsplit(b"@", 1)[-1]
    m = HOST_OK.match(authority)
    return not m or (m.group(1) is not None and int(m.group(1)) > 65535)


def target_has_fragment(raw):
    parts = request_line_of(raw).split(b" ")
    return len(parts) == 3 and b"#" in parts[1]


def target_not_uri_chars(raw):
    parts = request_line_of(raw).split(b" ")
    return len(parts) == 3 and any(c in parts[1] for c in b'"<>`')


RULES = [
    ("accepts", "method other than llhttp's list", method_is_other_token,
     "RFC 9110 §9.1: a method is any token (and case-sensitive, so `get` is a different "
     "method); routes answer 405 to methods they do not list. No front end can disagree "
     "on framing: the method is the token before the first SP either way, and it never "
     "decides where the message ends"),
    ("accepts", "whitespace after the Content-Length value", cl_with_ows,
     "RFC 9110 §5.5: whitespace around a field value is not part of it. No front end can "
     "disagree: one that strips it reads the same length, one that does not finds no "
     "valid length and refuses the request instead of forwarding it"),
    ("accepts", "identical repeated Content-Length", duplicate_identical_cl,
     "RFC 9110 §8.6: a recipient MAY replace identical repeated values by one. No front end "
     "can disagree: every value names the same length, so any reading of them frames the "
     "body alike (differing values are refused)"),
    ("accepts", "Content-Length and Transfer-Encoding together", cl_and_te,
     "RFC 9112 §6.3: Transfer-Encoding wins and the server closes the connection after "
     "its answer (hyper does both). A front end that framed it by Content-Length instead "
     "cannot smuggle: nothing after this request is read on that connection"),
    ("accepts", "whitespace after the Transfer-Encoding value", te_with_ows,
     "RFC 9110 §5.5: whitespace around a field value is not part of it (httparse drops it). "
     "No front end can disagree: one that strips it reads `chunked`, one that does not finds "
     "no coding it knows and refuses the request instead of forwarding it"),
    ("accepts", "Content-Length or Transfer-Encoding in a trailer section", framing_field_in_trailers,
     "RFC 9110 §6.5.1: trailer fields are not merged into the header section; the body's "
     "framing was decided by the head and its end by the last chunk, so a trailer cannot move "
     "where the next request starts. Tern hands them to the app as trailers (llhttp refuses "
     "them; refusing too is a candidate for the body decoder)"),
    ("accepts", "chunk extension or whitespace after a chunk size", chunk_extension_or_space,
     "RFC 9112 §7.1.1: a recipient MUST ignore unrecognized chunk extensions; hyper skips "
     "them to the CRLF without checking their grammar. No front end can disagree on where "
     "the chunk line ends: a bare LF or CR in it is refused (400, closed), so the line "
     "ends at the one CRLF every parser sees"),
    ("rejects", "an HTTP version other than HTTP/1.0 and HTTP/1.1", version_not_http1,
     "RFC 9112 §2.3, §3: an HTTP/1 request line ends in `HTTP/1.x`; HTTP/0.9's line without a "
     "version (which llhttp reads, so `GET /a?x=1\\r\\n\\r\\n...` is a request to it) and "
     "`HTTP/2.0` (a prior-knowledge HTTP/2 connection starts with its preface) are refused: "
     "400, closed. Refusing cannot let a front end disagree on framing"),
    ("rejects", "extra spaces in the request line", request_line_extra_spaces,
     "RFC 9112 §3: one SP between the parts (httparse is strict here)"),
    ("rejects", "Transfer-Encoding in an HTTP/1.0 request", te_on_http10,
     "RFC 9112 §6.1: a server that receives an HTTP/1.0 message with Transfer-Encoding MUST "
     "treat its framing as faulty; Tern (and hyper) refuse it: 400, closed"),
    ("rejects", "a bare CR or LF before the request line", bare_cr_or_lf_before_request_line,
     "RFC 9112 §2.2: empty lines (CRLF) before a request line may be skipped; a lone CR or LF "
     "is not one, and lines end only at CRLF (the bare-LF rule): 400, closed"),
    ("rejects", "a request target in a form its method does not take", target_form_wrong,
     "RFC 9112 §3.2.2-4: authority form (`host:port`, the port required) only and always for "
     "CONNECT, `*` only "
     "for OPTIONS, an absolute form only with the scheme http or https (the URIs this server "
     "can be the origin of); Tern's codec refuses the rest (400, closed) rather than route a "
     "host as a path"),
    ("rejects", "a fragment (`#`) in the request target", target_has_fragment,
     "RFC 9112 §3.2: no request-target form has a fragment (clients strip it); http::Uri "
     "would drop it, so `/a#/../admin` would reach the router as `/a` while a front end "
     "keeping the bytes sees another target. Tern's codec refuses it: 400, closed"),
    ("rejects", "a target byte that is no URI character (`\"`, `<`, `>`, backtick)", target_not_uri_chars,
     "RFC 3986 §2: these are not URI characters (a client percent-encodes them); http::Uri, "
     "which Tern and hyper build targets with, refuses them: 400, closed"),
    ("rejects", "an absolute-form target whose host is not uri-host [\":\" port]", target_host_not_uri_host,
     "RFC 9110 §4.2.3, §7.2: the authority of an absolute-form target is uri-host with an "
     "optional port; http::Uri, which Tern builds targets with, refuses `[` outside an IPv6 "
     "literal, `%`, and other bytes llhttp lets into a URL's server part: 400, closed"),
    ("rejects", "a chunk extension outside RFC 9112 §7.1.1's grammar", chunk_extension_off_grammar,
     "RFC 9112 §7.1.1: chunk-ext = *( BWS \";\" BWS name [ BWS \"=\" BWS value ] ), a value a "
     "token or quoted-string: an empty name or value is refused (400, closed), where llhttp "
     "lets `;;` and `;a=` through"),
    ("rejects", "a body over TERN_MAX_BODY_BYTES", body_over_limit,
     "a limit: 413 (declared: before reading; chunked: at the chunk that passes it), closed"),
    ("rejects", "head over TERN_MAX_HEAD_BYTES or TERN_MAX_HEADERS", head_over_limit,
     "a limit: 431 (llhttp has none)"),
    ("rejects", "malformed percent-escape in the path", malformed_percent,
     "Tern's router refuses paths that do not decode (400)"),
    ("rejects", "no Host, or more than one, in HTTP/1.1", host_count_wrong,
     "RFC 9112 §3.2: a server MUST answer 400 (llhttp does not check)"),
    ("rejects", "a Host that is not uri-host [\":\" port]", host_not_uri_host,
     "RFC 9110 §7.2 and §4.2.3: Host is uri-host with an optional numeric port; Tern refuses "
     "anything else (400) before ALLOWED_HOSTS, since a check that strips \"the port\" at the "
     "last colon let `127.0.0.1:80@evil.example` through (security round 3). Refusing cannot "
     "let a front end disagree on framing: the request is not served and nothing after it is"),
    ("rejects", "a transfer coding other than one chunked", transfer_coding_not_chunked,
     "Tern decodes only chunked: 501 rather than hand the app an undecoded body"),
    ("rejects", "a target that no route can match", unroutable_target,
     "parsed and routed: 404, not a parse rejection"),
]


def messages_of(raw):
    """The input, then each request in it (split before every request
    line), so that a rule can match the one request it is about."""
    starts = [m.start(1) for m in re.finditer(rb"(?:^|\n)([!#$%&'*+\-.^_`|~0-9A-Za-z]+ \S+ HTTP/)", raw)]
    parts = [raw[a:b] for a, b in zip(starts, starts[1:] + [len(raw)])]
    return [raw] + parts


# Rules that excuse hyper's HTTP/1 path only (oracle.py against a server
# on `TERN_HTTP1=hyper`, the way back for one release since issue 31's
# step 7 made Tern's own codec the default): Tern's codec refuses these.
HYPER_ONLY = {
    # The codec refuses both fields together (400, RFC 9112 §6.3).
    "Content-Length and Transfer-Encoding together",
}


def excuse(direction, raw, engine=None):
    """The first rule of `direction` that matches `raw` or one of its
    requests, or None; `engine` "tern" leaves out the rules of hyper's
    path (HYPER_ONLY). By default the engine is the one the server under
    test runs: `TERN_HTTP1` of this process's environment (run.sh passes
    it on to the server), `tern` when unset."""
    if engine is None:
        engine = "hyper" if os.environ.get("TERN_HTTP1") == "hyper" else "tern"
    for part in messages_of(raw):
        for d, name, predicate, _reason in RULES:
            if engine == "tern" and name in HYPER_ONLY:
                continue
            if d == direction and predicate(part):
                return name
    return None
