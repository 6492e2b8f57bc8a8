//! `Valid<T>`: the extractor that decodes and checks a contract, and the
//! response that checks one before sending it, each in the negotiated
//! format.

use http::{header, HeaderValue, StatusCode};
use tern::{config::InvalidResponses, Bytes, IntoResponse, Problem, Request, Response};
use tern_core::extract::FromRequest;

use std::sync::Arc;

use tern::settings::Settings;
use tern_core::extract::Rejection;

use crate::{
    cose::{Keyring, Seal},
    format::{answer_format, request_format},
    openapi::{problem_response, schema_of},
    Contract, Format, Violations,
};
use serde_json::json;
use tern_core::doc::Operation;

/// A value that keeps its contract.
///
/// As an extractor (the last argument: it reads the body): decodes the
/// body by its `Content-Type`, `application/json` or `application/cbor`
/// (`415` for another, `413` over the body limit, `400` for input that is
/// not JSON or CBOR at all), then checks the fields and answers `422`
/// listing **every** one that breaks the contract, each with its JSON
/// pointer and rule: a missing field (`required`), a value of the wrong
/// type (`type`, `enum`), a field the contract does not have
/// (`additionalProperties`), a broken rule (`length`, `range`, ...):
///
/// ```json
/// {"status": 422, "title": "Unprocessable Entity",
///  "detail": "2 values break their contract: /name must have 1 to 80 characters (it has 0) (length); ...",
///  "errors": [{"pointer": "/name", "rule": "length", "detail": "must have 1 to 80 characters (it has 0)"},
///             {"pointer": "/tags/2", "rule": "length", "detail": "must have at most 20 characters (it has 31)"}]}
/// ```
///
/// As a response: checks the value, then encodes it in the format the
/// request's `Accept` prefers, else the request's own format, else JSON
/// (`406` when `Accept` allows neither). The answer to a sealed
/// (`application/cose`) request is sealed the same way, never plaintext:
/// `406` when `Accept` does not allow `application/cose`, `500` (a
/// problem, no payload) when it cannot be sealed. So are its problems
/// once it is opened: the `422` (which may quote the payload) is sealed
/// with the request's key, its status kept, the problem document in CBOR,
/// whatever `Accept` says (a problem is not turned into a `406`); one
/// that cannot be sealed is sent without its detail. Refusals before
/// the request is opened (an unknown key, a bad tag: `400`, `401`) are
/// plaintext and say nothing of the payload. A problem the handler
/// itself returns (`Err(Problem)` from `Result<Valid<T>, Problem>`, a
/// `?` on an error that renders as one) is sealed the same way; any other
/// answer it makes without `Valid<T>` (`Err((StatusCode, String))`) is
/// plaintext that may quote the payload, so it is replaced by a sealed
/// problem of its status (`500` when that is not an error status), its
/// body not sent. In production a sealed `500`'s detail is logged and
/// not sent, as for a plaintext one. A value that breaks its contract
/// is the handler's bug: in development a `500` whose detail names each
/// broken rule; in production it is logged and, by
/// `TERN_INVALID_RESPONSES`, sent (default) or replaced by a `500`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Valid<T>(pub T);

impl<T> std::ops::Deref for Valid<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

