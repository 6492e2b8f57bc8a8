-- Usernames kept as given, compared by `username_key`, their lower case
-- form (made by tern-auth in Rust, Unicode's, the same on both
-- databases; SQLite's NOCASE and lower() fold ASCII only). Rows from
-- 0001 were stored lower case already: their key is their name.
ALTER TABLE tern_users ADD COLUMN username_key TEXT NOT NULL DEFAULT '';
UPDATE tern_users SET username_key = username;
CREATE UNIQUE INDEX tern_users_username_ci ON tern_users (username_key);

-- An optional email, kept as given (trimmed), unique by its lower case
-- form; NULLs do not collide.
ALTER TABLE tern_users ADD COLUMN email TEXT;
ALTER TABLE tern_users ADD COLUMN email_key TEXT;
CREATE UNIQUE INDEX tern_users_email_ci ON tern_users (email_key);
