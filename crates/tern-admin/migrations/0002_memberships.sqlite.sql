-- Group memberships get a key of their own (the admin's pages address a
-- row by one key): `tern_admin_user_groups` becomes
-- `tern_admin_memberships`, its rows kept.
CREATE TABLE tern_admin_memberships (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    user_id BIGINT NOT NULL REFERENCES tern_users (id) ON DELETE CASCADE,
    group_id BIGINT NOT NULL REFERENCES tern_admin_groups (id) ON DELETE CASCADE,
    UNIQUE (user_id, group_id)
);
CREATE INDEX tern_admin_memberships_group ON tern_admin_memberships (group_id);
INSERT INTO tern_admin_memberships (user_id, group_id)
    SELECT user_id, group_id FROM tern_admin_user_groups;
DROP TABLE tern_admin_user_groups;
