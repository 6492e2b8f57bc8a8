//! The `mixed` workload: about 1,000 routes of six shapes and a table of
//! 4,096 requests, generated from a fixed seed.

use std::fmt;

use crate::{
    payload::{json_string, Owner, Payload},
    rng::XorShift64,
};

/// The seed of the route table; the request table uses a value derived
/// from it.
pub const MIXED_SEED: u64 = 0x7465_726e_2d6d_6978; // "tern-mix"

/// Number of routes in [`mixed_routes`].
pub const MIXED_ROUTES: usize = 1_000;

/// Number of requests in [`mixed_requests`].
pub const MIXED_REQUESTS: usize = 4_096;

/// [`mixed_table_hash`] of the current table. A test pins it, so a change
/// to the generator that alters the table is deliberate and visible.
pub const MIXED_TABLE_HASH: u64 = 0x3227_3a0d_d017_5c3f;

/// Route shapes in percent (of routes, and of requests), in the order of
/// [`Shape::ALL`].
pub const SHAPE_PERCENT: [u32; 6] = [45, 25, 15, 5, 5, 5];

/// Methods in percent (of each shape's routes, and of requests), in the
/// order of [`Method::ALL`].
pub const METHOD_PERCENT: [u32; 5] = [65, 20, 8, 5, 2];

/// Percent of requests that go to the hot part of their method-and-shape
/// cell (its first [`HOT_PERCENT`] of routes).
pub const HOT_PICKS_PERCENT: u32 = 70;

/// Percent of each method-and-shape cell that is hot (rounded, at least
/// one route).
pub const HOT_PERCENT: usize = 20;

/// Percent of requests that carry `?page=N&sort=name`.
pub const QUERY_PERCENT: u32 = 20;

const ACTIONS: &[&str] = &[
    "edit", "like", "share", "archive", "publish", "approve", "follow", "export",
];

const WORDS: &[&str] = &[
    "about",
    "team",
    "pricing",
    "docs",
    "blog",
    "careers",
    "legal",
    "terms",
    "privacy",
    "status",
    "help",
    "faq",
    "contact",
    "press",
    "guide",
    "intro",
    "api",
    "v1",
    "v2",
    "reference",
    "changelog",
    "security",
    "partners",
    "events",
    "news",
    "assets",
    "css",
    "js",
    "img",
    "fonts",
];

const ORGS: &[&str] = &[
    "acme", "globex", "initech", "umbrella", "hooli", "stark", "wayne",
];

/// An HTTP method of the mixed workload.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Method {
    /// `GET`: a read.
    Get,
    /// `POST`: a write, with a [`Payload`] body.
    Post,
    /// `PUT`: a write.
    Put,
    /// `PATCH`: a write.
    Patch,
    /// `DELETE`: a read (no body; answered from the route parameters).
    Delete,
}

impl Method {
    /// Every method, in the order of [`METHOD_PERCENT`].
    pub const ALL: [Method; 5] = [
        Method::Get,
        Method::Post,
        Method::Put,
        Method::Patch,
        Method::Delete,
    ];

    /// The method's name as sent on the wire: `GET`, `POST`, ...
    ///
    /// ```
    /// assert_eq!(tern_bench_workload::Method::Patch.as_str(), "PATCH");
    /// ```
    pub fn as_str(self) -> &'static str {
        match self {
            Method::Get => "GET",
            Method::Post => "POST",
            Method::Put => "PUT",
            Method::Patch => "PATCH",
            Method::Delete => "DELETE",
        }
    }

    /// Whether requests of this method carry a JSON [`Payload`] (`POST`,
    /// `PUT`, `PATCH`).
    pub fn is_write(self) -> bool {
        matches!(self, Method::Post | Method::Put | Method::Patch)
    }
}

