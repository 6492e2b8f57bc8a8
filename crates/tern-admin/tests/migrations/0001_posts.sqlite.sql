-- created_at as tern-data binds an OffsetDateTime on SQLite: UTC, nine
-- fraction digits, fixed width (sqlite_time.rs), so text order is time order.
CREATE TABLE posts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    status TEXT NOT NULL,
    published BOOLEAN NOT NULL DEFAULT FALSE,
    author_id BIGINT NULL REFERENCES tern_users (id) ON DELETE SET NULL,
    secret BLOB NOT NULL,
    created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%f000000Z', 'now'))
);
