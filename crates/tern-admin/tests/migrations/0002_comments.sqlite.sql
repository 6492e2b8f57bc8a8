-- A table that references posts: the admin's foreign-key select and the
-- delete page's "also deleted" count.
CREATE TABLE comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    post_id BIGINT NOT NULL REFERENCES posts (id) ON DELETE CASCADE,
    body TEXT NOT NULL
);
