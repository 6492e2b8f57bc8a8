-- API tokens: opaque secrets for clients that send `Authorization`
-- instead of a cookie. Only the secret's SHA-256 digest is kept (a
-- stolen table holds no usable token); scopes are a space-separated
-- list (`*`: every scope); times in unix seconds, as sessions'.
CREATE TABLE tern_api_tokens (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    token_hash TEXT NOT NULL UNIQUE,
    name TEXT NOT NULL,
    scopes TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NULL,
    last_used BIGINT NULL
);
CREATE INDEX tern_api_tokens_user ON tern_api_tokens (user_id);
