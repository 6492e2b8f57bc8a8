-- A model of the types a form cannot type (encrypted bytes) or types
-- as text though it is no text column (a UUID).
CREATE TABLE gadgets (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    name TEXT NOT NULL,
    code BLOB NOT NULL,
    sealed BLOB NOT NULL
);

-- A UUID key made by the database, and rows that reference it.
CREATE TABLE kits (
    id BLOB PRIMARY KEY DEFAULT (randomblob(16)),
    name TEXT NOT NULL
);
CREATE TABLE parts (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    kit_id BLOB NOT NULL REFERENCES kits (id) ON DELETE CASCADE
);

-- A model that is also a contract (its rules checked on each save).
CREATE TABLE reviews (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    title TEXT NOT NULL,
    email TEXT NOT NULL,
    stars BIGINT NOT NULL
);