impl<S, T> FromRequest<S> for Valid<T>
where
    S: Send + Sync,
    T: Contract + Send,
{
    type Rejection = Response;

    /// Reads the request; keeps nothing of it.
    const KEEPS_REQUEST: bool = false;

    async fn from_request(req: Request, state: &S) -> Result<Self, Response> {
        let format = request_format(req.headers()).map_err(IntoResponse::into_response)?;
        let keyring = if format == Format::Cose {
            let Some(keyring) = Settings::<Keyring>::of(&req) else {
                return Err(Rejection::unsupported_media_type(
                    "this app has no COSE keys: send `application/json` or `application/cbor`",
                )
                .into_response());
            };
            Some(keyring)
        } else {
            None
        };
        let bytes = Bytes::from_request(req, state)
            .await
            .map_err(IntoResponse::into_response)?;
        let value: T = match keyring {
            Some(keyring) => {
                // Refused before it is opened (no key, a bad tag, a
                // replay): plaintext, which tells nothing of the payload.
                let opened = keyring
                    .open(&bytes)
                    .await
                    .map_err(IntoResponse::into_response)?;
                // The answer is sealed the same way, with the keyring that
                // opened the request (wherever the answer is made); so is
                // every problem from here on, which may quote the payload.
                let sealed = Arc::new(SealedWith {
                    seal: opened.seal,
                    kid: opened.kid,
                    keyring: keyring.0,
                });
                let value = crate::shape::decode::<T>(format, &opened.payload)
                    .map_err(|problem| sealed_problem(problem, &sealed))?;
                // An answer the handler makes without `Valid<T>` (its
                // `Err(Problem)`) is sealed on its way out of the handler.
                let finish_with = Arc::clone(&sealed);
                let finish: tern::__private::Finish =
                    Arc::new(move |res| seal_unanswered(res, &finish_with));
                if !(tern::__private::set_negotiation_hint(sealed.clone())
                    && tern::__private::set_negotiation_finish(finish))
                {
                    // The handler answers with a type that is not
                    // negotiated (`Json<T>`, `String`, ...): its answer
                    // would go out in plaintext. Fail closed.
                    let problem = Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                        .with_detail(
                            "the answer to this sealed (application/cose) request could not be \
                             sealed: its handler does not answer with a contract (`Valid<T>`)",
                        )
                        .into_response();
                    return Err(sealed_problem(problem, &sealed));
                }
                value
            }
            None => crate::shape::decode::<T>(format, &bytes)?,
        };
        Ok(Valid(value))
    }
    fn describe(op: &mut Operation) {
        let schema = schema_of::<T>(op);
        op.request_body = Some(json!({
            "required": true,
            "content": {
                "application/json": { "schema": schema },
                "application/cbor": { "schema": schema },
                "application/cose": {
                    "schema": { "type": "string", "contentMediaType": "application/cose",
                        "description": "a COSE_Encrypt0, COSE_Mac0 or COSE_Sign1 whose payload is the CBOR form" },
                },
            },
        }));
        for (status, why) in [
            ("400", "The body is not valid JSON, CBOR or COSE."),
            (
                "401",
                "A COSE body names an unknown key, does not verify, or is a replay.",
            ),
            (
                "413",
                "The body is larger than the limit (TERN_MAX_BODY_BYTES).",
            ),
            (
                "415",
                "The body is neither application/json nor application/cbor.",
            ),
            (
                "422",
                "Values break the contract (missing, of the wrong type, unknown, or breaking a rule): `errors` lists each, with its JSON pointer and rule.",
            ),
        ] {
            problem_response(op, status, why);
        }
    }
}

impl<T: Contract> IntoResponse for Valid<T> {
    const NEGOTIATED: bool = true;

    fn into_response(self) -> Response {
        let negotiated = tern::__private::take_negotiation().unwrap_or_default();
        let request = negotiated
            .content_type
            .as_ref()
            .and_then(Format::of_content_type);
        let sealed = negotiated
            .hint
            .and_then(|h| h.downcast::<SealedWith>().ok());
        if request == Some(Format::Cose) && sealed.is_none() {
            // A sealed body that `Valid<T>` did not open (the handler read
            // it some other way): there is no key to seal the answer
            // with, and its CBOR is plaintext. Fail closed.
            return Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail(
                    "the answer to this sealed (application/cose) request could not be sealed: \
                     its body was not opened by `Valid<T>`",
                )
                .into_response();
        }
        let format = match answer_format(negotiated.accept.as_ref(), request, sealed.is_some()) {
            Ok(format) => format,
            Err(not_acceptable) => return not_acceptable.into_response(),
        };
        if let Err(violations) = self.0.validate() {
            let policy = tern::__private::current_config(|c| {
                c.is_production().then_some(c.invalid_responses)
            })
            .flatten();
            tracing::error!(
                contract = T::NAME,
                violations = %violations,
                "a handler's answer breaks its contract"
            );
            if policy != Some(InvalidResponses::LogAndSend) {
                // Development, tests, or production set to `fail`. Its
                // detail quotes the answer: sealed like the answer.
                let problem = invalid(StatusCode::INTERNAL_SERVER_ERROR, &violations);
                return match (format, &sealed) {
                    (Format::Cose, Some(sealed)) => sealed_problem(problem, sealed),
                    _ => problem,
                };
            }
        }
        match (format, sealed) {
            (Format::Cose, Some(sealed)) => sealed_answer(&self.0, &sealed),
            // `answer_format` gives a sealed request COSE or a 406, and
            // an unsealed one never COSE; fail closed all the same.
            (_, Some(_)) | (Format::Cose, None) => Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
                .with_detail("the answer to this request could not be sealed")
                .into_response(),
            (format, None) => encoded(&self.0, format),
        }
    }

    fn describe(op: &mut Operation) {
        let schema = schema_of::<T>(op);
        op.responses.insert(
            "200".to_owned(),
            json!({
                "description": format!("A `{}`, as JSON or CBOR by `Accept`.", T::NAME),
                "content": {
                    "application/json": { "schema": schema },
                    "application/cbor": { "schema": schema },
                },
            }),
        );
        problem_response(
            op,
            "406",
            "`Accept` allows neither application/json nor application/cbor (for a sealed \
             request: does not allow application/cose).",
        );
    }
}

/// `value` as a `200` in `format`.
pub(crate) fn encoded<T: serde::Serialize>(value: &T, format: Format) -> Response {
    match format.encode(value) {
        Ok(bytes) => {
            let mut res = Response::new(tern::body::Body::from(bytes));
            res.headers_mut().insert(
                header::CONTENT_TYPE,
                HeaderValue::from_static(format.media_type()),
            );
            res
        }
        Err(e) => Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
            .with_detail(format!(
                "the answer could not be encoded as {format:?}: {e}"
            ))
            .into_response(),
    }
}

