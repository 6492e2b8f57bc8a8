-- Superusers: every right in the admin, with no permission rows. Until
-- now staff meant "the admin's": existing staff accounts keep all
-- their rights by becoming superusers.
ALTER TABLE tern_users ADD COLUMN is_superuser BOOLEAN NOT NULL DEFAULT FALSE;
UPDATE tern_users SET is_superuser = is_staff;
