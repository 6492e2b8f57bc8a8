//! `multipart/form-data`: uploads, with per-field and total limits.

use bytes::Bytes;
use http::StatusCode;
use http_body_util::BodyExt;
use tern_core::{extract::FromRequest, Request};

use super::Rejection;

/// A `multipart/form-data` body, read field by field as it arrives.
///
/// Limits, both enforced while reading: a field may not exceed
/// `TERN_MAX_MULTIPART_FIELD_BYTES` and the whole body not
/// `TERN_MAX_BODY_BYTES`; past either, reading fails with a `413` that
/// names the field. Another `Content-Type` is a `415`; a malformed body a
/// `400`.
///
/// ```
/// use tern::extract::Multipart;
///
/// async fn upload(mut form: Multipart) -> Result<String, tern::extract::Rejection> {
///     let mut out = Vec::new();
///     while let Some(field) = form.next_field().await? {
///         let name = field.name().unwrap_or("").to_owned();
///         let bytes = field.bytes().await?;
///         out.push(format!("{name}: {} bytes", bytes.len()));
///     }
///     Ok(out.join("\n"))
/// }
/// # let _: tern::routing::MethodRouter = tern::routing::post(upload);
/// ```
pub struct Multipart {
    inner: multer::Multipart<'static>,
    parts: usize,
    max_parts: usize,
}

/// The longest file name a part may carry (`NAME_MAX` on Linux and most
/// file systems); a longer one is a `400`.
const MAX_FILE_NAME_BYTES: usize = 255;

impl std::fmt::Debug for Multipart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Multipart")
    }
}

impl<S: Send + Sync> FromRequest<S> for Multipart {
    type Rejection = Rejection;

    /// Reads the request; keeps nothing of it.
    const KEEPS_REQUEST: bool = false;

    async fn from_request(req: Request, _: &S) -> Result<Self, Rejection> {
        let content_type = req
            .headers()
            .get(http::header::CONTENT_TYPE)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default();
        let boundary = multer::parse_boundary(content_type).map_err(|_| {
            Rejection::unsupported_media_type(
                "expected `Content-Type: multipart/form-data; boundary=...`",
            )
        })?;
        let (field_limit, total_limit, max_parts) = crate::context::with(req.extensions(), |c| {
            let l = &c.shared.config.limits;
            (
                l.max_multipart_field_bytes,
                l.max_body_bytes,
                l.max_multipart_parts,
            )
        })
        .unwrap_or_else(|| {
            let l = crate::config::Limits::default();
            (
                l.max_multipart_field_bytes,
                l.max_body_bytes,
                l.max_multipart_parts,
            )
        });
        let stream = req.into_body().into_data_stream();
        let constraints = multer::Constraints::new().size_limit(
            multer::SizeLimit::new()
                .whole_stream(total_limit)
                .per_field(field_limit),
        );
        Ok(Multipart {
            inner: multer::Multipart::with_constraints(stream, boundary, constraints),
            parts: 0,
            max_parts,
        })
    }
}

impl Multipart {
    /// The next field, or `None` after the last one.
    ///
    /// More parts than `TERN_MAX_MULTIPART_PARTS` is a `413`; a file name
    /// longer than 255 bytes is a `400`. A part may have at most 32
    /// headers (a `400` past that).
    pub async fn next_field(&mut self) -> Result<Option<Field>, Rejection> {
        let Some(inner) = self.inner.next_field().await.map_err(reject)? else {
            return Ok(None);
        };
        self.parts += 1;
        if self.parts > self.max_parts {
            return Err(Rejection::too_large(format!(
                "the multipart body has more than {} parts; the limit is TERN_MAX_MULTIPART_PARTS",
                self.max_parts
            )));
        }
        if inner
            .file_name()
            .is_some_and(|name| name.len() > MAX_FILE_NAME_BYTES)
        {
            return Err(Rejection::invalid(
                StatusCode::BAD_REQUEST,
                format!(
                    "the file name of the multipart field `{}` is longer than {MAX_FILE_NAME_BYTES} bytes",
                    super::de::shorten(inner.name().unwrap_or_default())
                ),
            ));
        }
        Ok(Some(Field { inner }))
    }
}

/// One field of a multipart body.
pub struct Field {
    inner: multer::Field<'static>,
}

impl std::fmt::Debug for Field {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Field").field("name", &self.name()).finish()
    }
}

impl Field {
    /// The field's name.
    pub fn name(&self) -> Option<&str> {
        self.inner.name()
    }

    /// The uploaded file's name, if the field is a file.
    pub fn file_name(&self) -> Option<&str> {
        self.inner.file_name()
    }

    /// The field's `Content-Type`, if given.
    pub fn content_type(&self) -> Option<&str> {
        self.inner.content_type().map(|m| m.essence_str())
    }

    /// The next chunk of the field's data, or `None` at its end.
    pub async fn chunk(&mut self) -> Result<Option<Bytes>, Rejection> {
        self.inner.chunk().await.map_err(reject)
    }

    /// The whole field.
    pub async fn bytes(self) -> Result<Bytes, Rejection> {
        self.inner.bytes().await.map_err(reject)
    }

    /// The whole field as text; `400` when it is not UTF-8.
    pub async fn text(self) -> Result<String, Rejection> {
        self.inner.text().await.map_err(reject)
    }
}

fn reject(e: multer::Error) -> Rejection {
    use multer::Error as E;
    match e {
        E::FieldSizeExceeded { limit, field_name } => Rejection::too_large(format!(
            "the multipart field `{}` is larger than the limit of {limit} bytes (TERN_MAX_MULTIPART_FIELD_BYTES)",
            super::de::shorten(&field_name.unwrap_or_default())
        ))
        .with_field(""),
        E::StreamSizeExceeded { limit } => Rejection::too_large(format!(
            "the multipart body is larger than the limit of {limit} bytes (TERN_MAX_BODY_BYTES)"
        )),
        E::StreamReadFailed(inner) => match inner.downcast::<tern_core::BodyError>() {
            Ok(body_err) => Rejection::from_body_error(*body_err),
            Err(other) => Rejection::invalid(StatusCode::BAD_REQUEST, format!("the multipart body could not be read: {other}")),
        },
        other => Rejection::invalid(StatusCode::BAD_REQUEST, format!("malformed multipart body: {}", super::de::shorten(&other.to_string()))),
    }
}
