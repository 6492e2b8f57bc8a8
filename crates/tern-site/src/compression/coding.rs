//! The coding a request accepts, chosen exactly as tower-http's
//! `CompressionLayer` chooses it (tower-http keeps its choice private).
//!
//! The cache must answer with the coding tower-http would have used for
//! the same request, or a page would come out brotli from the cache and
//! zstd from the layer. tower-http's rule, from `content_encoding.rs`
//! (version 0.6), for a layer built with `no_deflate()`:
//!
//! - every `Accept-Encoding` field, split at commas; in each item the
//!   coding is the text before the first `;`, trimmed, compared without
//!   case: `gzip` (or `x-gzip`), `br`, `zstd`, `identity`; anything else
//!   (`deflate`, `*`, `compress`) is ignored;
//! - the rest of the item, trimmed, must be a q-value (`q=0.5`, at most
//!   three decimals, at most 1), or the whole item is ignored; none means
//!   1;
//! - items with `q=0` are dropped; of the rest, the highest q wins, and
//!   on equal q the order zstd, br, gzip, identity;
//! - nothing left: identity (not compressed).
//!
//! The unit test sends a table of headers through tower-http's own layer
//! and checks that [`choose`] agrees on each.

use http::{header, HeaderMap, HeaderValue};

/// A coding of the layer, least preferred first (the order of
/// tower-http's `Encoding`, whose `Ord` breaks ties of q).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Coding {
    Identity,
    Gzip,
    Brotli,
    Zstd,
}

impl Coding {
    /// The `Content-Encoding` value.
    pub(crate) fn header_value(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            Coding::Identity => "identity",
            Coding::Gzip => "gzip",
            Coding::Brotli => "br",
            Coding::Zstd => "zstd",
        })
    }

    fn parse(token: &str) -> Option<Coding> {
        if token.eq_ignore_ascii_case("gzip") || token.eq_ignore_ascii_case("x-gzip") {
            Some(Coding::Gzip)
        } else if token.eq_ignore_ascii_case("br") {
            Some(Coding::Brotli)
        } else if token.eq_ignore_ascii_case("zstd") {
            Some(Coding::Zstd)
        } else if token.eq_ignore_ascii_case("identity") {
            Some(Coding::Identity)
        } else {
            None
        }
    }
}

/// The coding tower-http would use for a request with these headers.
pub(crate) fn choose(headers: &HeaderMap) -> Coding {
    headers
        .get_all(header::ACCEPT_ENCODING)
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(','))
        .filter_map(|item| {
            let mut parts = item.splitn(2, ';');
            let coding = Coding::parse(parts.next().unwrap_or("").trim())?;
            let q = match parts.next() {
                Some(q) => q_value(q.trim())?,
                None => 1000,
            };
            Some((coding, q))
        })
        .filter(|&(_, q)| q > 0)
        .max_by_key(|&(coding, q)| (q, coding))
        .map_or(Coding::Identity, |(coding, _)| coding)
}

