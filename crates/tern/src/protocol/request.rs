//! Rules on a parsed request's head (HTTP/1 and HTTP/2 alike) that hyper
//! leaves to the server: the request target's form, `Host`, the transfer
//! and content codings, the declared length. See the [catalogue](super).

use crate::metrics::http::Reason;
use http::{header, HeaderName, HeaderValue, Method, StatusCode, Version};
use tern_core::{response::IntoResponse, Problem, Request, Response};

use super::{close_after_refusal, host};

/// Every rule of this module and [`host`] on `req`, in the order a client
/// learns of them: `Err` is the whole answer, `Connection: close`
/// included on HTTP/1 ([`close_after_refusal`]). `fields` are `req`'s
/// ([`Fields::of`]).
///
/// `from_codec`: the request's head was read by Tern's HTTP/1 codec
/// (`server/h1/parse.rs`), which refuses everything the rules on the
/// target's form, the `Host` count, the transfer coding and the declared
/// length refuse (the same rules or stricter ones, in
/// [`super::h1`]): those are skipped. The content coding and the host
/// grammar are not the codec's, and run.
#[allow(clippy::result_large_err)] // the error path is the rare one
pub(crate) fn check_request(
    req: &Request,
    fields: &Fields<'_>,
    max_body: u64,
    from_codec: bool,
) -> Result<(), (Response, Reason)> {
    let http1 = req.version() <= Version::HTTP_11;
    if let Err(problem) = check_head(req, fields, max_body, from_codec) {
        let unsupported_coding = problem.status() == StatusCode::UNSUPPORTED_MEDIA_TYPE;
        let reason = match problem.status() {
            StatusCode::PAYLOAD_TOO_LARGE => Reason::BodyTooLarge,
            StatusCode::UNSUPPORTED_MEDIA_TYPE | StatusCode::NOT_IMPLEMENTED => {
                Reason::ContentCoding
            }
            _ => Reason::Framing,
        };
        let mut res = problem.into_response();
        if unsupported_coding {
            // What is taken instead (RFC 9110 §15.5.16).
            res.headers_mut().insert(
                header::ACCEPT_ENCODING,
                HeaderValue::from_static("identity"),
            );
        }
        close_after_refusal(&mut res, http1);
        return Err((res, reason));
    }
    // A junk host (`a:80@b`, `a:80/x`) is never valid, in any environment:
    // refused before the allow-list, so that no pattern, no `Host`
    // extractor and no URL built from it ever sees one.
    if let Err(detail) = host::check_host(req.uri(), fields.host, fields.hosts, req.version()) {
        let mut res = Problem::new(StatusCode::BAD_REQUEST)
            .with_detail(detail)
            .into_response();
        close_after_refusal(&mut res, http1);
        return Err((res, Reason::Host));
    }
    Ok(())
}

/// The header fields the rules below read, and two more the caller
/// names, found in one pass over the headers rather than a lookup per
/// rule.
#[derive(Default)]
pub(crate) struct Fields<'a> {
    hosts: usize,
    /// The first `Host`.
    pub(crate) host: Option<&'a HeaderValue>,
    transfer_codings: usize,
    transfer_coding: Option<&'a HeaderValue>,
    content_length: Option<&'a HeaderValue>,
    /// The first `Content-Encoding` that names a coding.
    content_coding: Option<&'a HeaderValue>,
    /// The first value of each of the two fields named to [`Fields::of`]
    /// (the app's request-ID header and `traceparent`).
    pub(crate) named: [Option<&'a HeaderValue>; 2],
}

impl<'a> Fields<'a> {
    /// The fields of `req`, and the first value of each of the fields
    /// `named` (what `HeaderMap::get` would find, without hashing
    /// their names: custom names are hashed byte by byte).
    pub(crate) fn of(req: &'a Request, named: [&HeaderName; 2]) -> Self {
        let mut fields = Fields::default();
        for (name, value) in req.headers() {
            for (slot, wanted) in fields.named.iter_mut().zip(named) {
                if slot.is_none() && name == wanted {
                    *slot = Some(value);
                }
            }
            if name == header::CONTENT_ENCODING {
                if fields.content_coding.is_none() && !is_identity(value) {
                    fields.content_coding = Some(value);
                }
            } else if name == header::HOST {
                fields.hosts += 1;
                fields.host = fields.host.or(Some(value));
            } else if name == header::TRANSFER_ENCODING {
                fields.transfer_codings += 1;
                fields.transfer_coding = Some(value);
            } else if name == header::CONTENT_LENGTH {
                fields.content_length = Some(value);
            }
        }
        fields
    }
}

