CREATE TABLE tern_users (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    username TEXT NOT NULL UNIQUE,
    password_hash TEXT NOT NULL,
    is_staff BOOLEAN NOT NULL DEFAULT FALSE,
    is_active BOOLEAN NOT NULL DEFAULT TRUE,
    created_at BIGINT NOT NULL
);

CREATE TABLE tern_sessions (
    id_hash TEXT PRIMARY KEY,
    user_id BIGINT NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    csrf TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    last_seen BIGINT NOT NULL
);
CREATE INDEX tern_sessions_user ON tern_sessions (user_id);

CREATE TABLE tern_login_failures (
    key TEXT PRIMARY KEY,
    window_start BIGINT NOT NULL,
    failures INTEGER NOT NULL
);
