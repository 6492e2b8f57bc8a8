-- The admin's tables: groups, their members, permissions (of a user or
-- of a group, per model and action) and the audit log.
CREATE TABLE tern_admin_groups (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL UNIQUE
);

CREATE TABLE tern_admin_user_groups (
    user_id BIGINT NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    group_id BIGINT NOT NULL REFERENCES tern_admin_groups (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, group_id)
);
CREATE INDEX tern_admin_user_groups_group ON tern_admin_user_groups (group_id);

CREATE TABLE tern_admin_permissions (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    group_id BIGINT NULL REFERENCES tern_admin_groups (id) ON DELETE CASCADE,
    model TEXT NOT NULL,
    action TEXT NOT NULL CHECK (action IN ('view', 'add', 'change', 'delete')),
    CHECK ((user_id IS NULL) <> (group_id IS NULL))
);
CREATE UNIQUE INDEX tern_admin_permissions_user ON tern_admin_permissions (user_id, model, action) WHERE user_id IS NOT NULL;
CREATE UNIQUE INDEX tern_admin_permissions_group ON tern_admin_permissions (group_id, model, action) WHERE group_id IS NOT NULL;

-- `at`: unix seconds, as sessions. `before`/`after`: JSON text (an
-- object of column -> value, secrets masked) on both databases.
CREATE TABLE tern_admin_log (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at BIGINT NOT NULL,
    user_id BIGINT NULL REFERENCES tern_users (id) ON DELETE SET NULL,
    username TEXT NOT NULL,
    model TEXT NOT NULL,
    object_id TEXT NOT NULL,
    object_label TEXT NOT NULL,
    action TEXT NOT NULL,
    before TEXT NULL,
    after TEXT NULL
);
CREATE INDEX tern_admin_log_object ON tern_admin_log (model, object_id);
CREATE INDEX tern_admin_log_at ON tern_admin_log (at);