/// The rules on framing, target and body, in order; the first broken one
/// is the answer. `from_codec`: only those Tern's HTTP/1 codec does not
/// apply (see [`check_request`]).
#[allow(clippy::result_large_err)] // the error path is the rare one
fn check_head(
    req: &Request,
    fields: &Fields<'_>,
    max_body: u64,
    from_codec: bool,
) -> Result<(), Problem> {
    if from_codec {
        return check_content_coding(req, fields.content_coding);
    }
    check_target_form(req)?;
    check_host_count(req, fields.hosts)?;
    check_transfer_coding(fields.transfer_coding, fields.transfer_codings)?;
    check_content_coding(req, fields.content_coding)?;
    check_declared_length(fields.content_length, max_body)
}

/// **Request-target form**: an authority-form target (`GET example.com:80`)
/// is refused (400) unless the method is `CONNECT`, and the asterisk form
/// (`GET *`) unless it is `OPTIONS` (RFC 9112 §3.2.3, §3.2.4).
///
/// Why: hyper hands the app either form with any method; the router would
/// then read a host as a path, where a front end routes it as the
/// authority it is (llhttp's strict mode refuses both).
#[allow(clippy::result_large_err)]
fn check_target_form(req: &Request) -> Result<(), Problem> {
    let uri = req.uri();
    if uri.scheme().is_none() && uri.authority().is_some() && req.method() != Method::CONNECT {
        return Err(Problem::new(StatusCode::BAD_REQUEST).with_detail(
            "the request target must be a path starting with `/` or an absolute URL",
        ));
    }
    if uri.path() == "*" && req.method() != Method::OPTIONS {
        return Err(Problem::new(StatusCode::BAD_REQUEST)
            .with_detail("the request target `*` is only for OPTIONS"));
    }
    Ok(())
}

/// **One `Host`** (HTTP/1): an HTTP/1.1 request without `Host` (and without
/// an absolute-form target naming the host) is refused (400), and so is an
/// HTTP/1 request with more than one (RFC 9112 §3.2: a server MUST answer
/// 400). HTTP/2 requests get the second rule from [`host::check_host`].
///
/// Why: with two, a front end that reads the first and an app that reads
/// the last route the same request to different hosts (host confusion,
/// cache poisoning).
#[allow(clippy::result_large_err)]
fn check_host_count(req: &Request, hosts: usize) -> Result<(), Problem> {
    if req.version() > Version::HTTP_11 {
        return Ok(());
    }
    if hosts == 0 && req.version() == Version::HTTP_11 && req.uri().authority().is_none() {
        return Err(Problem::new(StatusCode::BAD_REQUEST)
            .with_detail("an HTTP/1.1 request must carry a `Host` header"));
    }
    host::at_most_one_host(hosts)
        .map_err(|detail| Problem::new(StatusCode::BAD_REQUEST).with_detail(detail))
}

/// **Only `chunked`**: a request whose `Transfer-Encoding` is anything but
/// one field naming the single coding `chunked` is refused (501, RFC 9112
/// §6.1, and the connection closed).
///
/// Why: hyper decodes a request whose last coding is `chunked` and hands
/// the app the rest (`gzip, chunked`) still coded, as if plain; and two
/// `Transfer-Encoding` fields are combined differently by different
/// parsers. hyper itself refuses (400) one whose last coding is not
/// `chunked` ([`super::h1::ends_chunked`]).
#[allow(clippy::result_large_err)]
fn check_transfer_coding(last: Option<&HeaderValue>, fields: usize) -> Result<(), Problem> {
    if let Some(last) = last {
        if fields > 1 || !last.as_bytes().eq_ignore_ascii_case(b"chunked") {
            return Err(Problem::new(StatusCode::NOT_IMPLEMENTED)
                .with_detail("only `Transfer-Encoding: chunked` is supported; send the body chunked or with a `Content-Length`"));
        }
    }
    Ok(())
}

/// **No content coding**: a request with a body in a content coding other
/// than `identity` (`Content-Encoding: gzip`) is refused (415, with
/// `Accept-Encoding: identity`; RFC 9110 §8.4.1, §15.5.16).
///
/// Why: Tern decodes no content coding, and a body read as if plain while
/// it is `br` or `gzip` is a lie to the handler, and a way around every
/// check of its bytes.
#[allow(clippy::result_large_err)]
fn check_content_coding(req: &Request, coding: Option<&HeaderValue>) -> Result<(), Problem> {
    if let Some(value) = coding {
        if !http_body::Body::is_end_stream(req.body()) {
            let shown: String = String::from_utf8_lossy(value.as_bytes())
                .chars()
                .take(40)
                .collect();
            return Err(Problem::new(StatusCode::UNSUPPORTED_MEDIA_TYPE).with_detail(format!(
                "the request body is in the content coding `{shown}` (Content-Encoding), which this server does not decode: send it without a Content-Encoding"
            )));
        }
    }
    Ok(())
}

/// Whether a `Content-Encoding` value names no coding but `identity`
/// (RFC 9110 §8.4.1: a list, in the order applied).
fn is_identity(value: &HeaderValue) -> bool {
    value.to_str().is_ok_and(|v| {
        v.split(',')
            .map(str::trim)
            .all(|c| c.is_empty() || c.eq_ignore_ascii_case("identity"))
    })
}