impl fmt::Display for Method {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The shape of a mixed route.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Shape {
    /// `/s{n}/word[/word]`: static segments only (no parameters).
    Static,
    /// `/r{n}/{id}`: one parameter.
    Rest,
    /// `/r{n}/{id}/{action}` with a fixed action word such as `edit`; it
    /// shares its `/r{n}` prefix with the [`Shape::Rest`] route of the same
    /// `n`.
    Action,
    /// `/n{n}/{a}/items/{b}`: two parameters.
    Nested,
    /// `/c{n}/{id}` where `id` must be all ASCII digits (Tern's
    /// `{id:u64}`, actix's `{id:\d+}`; routers without constraints check
    /// in the handler and answer `404`).
    Constrained,
    /// `/g{n}/{*rest}`: a glob of one or more segments.
    Glob,
}

impl Shape {
    /// Every shape, in the order of [`SHAPE_PERCENT`].
    pub const ALL: [Shape; 6] = [
        Shape::Static,
        Shape::Rest,
        Shape::Action,
        Shape::Nested,
        Shape::Constrained,
        Shape::Glob,
    ];

    /// A short name: `static`, `rest`, `action`, `nested`, `constrained`,
    /// `glob`.
    pub fn as_str(self) -> &'static str {
        match self {
            Shape::Static => "static",
            Shape::Rest => "rest",
            Shape::Action => "action",
            Shape::Nested => "nested",
            Shape::Constrained => "constrained",
            Shape::Glob => "glob",
        }
    }
}

/// One segment of a route, the plain form every router's syntax is
/// written from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Segment {
    /// Exactly this text.
    Static(String),
    /// A named parameter: any one non-empty segment (all digits when the
    /// route's [`digits_only`](Route::digits_only) is set).
    Param(String),
    /// A named glob: one or more whole segments, the last segment of the
    /// route.
    Glob(String),
}

/// A route of the mixed workload: one method on one path pattern.
///
/// Patterns are unique and no two can match the same path (a test checks
/// every pair), so registration order and match priority never matter:
/// every router, linear or tree, must pick the same route.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Route {
    /// The route's number: its position in [`mixed_routes`], the order to
    /// register routes in, and the `route` field of its responses.
    pub index: usize,
    /// Its shape.
    pub shape: Shape,
    /// Its only method; other methods on its path are not in the table.
    pub method: Method,
    /// The pattern in matchit 0.8 / axum 0.8 syntax, without constraints:
    /// `/r7/{id}`, `/c3/{id}`, `/g2/{*rest}`.
    pub pattern: String,
    /// The pattern in Tern's syntax: as [`pattern`](Route::pattern) but
    /// with `{id:u64}` on constrained routes.
    pub tern_pattern: String,
    /// The pattern in actix-web's syntax: `/c3/{id:\d+}`,
    /// `/g2/{rest:.*}`.
    pub actix_pattern: String,
    /// The plain form: the segments after the leading `/`.
    pub segments: Vec<Segment>,
    /// Whether every parameter must be all ASCII digits (constrained
    /// routes); a server without route constraints checks it in the
    /// handler and answers `404` when it fails.
    pub digits_only: bool,
    /// Whether the route is in the hot part of its method-and-shape cell.
    /// Hotness follows the order routes were generated in within the cell,
    /// which is unrelated to [`index`](Route::index): hot routes are spread
    /// over the registration order, so a router that scans routes in order
    /// is neither helped nor hurt by them.
    pub hot: bool,
}

impl Route {
    /// The names of the route's parameters, in path order.
    ///
    /// ```
    /// let routes = tern_bench_workload::mixed_routes();
    /// let nested = routes.iter().find(|r| r.shape == tern_bench_workload::Shape::Nested).unwrap();
    /// assert_eq!(nested.param_names(), ["a", "b"]);
    /// ```
    pub fn param_names(&self) -> Vec<&str> {
        self.segments
            .iter()
            .filter_map(|s| match s {
                Segment::Param(name) | Segment::Glob(name) => Some(name.as_str()),
                Segment::Static(_) => None,
            })
            .collect()
    }
}