/// A q-value (`q=0.5`) in thousandths, as tower-http's `QValue::parse`:
/// `q` or `Q`, `=`, `0` or `1`, then optionally `.` and up to three
/// digits; at most 1.
fn q_value(s: &str) -> Option<u16> {
    let rest = s
        .strip_prefix('q')
        .or_else(|| s.strip_prefix('Q'))?
        .strip_prefix('=')?;
    let mut chars = rest.chars();
    let mut value: u16 = match chars.next()? {
        '0' => 0,
        '1' => 1000,
        _ => return None,
    };
    match chars.next() {
        None => return Some(value),
        Some('.') => {}
        Some(_) => return None,
    }
    let mut factor = 100;
    for c in chars {
        let digit = c.to_digit(10)?;
        if factor < 1 {
            return None;
        }
        value += factor * digit as u16;
        factor /= 10;
    }
    (value <= 1000).then_some(value)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use std::convert::Infallible;

    use tower::{ServiceBuilder, ServiceExt};
    use tower_http::compression::CompressionLayer;

    use super::*;

    /// Headers of browsers, tools and mistakes; each sent alone, and the
    /// last ones as two fields.
    const TABLE: &[&[&str]] = &[
        &[],
        &[""],
        &["gzip"],
        &["br"],
        &["zstd"],
        &["identity"],
        &["deflate"],
        &["*"],
        &["x-gzip"],
        &["GZIP"],
        &["Br"],
        &["gzip, deflate"],
        &["gzip, deflate, br"],
        &["gzip, deflate, br, zstd"],
        &["br, gzip"],
        &["gzip, br;q=1.0"],
        &["gzip;q=1, br;q=0.5"],
        &["gzip;q=0.5, br;q=0.5, zstd;q=0.5"],
        &["gzip;q=0.5, identity"],
        &["gzip;q=1, identity"],
        &["br;q=0"],
        &["br;q=0, gzip"],
        &["br;q=0.000, gzip;q=0.001"],
        &["br;q=0.999, gzip;q=1.000"],
        &["br;q=1.0001"],
        &["br;q=2, gzip;q=0.1"],
        &["br;q=1.5"],
        &["br;q=.5"],
        &["br; q=0.5, gzip; q=0.4"],
        &["br ;q=0.5"],
        &["br;Q=0.9, zstd;q=0.8"],
        &["br;level=9"],
        &["br;q=0.5;x=1, gzip;q=0.1"],
        &["  zstd  ,  br  "],
        &["zstd;q=0.9, br;q=0.9, gzip;q=0.95"],
        &["compress, gzip;q=0.2"],
        &["*;q=0.5, gzip;q=0.1"],
        &["identity;q=0, gzip;q=0"],
        &["br, gzip, zstd;q=0"],
        &["gzip", "br"],
        &["br;q=0.1", "gzip;q=0.2"],
        &["identity", "zstd;q=0.5"],
    ];

    /// The coding tower-http's own layer (with `no_deflate`, as Tern's)
    /// puts on a large text answer to a request with `values`.
    async fn tower_http_choice(values: &[&str]) -> Coding {
        let svc = ServiceBuilder::new()
            .layer(CompressionLayer::new().no_deflate())
            .service_fn(|_req: http::Request<()>| async {
                let mut res = http::Response::new(tern::body::Body::from("text ".repeat(1000)));
                res.headers_mut()
                    .insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain"));
                Ok::<_, Infallible>(res)
            });
        let mut req = http::Request::new(());
        for v in values {
            req.headers_mut()
                .append(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
        }
        let res = svc.oneshot(req).await.unwrap();
        match res
            .headers()
            .get(header::CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap())
        {
            None => Coding::Identity,
            Some("gzip") => Coding::Gzip,
            Some("br") => Coding::Brotli,
            Some("zstd") => Coding::Zstd,
            Some(other) => panic!("tower-http answered {other}"),
        }
    }

    #[tokio::test]
    async fn the_choice_is_tower_https_on_every_header_of_the_table() {
        let mut seen = std::collections::HashSet::new();
        for values in TABLE {
            let mut headers = HeaderMap::new();
            for v in *values {
                headers.append(header::ACCEPT_ENCODING, HeaderValue::from_str(v).unwrap());
            }
            let ours = choose(&headers);
            assert_eq!(ours, tower_http_choice(values).await, "{values:?}");
            seen.insert(ours);
        }
        // The table reaches every outcome.
        assert_eq!(seen.len(), 4);
    }

    #[test]
    fn q_values_follow_rfc_9110s_grammar() {
        for (s, q) in [
            ("q=1", Some(1000)),
            ("q=0", Some(0)),
            ("Q=0.5", Some(500)),
            ("q=0.123", Some(123)),
            ("q=1.000", Some(1000)),
            ("q=1.001", None),
            ("q=0.1234", None),
            ("q=2", None),
            ("q=", None),
            ("q=.5", None),
            ("x=1", None),
            ("q=0.5x", None),
        ] {
            assert_eq!(q_value(s), q, "{s}");
        }
    }
}