/// **Declared length over the limit**: a request whose `Content-Length` is
/// over `TERN_MAX_BODY_BYTES` is refused (413) before a byte of its body
/// is read, and the connection closed.
///
/// Why: reading a body only to refuse it costs what the client chooses;
/// and on HTTP/1 the unread body stays on the connection, so nothing after
/// it can be read ([`close_after_refusal`]).
#[allow(clippy::result_large_err)]
fn check_declared_length(length: Option<&HeaderValue>, max_body: u64) -> Result<(), Problem> {
    if let Some(len) = length {
        let len = len.to_str().ok().and_then(|s| s.parse::<u64>().ok());
        if len.is_some_and(|len| len > max_body) {
            return Err(Problem::new(StatusCode::PAYLOAD_TOO_LARGE)
                .with_detail(tern_core::body::too_large_detail(max_body)));
        }
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use http::{HeaderName, Method, Uri, Version};
    use tern_core::{body::Body, Request};

    use super::{check_head, Fields};

    const MAX_BODY: u64 = 100;

    /// What `check_request(.., from_codec: true)` skips must be implied by
    /// the codec: over every combination of methods, target forms,
    /// versions, `Host` fields and framings, a head the skipped rules
    /// refuse is refused by the codec (`server/h1/parse.rs`, through its
    /// verdict on the head alone: `invalid` is a refusal; a head waiting
    /// for its body, an upgrade or a close were taken), and a head the
    /// codec takes passes every rule either way.
    #[test]
    fn what_the_codec_takes_passes_the_rules_it_skips() {
        let methods = ["GET", "OPTIONS", "CONNECT", "POST"];
        let targets = [
            "/",
            "/a?b",
            "*",
            "example.com:80",
            "http://example.com/x",
            "HTTPS://a",
            "ftp://a/",
        ];
        let versions = [
            ("HTTP/1.0", Version::HTTP_10),
            ("HTTP/1.1", Version::HTTP_11),
        ];
        let hosts: [&[&str]; 4] = [&[], &["a"], &["a", "a"], &[""]];
        let framings: [&[(&str, &str)]; 10] = [
            &[],
            &[("content-length", "5")],
            &[("content-length", "100")],
            &[("content-length", "101")],
            &[("content-length", "5"), ("content-length", "5")],
            &[("transfer-encoding", "chunked")],
            &[("transfer-encoding", "Chunked")],
            &[("transfer-encoding", "gzip, chunked")],
            &[
                ("transfer-encoding", "chunked"),
                ("transfer-encoding", "chunked"),
            ],
            &[("transfer-encoding", "chunked"), ("content-length", "5")],
        ];
        let limits = crate::config::Limits {
            max_body_bytes: MAX_BODY,
            ..Default::default()
        };
        let none: HeaderName = HeaderName::from_static("x-none");
        let (mut refused_by_rules, mut taken_by_codec) = (0, 0);
        for method in methods {
            for target in targets {
                for (version_text, version) in versions {
                    for host in hosts {
                        for framing in framings {
                            let mut head = format!("{method} {target} {version_text}\r\n");
                            let mut fields: Vec<(&str, &str)> =
                                host.iter().map(|h| ("host", *h)).collect();
                            fields.extend_from_slice(framing);
                            for (name, value) in &fields {
                                head.push_str(&format!("{name}: {value}\r\n"));
                            }
                            head.push_str("\r\n");
                            let verdict = crate::__fuzz::H1::verdict(head.as_bytes(), &[], &limits);
                            let codec_refused = verdict.contains(r#""state":"invalid""#);

                            let mut req = Request::new(Body::empty());
                            *req.method_mut() = Method::from_bytes(method.as_bytes()).unwrap();
                            *req.uri_mut() = target.parse::<Uri>().unwrap();
                            *req.version_mut() = version;
                            for (name, value) in &fields {
                                req.headers_mut()
                                    .append(HeaderName::from_static(name), value.parse().unwrap());
                            }
                            let f = Fields::of(&req, [&none, &none]);
                            let rules = check_head(&req, &f, MAX_BODY, false);
                            if rules.is_err() {
                                refused_by_rules += 1;
                                assert!(
                                    codec_refused,
                                    "the codec took what the rules refuse: {head:?}"
                                );
                            }
                            if !codec_refused {
                                taken_by_codec += 1;
                                assert!(rules.is_ok(), "{head:?}");
                                assert!(check_head(&req, &f, MAX_BODY, true).is_ok(), "{head:?}");
                            }
                        }
                    }
                }
            }
        }
        // Both sides of the implication are exercised.
        assert!(refused_by_rules > 500, "{refused_by_rules}");
        assert!(taken_by_codec > 50, "{taken_by_codec}");
    }
}
