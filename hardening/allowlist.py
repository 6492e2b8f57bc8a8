"""Where Tern deliberately differs from llhttp's strict mode, and why.

Each rule names a direction: "accepts" (Tern answers one request that
llhttp rejects) or "rejects" (Tern refuses a request llhttp accepts), a
predicate on the raw request bytes, and the reason. A difference is excused
only when a rule of its direction matches; nothing can excuse Tern reading
more requests than llhttp does plus the one it accepted, nor answering a
request llhttp rejects when it is not the first on the connection.
docs/hardening.md repeats this table.
"""
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
    ("accepts", "chunk extension or whitespace after a chunk size", chunk_extension_or_space,
     "RFC 9112 §7.1.1: a recipient MUST ignore unrecognized chunk extensions; hyper skips "
     "them to the CRLF without checking their grammar. No front end can disagree on where "
     "the chunk line ends: a bare LF or CR in it is refused (400, closed), so the line "
     "ends at the one CRLF every parser sees"),
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
    ("rejects", "extra spaces in the request line", request_line_extra_spaces,
     "RFC 9112 §3: one SP between the parts (httparse is strict here)"),
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


def excuse(direction, raw):
    """The first rule of `direction` that matches `raw` or one of its
    requests, or None."""
    for part in messages_of(raw):
        for d, name, predicate, _reason in RULES:
            if d == direction and predicate(part):
                return name
    return None