/// How the request was sealed: its answer is sealed the same way.
struct SealedWith {
    seal: Seal,
    kid: Vec<u8>,
    keyring: Arc<Keyring>,
}

/// `value` in CBOR, sealed like the request.
fn sealed_answer<T: serde::Serialize>(value: &T, sealed: &SealedWith) -> Response {
    match seal_cbor(value, sealed) {
        Ok(res) => res,
        Err(e) => Problem::new(StatusCode::INTERNAL_SERVER_ERROR)
            .with_detail(format!("the answer could not be sealed: {e}"))
            .into_response(),
    }
}

/// `value` in CBOR, sealed like the request, as an `application/cose`
/// response (status 200): the one sealing of answers and problems.
fn seal_cbor<T: serde::Serialize>(value: &T, sealed: &SealedWith) -> Result<Response, String> {
    let bytes = Format::Cbor
        .encode(value)
        .and_then(|cbor| sealed.keyring.seal_answer(sealed.seal, &sealed.kid, &cbor))?;
    let mut res = Response::new(tern::body::Body::from(Bytes::from(bytes)));
    res.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/cose"),
    );
    Ok(res)
}

/// `problem` (a problem response) sealed like the request was: its status,
/// `application/cose`, and the problem document in CBOR as the payload, as
/// a sealed answer carries its value. The `Problem` is not left in the
/// response's extensions, so that an app's problem renderer cannot render
/// it again in plaintext. When it cannot be sealed (no key to sign with),
/// a problem of the same status that tells nothing of the request.
fn sealed_problem(problem: Response, sealed: &SealedWith) -> Response {
    let status = problem.status();
    let Some(document) = problem.extensions().get::<Problem>() else {
        return unsealable(status);
    };
    // Tern hides a 500's detail in production by its `Problem`, which a
    // sealed answer no longer carries: hidden here, before sealing.
    let hidden;
    let document = if status == StatusCode::INTERNAL_SERVER_ERROR
        && document.detail() != HIDDEN_DETAIL
        && tern::__private::current_config(|c| c.is_production()).unwrap_or(false)
    {
        tracing::error!(
            detail = document.detail(),
            "answered 500 to a sealed request (in production the detail is logged, not sent)"
        );
        hidden = Problem::new(StatusCode::INTERNAL_SERVER_ERROR).with_detail(HIDDEN_DETAIL);
        &hidden
    } else {
        document
    };
    match seal_cbor(document, sealed) {
        Ok(mut res) => {
            *res.status_mut() = status;
            res
        }
        Err(e) => {
            tracing::error!(error = %e, "a problem with a sealed request could not be sealed");
            unsealable(status)
        }
    }
}

/// The handler's own answer to a sealed request, made without the key
/// (no negotiated answer took the negotiation): a problem is sealed like
/// the `422`; anything else is plaintext that may quote the payload, and
/// gives way to a sealed problem of its status (`500` when that is not
/// an error: a sealed request's success is a contract).
fn seal_unanswered(res: Response, sealed: &SealedWith) -> Response {
    if res.extensions().get::<Problem>().is_some() {
        return sealed_problem(res, sealed);
    }
    let status = res.status();
    let status = if status.is_client_error() || status.is_server_error() {
        status
    } else {
        StatusCode::INTERNAL_SERVER_ERROR
    };
    tracing::warn!(
        status = res.status().as_u16(),
        "a handler answered a sealed request with neither a contract nor a problem; its body \
         is not sent"
    );
    let problem = Problem::new(status)
        .with_detail(
            "the answer to this sealed (application/cose) request could not be sealed: its \
             handler answered with neither a contract (`Valid<T>`) nor a problem",
        )
        .into_response();
    sealed_problem(problem, sealed)
}

/// What a `500` says in production, as Tern's own (its detail, which
/// may name internals, is logged and not sent; sealed or not).
const HIDDEN_DETAIL: &str = "the server failed to answer this request";

/// The problem of `status` for a sealed request whose problem cannot be
/// sealed: nothing of the request in it.
fn unsealable(status: StatusCode) -> Response {
    Problem::new(status)
        .with_detail(
            "the problem with this sealed (application/cose) request cannot be sealed, so its \
             detail is not sent in plaintext",
        )
        .into_response()
}

/// The problem listing `violations`.
pub(crate) fn invalid(status: StatusCode, violations: &Violations) -> Response {
    let detail = if status == StatusCode::INTERNAL_SERVER_ERROR {
        format!("the handler's answer breaks its contract: {violations}")
    } else {
        violations.summary()
    };
    let problem = Problem::new(status)
        .with_detail(detail)
        .with_extension("errors", violations.as_slice());
    if violations.cut() > 0 {
        // Past `Violations::LISTED`: counted, not listed.
        problem
            .with_extension("errorsCut", violations.cut())
            .into_response()
    } else {
        problem.into_response()
    }
}
