//! Date-times in JSON as UTC RFC 3339 with milliseconds, always:
//! `2026-12-04T01:02:05.000Z`. For serde's `with`:
//!
//! ```
//! use tern_data::OffsetDateTime;
//!
//! #[derive(serde::Serialize, serde::Deserialize)]
//! #[serde(rename_all = "camelCase")]
//! struct Article {
//!     #[serde(with = "tern_data::timestamp")]
//!     created_at: OffsetDateTime,
//!     #[serde(with = "tern_data::timestamp::option")]
//!     published_at: Option<OffsetDateTime>,
//! }
//! ```
//!
//! `time`'s own RFC 3339 (`time::serde::rfc3339`) keeps the value's
//! offset and drops the fraction on a whole second (`...:05Z`), which
//! clients that expect a fraction (RealWorld's checks) refuse; here every
//! value has three fraction digits (the rest is cut, not rounded) and
//! `Z`. Reading takes any RFC 3339 date-time, in any offset.

use serde::{de, Deserialize, Deserializer, Serializer};
use time::{
    format_description::{well_known::Rfc3339, BorrowedFormatItem},
    macros::format_description,
    OffsetDateTime, UtcOffset,
};

const FORMAT: &[BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z");

/// The text of `at`: UTC, three fraction digits, `Z`.
pub fn format(at: OffsetDateTime) -> Result<String, time::error::Format> {
    at.to_offset(UtcOffset::UTC).format(FORMAT)
}

/// Writes `at` as [`format()`] does (serde's `serialize_with`).
pub fn serialize<S: Serializer>(at: &OffsetDateTime, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format(*at).map_err(serde::ser::Error::custom)?)
}

/// Reads an RFC 3339 date-time in any offset (serde's
/// `deserialize_with`).
pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OffsetDateTime, D::Error> {
    let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
    OffsetDateTime::parse(&text, &Rfc3339).map_err(|e| {
        de::Error::custom(format!(
            "expected an RFC 3339 date-time (2026-12-04T01:02:05.000Z): {e}"
        ))
    })
}

/// The same for an `Option<OffsetDateTime>` (`null` for `None`):
/// `#[serde(with = "tern_data::timestamp::option")]`.
pub mod option {
    use serde::{Deserialize, Deserializer, Serializer};
    use time::OffsetDateTime;

    /// Writes `Some` as [`format`](super::format) does, `None` as `null`.
    pub fn serialize<S: Serializer>(at: &Option<OffsetDateTime>, s: S) -> Result<S::Ok, S::Error> {
        match at {
            Some(at) => super::serialize(at, s),
            None => s.serialize_none(),
        }
    }

    /// Reads `null` as `None`, else an RFC 3339 date-time.
    pub fn deserialize<'de, D: Deserializer<'de>>(
        d: D,
    ) -> Result<Option<OffsetDateTime>, D::Error> {
        #[derive(Deserialize)]
        struct At(#[serde(with = "super")] OffsetDateTime);
        Ok(Option::<At>::deserialize(d)?.map(|At(at)| at))
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use serde::{Deserialize, Serialize};
    use time::{Duration, OffsetDateTime, UtcOffset};

    #[derive(Debug, PartialEq, Serialize, Deserialize)]
    struct Row {
        #[serde(with = "super")]
        at: OffsetDateTime,
        #[serde(with = "super::option")]
        done: Option<OffsetDateTime>,
    }

    fn base() -> OffsetDateTime {
        // 2027-01-15T08:00:05Z, a whole second.
        OffsetDateTime::from_unix_timestamp(1_800_000_005).unwrap()
    }

    #[test]
    fn a_whole_second_has_three_fraction_digits() {
        assert_eq!(super::format(base()).unwrap(), "2027-01-15T08:00:05.000Z");
        let row = Row {
            at: base() + Duration::nanoseconds(123_999_999),
            done: None,
        };
        assert_eq!(
            serde_json::to_string(&row).unwrap(),
            r#"{"at":"2027-01-15T08:00:05.123Z","done":null}"#
        );
    }

    #[test]
    fn another_offset_becomes_utc() {
        let east = base().to_offset(UtcOffset::from_hms(2, 0, 0).unwrap());
        let row = Row {
            at: east,
            done: Some(east + Duration::milliseconds(500)),
        };
        assert_eq!(
            serde_json::to_value(&row).unwrap(),
            serde_json::json!({"at": "2027-01-15T08:00:05.000Z", "done": "2027-01-15T08:00:05.500Z"})
        );
    }

    #[test]
    fn reads_any_rfc_3339_and_refuses_other_text() {
        let row: Row = serde_json::from_str(
            r#"{"at":"2027-01-15T10:00:05+02:00","done":"2027-01-15T08:00:05.5Z"}"#,
        )
        .unwrap();
        assert_eq!(row.at, base());
        assert_eq!(row.done, Some(base() + Duration::milliseconds(500)));
        let e = serde_json::from_str::<Row>(r#"{"at":"yesterday","done":null}"#).unwrap_err();
        assert!(e.to_string().contains("RFC 3339"), "{e}");
    }
}
