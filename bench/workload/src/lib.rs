//! What every server in Tern's bench lab serves, and what every request
//! expects, byte for byte: the single source of truth that the runner, the
//! peers (`bench/peers`) and their smoke test all read.
//!
//! ```
//! use tern_bench_workload as w;
//!
//! // The fixed endpoints: a GET, a content type and an exact body each.
//! let plaintext = &w::fixed()[0];
//! assert_eq!((&*plaintext.path, &*plaintext.body), ("/plaintext", &b"Hello, World!"[..]));
//! assert_eq!(w::body(w::MEDIUM_LEN).len(), 1_024);
//!
//! // The mixed workload: 1,000 routes, 4,096 requests with their answers.
//! let routes = w::mixed_routes();
//! let req = &w::mixed_requests()[0];
//! let route = &routes[req.route];
//! assert_eq!(req.method, route.method);
//! let params: Vec<&str> = req.params.iter().map(String::as_str).collect();
//! assert_eq!(req.expected, w::mixed_expected(route.index, &params, req.payload.as_ref()));
//! assert_eq!(w::mixed_table_hash(), w::MIXED_TABLE_HASH);
//! ```
//!
//! # Fixed endpoints
//!
//! | request                  | body                                         | `Content-Type`              |
//! |--------------------------|----------------------------------------------|-----------------------------|
//! | `GET /plaintext`         | `Hello, World!` ([`PLAINTEXT`])               | [`TEXT_PLAIN`]              |
//! | `GET /json`              | `{"message":"Hello, World!"}`, serialized per request | [`APPLICATION_JSON`] |
//! | `GET /small`             | [`body`]`(128)`                               | [`OCTET_STREAM`]            |
//! | `GET /medium`            | [`body`]`(1024)`                              | [`OCTET_STREAM`]            |
//! | `GET /large`             | [`body`]`(102400)`                            | [`OCTET_STREAM`]            |
//! | `GET /compression/text`  | [`compression_text`], gzip or br by `Accept-Encoding` | [`TEXT_PLAIN`]     |
//! | `GET /compression/json`  | [`compression_json`], gzip or br by `Accept-Encoding` | [`APPLICATION_JSON`] |
//! | `GET /user/{id}`         | [`user_body`]`(id)`: `{"id":ID,"name":"user-ID"}` | [`APPLICATION_JSON`]    |
//! | `GET /llms.txt`          | the file at [`llms_txt_path`], read from disk per request | [`TEXT_PLAIN`]  |
//!
//! Every answer is `200`. Only the two compression endpoints are
//! compressed; checks compare their bytes after decompression.
//!
//! # The mixed workload
//!
//! [`mixed_routes`] gives 1,000 routes of six [`Shape`]s, each with one
//! [`Method`] and its pattern in the syntax of each router (matchit/axum,
//! Tern, actix-web, and a plain [`Segment`] list). [`mixed_requests`]
//! gives the 4,096 requests replayed by every trial, each with its exact
//! expected answer ([`mixed_expected`]): reads answer
//! `{"route":N,"params":[...]}`, writes decode a [`Payload`] and answer
//! `{"route":N,"params":[...],"sum":S,"len":L}`. Every response is
//! `200 application/json`. Both tables come from fixed seeds and a PRNG
//! written here; [`mixed_table_hash`] identifies them in evidence files.

mod fixed;
mod mixed;
mod payload;
mod rng;
mod spin;

pub use fixed::{
    body, compression_json, compression_text, fixed, llms_txt_path, user_body, Fixed,
    APPLICATION_JSON, COMPRESSION_TEXT_LEN, JSON, JSON_MESSAGE, LARGE_LEN, LLMS_TXT, MEDIUM_LEN,
    OCTET_STREAM, PLAINTEXT, SMALL_LEN, TEXT_PLAIN,
};
pub use mixed::{
    mixed_expected, mixed_requests, mixed_routes, mixed_table_hash, Method, Req, Route, Segment,
    Shape, HOT_PERCENT, HOT_PICKS_PERCENT, METHOD_PERCENT, MIXED_REQUESTS, MIXED_ROUTES,
    MIXED_SEED, MIXED_TABLE_HASH, QUERY_PERCENT, SHAPE_PERCENT,
};
pub use payload::{Owner, Payload};
pub use spin::{iterations_for, spin};
