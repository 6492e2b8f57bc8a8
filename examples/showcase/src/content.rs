//! What the home page says: Tern's features, its measured figures (each
//! with where it comes from), the showcase's routes.

use crate::site::{Feature, Figure};

pub(crate) const FEATURES: &[Feature] = &[
    Feature { name: "An engine on hyper 1", text: "HTTP/1.1 with keep-alive and pipelining, HTTP/2 by prior knowledge and over TLS with ALPN, exact Content-Length for fixed bodies, chunked streaming, and a graceful drain on SIGTERM that finishes what is in flight and closes idle connections." },
    Feature { name: "Limits on by default", text: "Head size and header count (431), body size (413 before reading when Content-Length says so), header-read, keep-alive, request and write timeouts, a connection limit, and HTTP/2 stream and reset-flood limits, each a setting with a documented default." },
    Feature { name: "Our own router", text: "Typed constraints ({id:u64}, {slug:slug}, your own), globs, host routing, named routes with URL building, 404 and 405 with Allow, HEAD from GET, automatic OPTIONS, a trailing-slash policy, and conflicts reported at build time naming both routes." },
    Feature { name: "Extractors that say what was wrong", text: "Path, Query (lists both ways, nested maps), Json, Form, Multipart with per-field limits, cookies plain, signed or private, typed headers, the client IP from trusted proxies only; a bad value is a problem+json naming the field." },
    Feature { name: "problem+json everywhere", text: "Every error a client sees is an RFC 9457 problem with an actionable detail; a panic costs one 500; production hides internal details and logs them. Browsers get HTML pages from the same renderer." },
    Feature { name: "Middleware composed once", text: "from_fn, from_fn_with_state and any tower Layer, on the whole app, a scope or a route, composed when the app is built rather than on every request." },
    Feature { name: "Production safety", text: "Settings from the environment and tern.toml, every one documented; production refuses a weak SECRET_KEY and a missing ALLOWED_HOSTS, sets security headers, and numbers every request." },
    Feature { name: "A test client in the box", text: "TestClient runs the app in process through the same pipeline as a socket, WebSockets included, so handler tests need no port." },
    Feature { name: "Schema contracts", text: "One Rust type gives validation, the JSON Schema, the OpenAPI document and the extractor that enforces them, in JSON, CBOR and COSE, with bounded parsers tested at their limits." },
    Feature { name: "Data on sqlx", text: "SQLite by default with no setup, PostgreSQL by URL, migrations embedded in the binary, models without reflection, encrypted fields that fail closed." },
    Feature { name: "Accounts", text: "Argon2id passwords with a pepper, sessions in the database or Redis, CSRF that fails closed, a login throttle per account and address, rate limits that see the real client behind a proxy." },
    Feature { name: "Realtime", text: "WebSockets (RFC 6455 and RFC 8441 over HTTP/2) checked by the Autobahn cases, topics with presence, server-sent events with resume, fan-out across processes over Redis or NATS, and slow consumers that delay no one." },
    Feature { name: "Static files done right", text: "Strong ETags, Last-Modified, 304s, ranges with If-Range, precompressed siblings, fingerprinted URLs cached for a year, files embedded in the binary, and no way out of the root in any spelling." },
    Feature { name: "Templates checked at build time", text: "askama pages with layouts and partials, escaped by default, rendered per request as this one is." },
    Feature { name: "Compression", text: "gzip, brotli and zstd for text above a size floor, never for ranges, images or event streams." },
    Feature { name: "A bench lab in the repository", text: "Tern against bare hyper, axum and actix-web on the same endpoints, real sockets, several rounds, medians and spread, the machine and the method with every figure, and a regression gate." },
    Feature { name: "A hardening suite", text: "Request smuggling, an llhttp oracle, HTTP/2 floods, fuzzing, slow clients, 10,000 connections, restarts under load with nothing lost, third-party tools against a real server in CI." },
];

pub(crate) const FIGURES: &[Figure] = &[
    Figure {
        workload: "10,000 idle WebSockets held on one core",
        figure: "JSON path at 1.03x of none held; 12.5 KiB per socket",
        source: "tern-bench realtime, 5 rounds",
    },
    Figure {
        workload: "Broadcast to 10,000 subscribers",
        figure: "p50 69 ms, p99 150 ms, one server core",
        source: "tern-bench realtime, 5 rounds",
    },
    Figure {
        workload: "Bursts to 1,000 subscribers",
        figure: "1.2 µs of server CPU per delivery",
        source: "tern-bench realtime, round 2",
    },
    Figure {
        workload: "A client that stops reading",
        figure: "the others' latency within the noise",
        source: "tern-bench realtime, 5 rounds",
    },
    Figure {
        workload: "WebSocket conformance",
        figure: "Autobahn: 301 cases, 0 failed",
        source: "kosoku in CI",
    },
    Figure {
        workload: "Server CPU per request, 1,000-route table",
        figure: "1.28x bare hyper, 1.14x axum (work in progress)",
        source: "tern-bench run, 5 rounds",
    },
];

pub(crate) const ROUTES: &[(&str, &str, &str)] = &[
    ("/json", "GET /json", "a serialized JSON message"),
    ("/users/42", "GET /users/{id:u64}", "a typed path parameter"),
    (
        "/search?q=tern&tag=fast&tag=honest",
        "GET /search?q=&tag=",
        "a query string with a list",
    ),
    (
        "/items",
        "GET /items",
        "a contract API in JSON, CBOR or COSE",
    ),
    ("/docs", "GET /docs", "the contract API's reference"),
    ("/openapi.json", "GET /openapi.json", "its OpenAPI document"),
    (
        "/notes",
        "GET /notes",
        "notes in a database, behind a login",
    ),
    ("/login", "GET /login", "the login page"),
    ("/chat", "GET /chat", "a chat with presence"),
    (
        "/guide",
        "GET /guide",
        "the docs, rendered from the repository's Markdown",
    ),
    ("/index.json", "GET /index.json", "the pages of this site"),
    ("/sitemap.xml", "GET /sitemap.xml", "the sitemap"),
    (
        "/llms.txt",
        "GET /llms.txt",
        "a static file, embedded in the binary",
    ),
    ("/health", "GET /health", "the health check"),
];
