CREATE TABLE bench_rows (
    id BIGINT PRIMARY KEY,
    title TEXT NOT NULL,
    body TEXT NOT NULL,
    stars INTEGER NOT NULL
);
