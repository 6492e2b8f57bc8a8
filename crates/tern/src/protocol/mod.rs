//! Tern's HTTP strictness rules, in one place: every rule Tern enforces on
//! what a client sends beyond what stock hyper does, and the rules of hyper,
//! httparse and h2 it relies on, each with the layer that enforces it.
//!
//! Most rules exist for one reason: a request must mean the same thing to
//! Tern as to every front end (proxy, load balancer, cache) before it, or
//! the two disagree on where a message ends (request smuggling, desync) or
//! which host it is for. Where a rule lets something through that a strict
//! parser refuses, `docs/hardening.md` ("Where Tern deliberately differs
//! from llhttp") says why no front end can disagree about it.
//!
//! Layers: **Tern** is code in this crate (the rule's function or constant
//! is here, the mechanism that applies it is named); **vendor** is a patch
//! in `vendor/` that only builds inside this repository get (an app that
//! depends on Tern from crates.io links the published crates;
//! `vendor/*/TERN-PATCH.md`); **stock** is the published hyper 1.x,
//! httparse or h2, which every build gets, configured by Tern's
//! `connection_builders` (`server/mod.rs`).
//!
//! # HTTP/1 bytes, before hyper parses them
//!
//! | rule | refused with | layer |
//! |---|---|---|
//! | a bare LF ends no line: in a request line, header or trailer section ([`h1::refuse_bare_lf`]) | 400 (hyper's), close; nothing after it read | Tern: `server/framing.rs` `Framing` |
//! | nothing after a message hyper refuses is handed to hyper | (the refusal's) | Tern: `Framing` (`doom`) |
//! | a connection that starts `PRI * HTTP/2.0` and breaks the preface ([`h2::PREFACE_REFUSAL`]) | SETTINGS + GOAWAY `PROTOCOL_ERROR`, close | Tern: `server/preface.rs` `PrefaceCheck` |
//! | header names are tokens; values are VCHAR, SP, HTAB, obs-text (no CTL, no NUL) | 400 | stock httparse |
//! | obs-fold (a header line starting with SP or HTAB): refused in requests | 400 | stock httparse |
//! | a bare CR in a head; anything but one SP between request-line parts | 400 | stock httparse |
//! | `Content-Length` not digits only, overflowing, or repeated with differing values ([`h1::content_length`]) | 400 | stock hyper (`role.rs`), mirrored by `Framing` |
//! | `Transfer-Encoding` on HTTP/1.0, or whose last coding is not `chunked` ([`h1::ends_chunked`]) | 400 | stock hyper, mirrored by `Framing` |
//! | `Transfer-Encoding` with `Content-Length`: the first wins, the length is dropped | close after the answer | stock hyper, mirrored by `Framing` |
//! | a chunk size that is not hex or overflows; a chunk not ended by CRLF; a bare LF or CR in a chunk line | the connection ends | stock hyper (`decode.rs`), mirrored by `Framing` |
//! | a head over `TERN_MAX_HEAD_BYTES` or with more than `TERN_MAX_HEADERS` fields; a target over 65,534 bytes | 431; 414 | stock hyper, limits set by Tern |
//! | hyper's own bare 400/414/431 ([`h1::hyper_refusal`]) is replaced by a problem+json with a request ID | (same status) | Tern: `server/watchdog/io.rs` `WatchedIo` |
//!
//! # HTTP/1 heads in Tern's own codec (`server/h1`, issue 31)
//!
//! The codec that replaces hyper's HTTP/1 server (`docs/plans/http1.md`;
//! not yet serving connections) applies RFC 9112's rules itself, each one
//! in [`h1`], in one scan, one httparse call and one build pass over a
//! whole head (`server/h1/parse.rs`). Every refusal closes the connection.
//!
//! | rule | refused with | layer |
//! |---|---|---|
//! | lines end in CRLF: a bare LF anywhere in a head ([`h1::bare_lf`]); a bare CR | 400 | Tern: codec (scan; httparse for CR) |
//! | CRLF empty lines before the request line are skipped, counted toward the head limit | | Tern: codec (scan) |
//! | a head whose end is not within `TERN_MAX_HEAD_BYTES`, refused while reading ([`h1::head_over_limit`]); more than `TERN_MAX_HEADERS` fields | 431 | Tern: codec (scan; httparse) |
//! | `METHOD SP target SP HTTP/1.x`, one SP each, tokens, no obs-fold, no whitespace before a colon or the first field | 400 | stock httparse, called by the codec |
//! | a target over 65,534 bytes ([`h1::MAX_TARGET_LEN`]) | 414 | Tern: codec |
//! | authority form only and always for `CONNECT`, `*` only for `OPTIONS`, an absolute form only with `http` or `https` ([`h1::target_form`]) | 400 | Tern: codec |
//! | a fragment (`#`) in the target ([`h1::no_fragment`]) | 400 | Tern: codec |
//! | HTTP/1.1 without exactly one `Host` (none only with an absolute-form target); HTTP/1.0 with two ([`h1::host_count`]) | 400 | Tern: codec |
//! | `Content-Length` not digits only, overflowing, a list, or repeated with differing values; identical repeats are one ([`h1::repeated_length`]) | 400 | Tern: codec |
//! | a declared length over `TERN_MAX_BODY_BYTES` ([`h1::declared_length`]) | 413 | Tern: codec |
//! | `Transfer-Encoding` on HTTP/1.0, with `Content-Length`, or not ending in `chunked` ([`h1::transfer_coding`]) | 400 | Tern: codec |
//! | any transfer coding but one `chunked` | 501 | Tern: codec |
//! | `Connection` tokens `close`, `keep-alive`, `upgrade` ([`h1::ConnectionTokens`]); `Expect: 100-continue` on 1.1 only ([`h1::expects_continue`]); an upgrade asked ([`h1::asks_upgrade`]) | (persistence, 100, nothing parsed after it until the answer) | Tern: codec |
//!
//! # A parsed request's head, HTTP/1 and HTTP/2 ([`check_request`])
//!
//! Checked before any middleware sees the request (`app/head.rs`,
//! `prepare`), in this order; the first broken rule is the answer. A
//! request whose head Tern's HTTP/1 codec read (`AppService::call_checked`)
//! skips the target-form, `Host`-count, transfer-coding and
//! declared-length rows: the codec's rules above refuse all they refuse
//! (a unit test in `request.rs` holds it to that).
//!
//! | rule | refused with | layer |
//! |---|---|---|
//! | an authority-form target without `CONNECT`, `*` without `OPTIONS` (`request::check_target_form`) | 400 | Tern |
//! | HTTP/1.1 without `Host` (and no absolute-form target); HTTP/1 with two (`request::check_host_count`) | 400 | Tern |
//! | `Transfer-Encoding` other than one field naming only `chunked` (`request::check_transfer_coding`) | 501 | Tern |
//! | a body in a content coding other than `identity` (`request::check_content_coding`) | 415, `Accept-Encoding: identity` | Tern |
//! | a declared `Content-Length` over `TERN_MAX_BODY_BYTES` (`request::check_declared_length`) | 413, before reading | Tern |
//! | more than one `Host`, any version ([`host::at_most_one_host`]) | 400 | Tern |
//! | a `Host` or target authority that is not `uri-host [":" port]`; on HTTP/2, a `Host` naming another host than `:authority` ([`host::check_host`]) | 400 | Tern |
//! | on HTTP/1, any refusal above, and every 413 (declared, or found while reading the body) ([`close_after_refusal`]) | `Connection: close` | Tern (here and `app/service.rs`) |
//!
//! After these, `ALLOWED_HOSTS` (configuration, not protocol: `app/head.rs`)
//! and the body limit while reading (`tern_core::body`, 413).
//!
//! # HTTP/2 streams
//!
//! | rule | refused with | layer |
//! |---|---|---|
//! | connection-specific fields (`connection`, `transfer-encoding`, `upgrade`, `keep-alive`, `proxy-connection`, `te` other than `trailers`) | `RST_STREAM PROTOCOL_ERROR` | stock h2 (`frame/headers.rs`) |
//! | a pseudo-header after a regular field or repeated; `:method`, `:scheme` or `:path` missing or malformed | `RST_STREAM PROTOCOL_ERROR` | stock h2 |
//! | DATA short of or past `content-length`; a second HEADERS without END_STREAM | `RST_STREAM PROTOCOL_ERROR` | stock h2 |
//! | a trailer section that *starts* with a pseudo-header (RFC 9113 §8.1.1) | `RST_STREAM PROTOCOL_ERROR` | vendor: `vendor/h2` patch 0001 |
//! | HEADERS on a half-closed (remote) stream (RFC 9113 §5.1) | `RST_STREAM STREAM_CLOSED` | vendor: `vendor/h2` patch 0002 |
//! | the rules above apply after the handler answered: the rest of a body it dropped is still read, within `TERN_MAX_BODY_BYTES` and `TERN_REQUEST_TIMEOUT` | (h2's answer, whatever the timing) | Tern: `server/h2.rs` `unread_hook` |
//! | rapid reset, CONTINUATION and header-list floods; too many streams | GOAWAY | stock h2, limits set by Tern |
//!
//! hyper is the published crate (its HTTP/1 server serves only under
//! `TERN_HTTP1=hyper`, the way back for one release).

pub(crate) mod h1;
pub(crate) mod h2;
pub(crate) mod host;
mod request;
pub(crate) mod search;

use http::{header, HeaderValue};
use tern_core::Response;

pub(crate) use request::{check_request, Fields};

/// **Close after a refusal** (HTTP/1): an answer that refuses a request
/// before its body is read (every refusal of [`check_request`], and every
/// 413) says `Connection: close`, and hyper closes after it instead of
/// reading the rest of the body to keep the connection.
///
/// Why: the unread body may be any size, and its framing may be the
/// problem: nothing after it on the connection can be trusted to start a
/// request. HTTP/2 needs nothing: a stream's end is framed by h2.
#[inline]
pub(crate) fn close_after_refusal(res: &mut Response, http1: bool) {
    if http1 {
        res.headers_mut()
            .insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
}
