//! Extractors: typed handler arguments built from the request.
//!
//! Every extractor implements [`FromRequestParts`] (reads the head: any
//! number of them, in any order) or [`FromRequest`] (reads the body: at
//! most one, the last argument). A failed extraction answers the client
//! with its rejection, a `problem+json` naming what was wrong, and the
//! handler does not run.
//!
//! | extractor | reads | rejection |
//! |---|---|---|
//! | [`Path<T>`] | route parameters | `400` naming the parameter |
//! | [`Query<T>`] | the query string (lists, nested maps) | `400` naming the field |
//! | [`Json<T>`](crate::Json) | a JSON body | `415`, `413`, `400` malformed, `422` wrong shape |
//! | [`Form<T>`] | a urlencoded body | `415`, `413`, `400` naming the field |
//! | `Bytes`, `String` | the body | `413`, `400` (not UTF-8) |
//! | [`State<T>`] | the app state | — |
//! | [`Extension<T>`] | a value set by middleware | `500` if absent |
//! | [`Multipart`] | a `multipart/form-data` body, field by field | `415`, `413` naming the field, `400` |
//! | [`TypedHeader<T>`] | one header, parsed (`UserAgent`, `Authorization<Bearer>`, ...) | `400` naming the header |
//! | [`Cookies`] | plain, signed and private cookies | — |
//! | [`Host`], [`ClientIp`], [`PeerAddr`], [`Scheme`], [`RequestId`] | connection and headers | `400` if no host |
//! | [`Urls`] | URLs of named routes | — |
//! | `Method`, `Uri`, `HeaderMap`, `Version`, `Request` | the request itself | — |
//! | `Option<T>` | `T`, or `None` when it is absent (no such header, no query string, no body) | `T`'s, when it is there but invalid |
//! | `Result<T, R>` | `T`, or its rejection `R` for the handler to answer | — |

pub(crate) mod body;
mod client;
pub(crate) use client::client_ip;
#[cfg(feature = "cookies")]
pub mod cookie;
pub(crate) mod de;
mod extension;
pub(crate) mod form;
mod host;
#[cfg(feature = "multipart")]
mod multipart;
mod path;
pub(crate) mod probe;
mod query;
mod state;
#[cfg(feature = "typed-header")]
mod typed_header;

pub use crate::settings::Settings;
pub use client::{ClientIp, PeerAddr, RequestId, Scheme, Urls};
#[cfg(feature = "cookies")]
pub use cookie::Cookies;
pub use extension::Extension;
pub use form::Form;
pub use host::Host;
#[cfg(feature = "multipart")]
pub use multipart::{Field, Multipart};
pub use path::Path;
pub use query::Query;
pub use state::{FromRef, State};
pub use tern_core::extract::{
    FromRequest, FromRequestParts, OptionalFromRequest, OptionalFromRequestParts, Rejection,
};
#[cfg(feature = "typed-header")]
pub use typed_header::TypedHeader;

pub(crate) use host::{host_of, strip_port};
