//! Date-time columns on SQLite, written so that text order is time order.
//!
//! sqlx writes an `OffsetDateTime` to SQLite as RFC 3339 text with the
//! value's own offset and its fraction trimmed (`...:05Z` for a whole
//! second, `...:05.5Z` for half past), so `ORDER BY` on the text is not
//! chronological (`.` sorts before `Z`; `+02:00` mixes with `Z`).
//! `#[derive(Model)]` binds its `OffsetDateTime` fields through
//! [`SqliteTime`] instead: UTC, nine fraction digits, fixed width. sqlx
//! reads that text back as it reads its own, and PostgreSQL keeps its
//! native `timestamptz`.

use sqlx::{
    encode::IsNull, error::BoxDynError, sqlite::SqliteArgumentsBuffer, sqlite::SqliteTypeInfo,
    Encode, Sqlite, Type,
};
use time::{format_description::BorrowedFormatItem, macros::format_description, OffsetDateTime};

/// `2026-12-03T22:00:05.500000000Z`: every value as wide as every other
/// (years 0 to 9999), so that text order is time order.
const FORMAT: &[BorrowedFormatItem<'static>] =
    format_description!("[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:9]Z");

/// An `OffsetDateTime` (or none, for `NULL`) as SQLite stores it for a
/// model: see the module's docs. `#[derive(Model)]`'s generated code
/// names it; it is not for apps.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub struct SqliteTime<'a>(Option<&'a OffsetDateTime>);

/// The field types [`SqliteTime`] wraps: `OffsetDateTime` and
/// `Option<OffsetDateTime>`.
#[doc(hidden)]
pub trait AsSqliteTime {
    /// The value, bound the sortable way.
    fn as_sqlite_time(&self) -> SqliteTime<'_>;
}

impl AsSqliteTime for OffsetDateTime {
    fn as_sqlite_time(&self) -> SqliteTime<'_> {
        SqliteTime(Some(self))
    }
}

impl AsSqliteTime for Option<OffsetDateTime> {
    fn as_sqlite_time(&self) -> SqliteTime<'_> {
        SqliteTime(self.as_ref())
    }
}

impl SqliteTime<'_> {
    /// The text stored, `None` for `NULL`.
    pub fn text(&self) -> Result<Option<String>, time::error::Format> {
        self.0
            .map(|t| t.to_offset(time::UtcOffset::UTC).format(FORMAT))
            .transpose()
    }
}

impl Type<Sqlite> for SqliteTime<'_> {
    fn type_info() -> SqliteTypeInfo {
        <OffsetDateTime as Type<Sqlite>>::type_info()
    }
}

impl Encode<'_, Sqlite> for SqliteTime<'_> {
    fn encode_by_ref(&self, buf: &mut SqliteArgumentsBuffer) -> Result<IsNull, BoxDynError> {
        match self.text()? {
            Some(text) => Encode::<Sqlite>::encode(text, buf),
            None => Ok(IsNull::Yes),
        }
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use time::{Duration, OffsetDateTime, UtcOffset};

    use super::AsSqliteTime;

    fn text(t: OffsetDateTime) -> String {
        t.as_sqlite_time().text().unwrap().unwrap()
    }

    #[test]
    fn text_order_is_time_order() {
        let base = OffsetDateTime::from_unix_timestamp(1_800_000_000).unwrap();
        let east = UtcOffset::from_hms(2, 0, 0).unwrap();
        // Whole seconds, fractions, other offsets and nanoseconds, out of
        // order: sorting the text must sort the instants.
        let mut times = vec![
            base + Duration::milliseconds(500),
            base,
            (base + Duration::seconds(1)).to_offset(east),
            base + Duration::nanoseconds(1),
            (base - Duration::minutes(30)).to_offset(east),
            base + Duration::seconds(1) + Duration::nanoseconds(999_999_999),
        ];
        let mut by_text = times.clone();
        by_text.sort_by_key(|t| text(*t));
        times.sort();
        assert_eq!(by_text, times);
        assert_eq!(text(base), "2027-01-15T08:00:00.000000000Z");
    }

    #[test]
    fn none_is_null() {
        assert_eq!(
            None::<OffsetDateTime>.as_sqlite_time().text().unwrap(),
            None
        );
    }
}
