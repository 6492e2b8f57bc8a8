-- Conduit's tables beside tern-auth's `tern_users` (SQLite).
CREATE TABLE profiles (
    user_id INTEGER PRIMARY KEY REFERENCES tern_users (id) ON DELETE CASCADE,
    bio TEXT NULL,
    image TEXT NULL
);
CREATE TABLE follows (
    follower_id INTEGER NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    followee_id INTEGER NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    PRIMARY KEY (follower_id, followee_id)
);
CREATE TABLE articles (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    slug TEXT NOT NULL UNIQUE,
    title TEXT NOT NULL,
    description TEXT NOT NULL,
    body TEXT NOT NULL,
    tag_list TEXT NOT NULL,
    author_id INTEGER NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX articles_by_time ON articles (created_at, id);
CREATE INDEX articles_by_author ON articles (author_id);
CREATE TABLE article_tags (
    article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    tag TEXT NOT NULL,
    PRIMARY KEY (article_id, tag)
);
CREATE INDEX article_tags_by_tag ON article_tags (tag);
CREATE TABLE favorites (
    user_id INTEGER NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, article_id)
);
CREATE INDEX favorites_by_article ON favorites (article_id);
CREATE TABLE comments (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    article_id INTEGER NOT NULL REFERENCES articles (id) ON DELETE CASCADE,
    author_id INTEGER NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    body TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX comments_by_article ON comments (article_id);