/// A request of the mixed table and the exact answer expected.
#[derive(Debug, Clone, PartialEq)]
pub struct Req {
    /// The [`Route::index`] it must be routed to.
    pub route: usize,
    /// Its method (the route's).
    pub method: Method,
    /// Path and query, as sent: `/r7/1234` or `/r7/1234?page=3&sort=name`.
    /// Only ASCII letters, digits, `-`, `/` and the query: nothing to
    /// percent-decode.
    pub path: String,
    /// The route parameters the path carries, in path order (a glob's
    /// value is its segments joined by `/`).
    pub params: Vec<String>,
    /// For writes, the [`Payload`] sent as the body.
    pub payload: Option<Payload>,
    /// For writes, the JSON body bytes (`payload.to_json()`), sent with
    /// `Content-Type: application/json`.
    pub body: Option<Vec<u8>>,
    /// The expected status: always 200.
    pub status: u16,
    /// The exact expected response body ([`mixed_expected`]), sent with
    /// `Content-Type: application/json`.
    pub expected: Vec<u8>,
}

/// The response body a server must send for a request to route `route`
/// with `params` (in path order) and, for a write, the decoded `body`.
///
/// - a read (`GET`, `DELETE`): `{"route":N,"params":["v1","v2"]}`;
/// - a write (`POST`, `PUT`, `PATCH`):
///   `{"route":N,"params":[...],"sum":S,"len":L}` with `S` =
///   [`Payload::sum`] and `L` = [`Payload::lengths`].
///
/// Compact JSON, fields in this order, parameters as strings exactly as
/// they were in the path. Only integers and plain strings: serde_json and
/// any other serializer write the same bytes.
///
/// ```
/// use tern_bench_workload::mixed_expected;
/// assert_eq!(mixed_expected(7, &["42"], None), br#"{"route":7,"params":["42"]}"#);
/// assert_eq!(mixed_expected(3, &[], None), br#"{"route":3,"params":[]}"#);
/// ```
pub fn mixed_expected(route: usize, params: &[&str], body: Option<&Payload>) -> Vec<u8> {
    let mut out = Vec::with_capacity(64);
    out.extend_from_slice(format!(r#"{{"route":{route},"params":["#).as_bytes());
    for (i, p) in params.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        json_string(&mut out, p);
    }
    out.push(b']');
    if let Some(p) = body {
        out.extend_from_slice(format!(r#","sum":{},"len":{}"#, p.sum(), p.lengths()).as_bytes());
    }
    out.push(b'}');
    out
}

/// The routes of the mixed workload, in registration order
/// (`routes[i].index == i`).
///
/// [`MIXED_ROUTES`] routes: 450 static, 250 REST id, 150 id plus action,
/// 50 nested, 50 constrained, 50 glob ([`SHAPE_PERCENT`]). Within each
/// shape the methods are apportioned exactly to [`METHOD_PERCENT`]
/// (largest remainder, at least one route per method) and dealt to the
/// routes in an order drawn from [`MIXED_SEED`]; registration order is a
/// seeded shuffle of all routes.
///
/// ```
/// let routes = tern_bench_workload::mixed_routes();
/// assert_eq!(routes.len(), 1_000);
/// assert!(routes.iter().enumerate().all(|(i, r)| r.index == i));
/// ```
pub fn mixed_routes() -> Vec<Route> {
    let mut rng = XorShift64::new(MIXED_SEED);
    let mut generated = Vec::with_capacity(MIXED_ROUTES);
    for (shape, percent) in Shape::ALL.into_iter().zip(SHAPE_PERCENT) {
        let count = MIXED_ROUTES * percent as usize / 100;
        let mut methods = apportion(count, &METHOD_PERCENT);
        rng.shuffle(&mut methods);
        for (n, method) in methods.into_iter().enumerate() {
            let segments = shape_segments(shape, n, &mut rng);
            generated.push(Route {
                index: 0,
                shape,
                method,
                pattern: String::new(),
                tern_pattern: String::new(),
                actix_pattern: String::new(),
                digits_only: shape == Shape::Constrained,
                segments,
                hot: false,
            });
        }
    }
    // Hot: the first HOT_PERCENT of each cell in generation order.
    for shape in Shape::ALL {
        for method in Method::ALL {
            let cell: Vec<usize> = (0..generated.len())
                .filter(|&i| generated[i].shape == shape && generated[i].method == method)
                .collect();
            for &i in &cell[..hot_len(cell.len())] {
                generated[i].hot = true;
            }
        }
    }
    rng.shuffle(&mut generated);
    for (index, route) in generated.iter_mut().enumerate() {
        route.index = index;
        route.pattern = render(
            &route.segments,
            |name| format!("{{{name}}}"),
            |g| format!("{{*{g}}}"),
        );
        let digits = route.digits_only;
        route.tern_pattern = render(
            &route.segments,
            |name| match digits {
                true => format!("{{{name}:u64}}"),
                false => format!("{{{name}}}"),
            },
            |g| format!("{{*{g}}}"),
        );
        route.actix_pattern = render(
            &route.segments,
            |name| match digits {
                true => format!("{{{name}:\\d+}}"),
                false => format!("{{{name}}}"),
            },
            |g| format!("{{{g}:.*}}"),
        );
    }
    generated
}

/// The 4,096 requests of the mixed table, replayed in order by every
/// trial.
///
/// Each request draws a shape by [`SHAPE_PERCENT`] and a method by
/// [`METHOD_PERCENT`], then a route of that cell: with probability
/// [`HOT_PICKS_PERCENT`] from its hot part, else from the rest. Parameter
/// values are drawn (ids are mostly decimal, sometimes slugs such as
/// `bravo-17`; constrained ids always decimal), [`QUERY_PERCENT`] of the
/// requests get `?page=N&sort=name`, and writes get a [`Payload`].
///
/// ```
/// let reqs = tern_bench_workload::mixed_requests();
/// assert_eq!(reqs.len(), 4_096);
/// assert!(reqs.iter().all(|r| r.status == 200 && r.body.is_some() == r.method.is_write()));
/// ```
pub fn mixed_requests() -> Vec<Req> {
    let routes = mixed_routes();
    let mut cells: Vec<Vec<Vec<usize>>> =
        vec![vec![Vec::new(); Method::ALL.len()]; Shape::ALL.len()];
    // Hot routes first within each cell (they were the first generated).
    let mut by_hotness: Vec<&Route> = routes.iter().collect();
    by_hotness.sort_by_key(|r| !r.hot);
    for r in by_hotness {
        cells[shape_pos(r.shape)][method_pos(r.method)].push(r.index);
    }
    let mut rng = XorShift64::new(MIXED_SEED ^ 0x7265_7175_6573_7473); // "requests"
    let mut out = Vec::with_capacity(MIXED_REQUESTS);
    while out.len() < MIXED_REQUESTS {
        let shape = rng.weighted(&SHAPE_PERCENT);
        let method = rng.weighted(&METHOD_PERCENT);
        let cell = &cells[shape][method];
        let hot = routes_hot_len(&routes, cell);
        let route = if rng.chance(HOT_PICKS_PERCENT) || hot == cell.len() {
            &routes[cell[rng.below(hot)]]
        } else {
            &routes[cell[hot + rng.below(cell.len() - hot)]]
        };
        out.push(request_for(route, &mut rng));
    }
    out
}

/// FNV-1a (64-bit) of the serialized table, to record with every run.
///
/// The serialization is, for each route in order,
/// `{index} {METHOD} {tern_pattern}\n`, then for each request in order
/// `{METHOD} {path}\n{body}\n{status} {expected}\n` (an empty body for
/// reads). Equal hashes mean the same routes, requests and expectations.
///
/// ```
/// assert_eq!(
///     tern_bench_workload::mixed_table_hash(),
///     tern_bench_workload::MIXED_TABLE_HASH,
/// );
/// ```
pub fn mixed_table_hash() -> u64 {
    table_hash(&mixed_routes(), &mixed_requests())
}

fn table_hash(routes: &[Route], reqs: &[Req]) -> u64 {
    let mut h = Fnv1a::new();
    for r in routes {
        h.write(format!("{} {} {}\n", r.index, r.method, r.tern_pattern).as_bytes());
    }
    for q in reqs {
        h.write(format!("{} {}\n", q.method, q.path).as_bytes());
        h.write(q.body.as_deref().unwrap_or_default());
        h.write(format!("\n{} ", q.status).as_bytes());
        h.write(&q.expected);
        h.write(b"\n");
    }
    h.0
}

struct Fnv1a(u64);

impl Fnv1a {
    fn new() -> Self {
        Fnv1a(0xcbf2_9ce4_8422_2325)
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 ^= u64::from(b);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

fn shape_pos(shape: Shape) -> usize {
    Shape::ALL
        .iter()
        .position(|&s| s == shape)
        .unwrap_or_default()
}

fn method_pos(method: Method) -> usize {
    Method::ALL
        .iter()
        .position(|&m| m == method)
        .unwrap_or_default()
}

fn hot_len(cell_len: usize) -> usize {
    ((cell_len * HOT_PERCENT + 50) / 100).clamp(1, cell_len.max(1))
}

fn routes_hot_len(routes: &[Route], cell: &[usize]) -> usize {
    cell.iter().take_while(|&&i| routes[i].hot).count()
}

/// `count` split by `percent` with the largest-remainder method, every
/// share at least one.
fn apportion(count: usize, percent: &[u32]) -> Vec<Method> {
    let mut shares: Vec<usize> = percent
        .iter()
        .map(|&p| (count * p as usize / 100).max(1))
        .collect();
    let mut order: Vec<usize> = (0..percent.len()).collect();
    // Ties go to the earlier (more common) method.
    order.sort_by_key(|&i| std::cmp::Reverse(count * percent[i] as usize % 100));
    let mut k = 0;
    while shares.iter().sum::<usize>() < count {
        shares[order[k % order.len()]] += 1;
        k += 1;
    }
    Method::ALL
        .iter()
        .zip(shares)
        .flat_map(|(&m, n)| std::iter::repeat_n(m, n))
        .collect()
}

fn shape_segments(shape: Shape, n: usize, rng: &mut XorShift64) -> Vec<Segment> {
    let st = |s: String| Segment::Static(s);
    let param = |s: &str| Segment::Param(s.to_owned());
    match shape {
        Shape::Static => {
            let mut segs = vec![st(format!("s{n}"))];
            for _ in 0..rng.between(1, 2) {
                segs.push(st((*rng.pick(WORDS)).to_owned()));
            }
            segs
        }
        Shape::Rest => vec![st(format!("r{n}")), param("id")],
        Shape::Action => vec![
            st(format!("r{n}")),
            param("id"),
            st((*rng.pick(ACTIONS)).to_owned()),
        ],
        Shape::Nested => vec![
            st(format!("n{n}")),
            param("a"),
            st("items".to_owned()),
            param("b"),
        ],
        Shape::Constrained => vec![st(format!("c{n}")), param("id")],
        Shape::Glob => vec![st(format!("g{n}")), Segment::Glob("rest".to_owned())],
    }
}

fn render(
    segments: &[Segment],
    param: impl Fn(&str) -> String,
    glob: impl Fn(&str) -> String,
) -> String {
    let mut out = String::new();
    for s in segments {
        out.push('/');
        match s {
            Segment::Static(text) => out.push_str(text),
            Segment::Param(name) => out.push_str(&param(name)),
            Segment::Glob(name) => out.push_str(&glob(name)),
        }
    }
    out
}

fn request_for(route: &Route, rng: &mut XorShift64) -> Req {
    let mut path = String::new();
    let mut params = Vec::new();
    for seg in &route.segments {
        path.push('/');
        let value = match seg {
            Segment::Static(text) => {
                path.push_str(text);
                continue;
            }
            Segment::Param(name) => param_value(route, name, rng),
            Segment::Glob(_) => {
                let parts: Vec<&str> = (0..rng.between(1, 3)).map(|_| *rng.pick(WORDS)).collect();
                parts.join("/")
            }
        };
        path.push_str(&value);
        params.push(value);
    }
    if rng.chance(QUERY_PERCENT) {
        path.push_str(&format!("?page={}&sort=name", rng.between(1, 50)));
    }
    let payload = route.method.is_write().then(|| payload(rng));
    let param_refs: Vec<&str> = params.iter().map(String::as_str).collect();
    let expected = mixed_expected(route.index, &param_refs, payload.as_ref());
    Req {
        route: route.index,
        method: route.method,
        path,
        params,
        body: payload.as_ref().map(Payload::to_json),
        payload,
        status: 200,
        expected,
    }
}

fn param_value(route: &Route, name: &str, rng: &mut XorShift64) -> String {
    match (route.shape, name) {
        (Shape::Nested, "a") => format!("{}{}", rng.pick(ORGS), rng.between(1, 99)),
        (Shape::Constrained, _) => rng.between(1, 999_999_999).to_string(),
        (_, _) if rng.chance(20) => format!("{}-{}", rng.pick(ORGS), rng.between(1, 999)),
        _ => rng.between(1, 999_999).to_string(),
    }
}

fn payload(rng: &mut XorShift64) -> Payload {
    const ALPHANUM: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let name: String = (0..rng.between(4, 12))
        .map(|_| char::from(*rng.pick(ALPHANUM)))
        .collect();
    let owner = rng.between(1, 10_000);
    Payload {
        id: rng.between(1, 1_000_000),
        delta: rng.between(0, 2_000_000) as i64 - 1_000_000,
        score: rng.between(0, 3_999) as f64 / 4.0,
        active: rng.chance(50),
        name: format!("name-{name}"),
        tags: (0..rng.between(0, 8))
            .map(|_| rng.between(0, 9_999) as u32)
            .collect(),
        note: match rng.chance(33) {
            true => None,
            false => Some(format!("note {} {}", rng.pick(WORDS), rng.pick(WORDS))),
        },
        owner: Owner {
            id: owner,
            name: format!("owner-{owner}"),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The naive reference matcher: a path's segments against a route's,
    /// returning the parameter values on a match.
    fn matches(route: &Route, path: &str) -> Option<Vec<String>> {
        let path = path.split('?').next().unwrap_or_default();
        let parts: Vec<&str> = path.strip_prefix('/')?.split('/').collect();
        let mut params = Vec::new();
        let mut i = 0;
        for seg in &route.segments {
            match seg {
                Segment::Static(text) => {
                    if parts.get(i) != Some(&text.as_str()) {
                        return None;
                    }
                }
                Segment::Param(_) => {
                    let value = parts.get(i).filter(|v| !v.is_empty())?;
                    if route.digits_only && !value.bytes().all(|b| b.is_ascii_digit()) {
                        return None;
                    }
                    params.push((*value).to_owned());
                }
                Segment::Glob(_) => {
                    let rest = &parts[i.min(parts.len())..];
                    if rest.first().is_none_or(|s| s.is_empty()) {
                        return None;
                    }
                    params.push(rest.join("/"));
                    return Some(params);
                }
            }
            i += 1;
        }
        (i == parts.len()).then_some(params)
    }

    /// Whether some path could match both segment lists.
    fn overlap(a: &[Segment], a_digits: bool, b: &[Segment], b_digits: bool) -> bool {
        use Segment::*;
        let one = |x: &Segment, xd: bool, y: &Segment, yd: bool| match (x, y) {
            (Static(s), Static(t)) => s == t,
            (Static(s), Param(_)) => !yd || s.bytes().all(|c| c.is_ascii_digit()),
            (Param(_), Static(t)) => !xd || t.bytes().all(|c| c.is_ascii_digit()),
            _ => true,
        };
        match (a.first(), b.first()) {
            (None, None) => true,
            (Some(Glob(_)), Some(_)) | (Some(_), Some(Glob(_))) => true,
            (None, _) | (_, None) => false,
            (Some(x), Some(y)) => {
                one(x, a_digits, y, b_digits) && overlap(&a[1..], a_digits, &b[1..], b_digits)
            }
        }
    }

    fn within(value: usize, total: usize, percent: u32, tolerance: f64) -> bool {
        let got = value as f64 * 100.0 / total as f64;
        (got - f64::from(percent)).abs() <= tolerance
    }

    #[test]
    fn table_is_deterministic_and_pinned() {
        assert_eq!(mixed_routes(), mixed_routes());
        assert_eq!(mixed_requests(), mixed_requests());
        assert_eq!(mixed_table_hash(), mixed_table_hash());
        assert_eq!(
            mixed_table_hash(),
            MIXED_TABLE_HASH,
            "the table changed: if on purpose, update MIXED_TABLE_HASH to {:#018x}",
            mixed_table_hash()
        );
    }

    #[test]
    fn routes_follow_the_shape_and_method_mix() {
        let routes = mixed_routes();
        assert_eq!(routes.len(), MIXED_ROUTES);
        for (shape, percent) in Shape::ALL.into_iter().zip(SHAPE_PERCENT) {
            let of_shape: Vec<&Route> = routes.iter().filter(|r| r.shape == shape).collect();
            assert_eq!(
                of_shape.len(),
                MIXED_ROUTES * percent as usize / 100,
                "{shape:?}"
            );
            for (method, mp) in Method::ALL.into_iter().zip(METHOD_PERCENT) {
                let n = of_shape.iter().filter(|r| r.method == method).count();
                assert!(n >= 1, "{shape:?} has no {method}");
                assert!(
                    within(n, of_shape.len(), mp, 2.0),
                    "{shape:?} {method}: {n}"
                );
            }
        }
        for (method, percent) in Method::ALL.into_iter().zip(METHOD_PERCENT) {
            let n = routes.iter().filter(|r| r.method == method).count();
            assert!(within(n, routes.len(), percent, 0.5), "{method}: {n}");
        }
        let hot = routes.iter().filter(|r| r.hot).count();
        assert!(
            within(hot, routes.len(), HOT_PERCENT as u32, 1.5),
            "hot: {hot}"
        );
        // Hot routes are spread over the registration order.
        let early_hot = routes[..MIXED_ROUTES / 2].iter().filter(|r| r.hot).count();
        assert!(
            within(early_hot, hot, 50, 8.0),
            "{early_hot} of {hot} hot in the first half"
        );
    }

    #[test]
    fn requests_follow_the_mix() {
        let routes = mixed_routes();
        let reqs = mixed_requests();
        let total = reqs.len();
        assert_eq!(total, MIXED_REQUESTS);
        for (shape, percent) in Shape::ALL.into_iter().zip(SHAPE_PERCENT) {
            let n = reqs
                .iter()
                .filter(|q| routes[q.route].shape == shape)
                .count();
            assert!(within(n, total, percent, 2.0), "{shape:?}: {n}");
        }
        for (method, percent) in Method::ALL.into_iter().zip(METHOD_PERCENT) {
            let n = reqs.iter().filter(|q| q.method == method).count();
            assert!(within(n, total, percent, 2.0), "{method}: {n}");
        }
        let hot = reqs.iter().filter(|q| routes[q.route].hot).count();
        // Slightly above 70%: a one-route cell is all hot.
        assert!(within(hot, total, HOT_PICKS_PERCENT, 3.0), "hot: {hot}");
        let queries = reqs.iter().filter(|q| q.path.contains('?')).count();
        assert!(
            within(queries, total, QUERY_PERCENT, 2.0),
            "queries: {queries}"
        );
        let writes = reqs.iter().filter(|q| q.body.is_some()).count();
        assert!(within(writes, total, 33, 2.5), "writes: {writes}");
        // Most routes are requested at least once is not a goal, but the
        // table must reach beyond the hot set.
        let mut seen = vec![false; routes.len()];
        reqs.iter().for_each(|q| seen[q.route] = true);
        assert!(seen.iter().filter(|&&s| s).count() > 500);
    }

    #[test]
    fn every_request_matches_exactly_its_route() {
        let routes = mixed_routes();
        for q in mixed_requests() {
            let hits: Vec<(usize, Vec<String>)> = routes
                .iter()
                .filter(|r| r.method == q.method)
                .filter_map(|r| matches(r, &q.path).map(|p| (r.index, p)))
                .collect();
            assert_eq!(
                hits,
                [(q.route, q.params.clone())],
                "{} {}",
                q.method,
                q.path
            );
            // No route of another method matches either: no 405s.
            let any = routes
                .iter()
                .filter(|r| matches(r, &q.path).is_some())
                .count();
            assert_eq!(any, 1, "{} {}", q.method, q.path);
            assert!(q
                .path
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"/-?=&".contains(&b)));
        }
    }

    #[test]
    fn no_two_routes_overlap() {
        let routes = mixed_routes();
        for (i, a) in routes.iter().enumerate() {
            for b in &routes[i + 1..] {
                assert!(
                    !overlap(&a.segments, a.digits_only, &b.segments, b.digits_only),
                    "{} and {} can match the same path",
                    a.pattern,
                    b.pattern
                );
            }
        }
    }

    #[test]
    fn patterns_per_router() {
        let routes = mixed_routes();
        let find = |shape| routes.iter().find(|r| r.shape == shape).cloned();
        let c = find(Shape::Constrained).unwrap_or_else(|| unreachable!());
        let n = c.pattern.trim_start_matches("/c").trim_end_matches("/{id}");
        assert_eq!(c.tern_pattern, format!("/c{n}/{{id:u64}}"));
        assert_eq!(c.actix_pattern, format!("/c{n}/{{id:\\d+}}"));
        let g = find(Shape::Glob).unwrap_or_else(|| unreachable!());
        assert!(g.pattern.ends_with("/{*rest}") && g.tern_pattern == g.pattern);
        assert!(g.actix_pattern.ends_with("/{rest:.*}"));
        let a = find(Shape::Action).unwrap_or_else(|| unreachable!());
        assert!(ACTIONS
            .iter()
            .any(|w| a.pattern.ends_with(&format!("/{{id}}/{w}"))));
        assert!(routes.iter().all(|r| r.pattern.starts_with('/')));
    }

    #[test]
    fn expected_bodies() {
        let reqs = mixed_requests();
        let read = reqs
            .iter()
            .find(|q| q.method == Method::Get && q.params.len() == 2)
            .unwrap_or_else(|| unreachable!());
        let want = format!(
            r#"{{"route":{},"params":["{}","{}"]}}"#,
            read.route, read.params[0], read.params[1]
        );
        assert_eq!(read.expected, want.as_bytes());
        let write = reqs
            .iter()
            .find(|q| q.method == Method::Put)
            .unwrap_or_else(|| unreachable!());
        let p = write.payload.as_ref().unwrap_or_else(|| unreachable!());
        assert_eq!(write.body.as_deref(), Some(&p.to_json()[..]));
        let text = String::from_utf8_lossy(&write.expected).into_owned();
        assert!(text.ends_with(&format!(r#","sum":{},"len":{}}}"#, p.sum(), p.lengths())));
        // Float fields in the table are exact quarters.
        assert!(reqs
            .iter()
            .filter_map(|q| q.payload.as_ref())
            .all(|p| (p.score * 4.0).fract() == 0.0));
    }
}
