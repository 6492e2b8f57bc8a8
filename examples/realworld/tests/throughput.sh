#!/usr/bin/env bash
# GET /api/articles?limit=20 with 20 seeded articles (each with two tags
# and a favourite), on SQLite and on PostgreSQL: wrk, one thread, 16
# connections, 3 rounds of 10 s each, requests per second (median and
# spread). Release build. Needs wrk (`apt-get install -y wrk`) and, for
# PostgreSQL, POSTGRES_URL. Run from the repository's root:
#     bash examples/realworld/tests/throughput.sh
set -euo pipefail
cargo build -q --release --locked -p example-realworld
dir=$(mktemp -d)
port=3931
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
api=http://127.0.0.1:$port/api
json='content-type: application/json'
for db in sqlite postgres; do
    case $db in
        sqlite) url="sqlite://$dir/conduit.db" ;;
        postgres)
            [ -n "${POSTGRES_URL:-}" ] || { echo "postgres: skipped (POSTGRES_URL unset)"; continue; }
            psql -q "$POSTGRES_URL" -c 'DROP SCHEMA IF EXISTS realworld_bench CASCADE' -c 'CREATE SCHEMA realworld_bench'
            url="$POSTGRES_URL?options[search_path]=realworld_bench" ;;
    esac
    DATABASE_URL="$url" TERN_ADDR=127.0.0.1:$port ./target/release/example-realworld >"$dir/$db.log" 2>&1 &
    pid=$!
    for _ in $(seq 1 100); do curl -fsS "$api/tags" >/dev/null 2>&1 && break; sleep 0.1; done
    token=$(curl -fsS -H "$json" -d '{"user":{"username":"bench","email":"bench@example.com","password":"bench password"}}' \
        "$api/users" | sed 's/.*"token":"\([^"]*\)".*/\1/')
    for i in $(seq 1 20); do
        slug=$(curl -fsS -H "$json" -H "authorization: Token $token" \
            -d "{\"article\":{\"title\":\"Article $i\",\"description\":\"About $i\",\"body\":\"Text $i\",\"tagList\":[\"t$i\",\"all\"]}}" \
            "$api/articles" | sed 's/.*"slug":"\([^"]*\)".*/\1/')
        curl -fsS -X POST -H "authorization: Token $token" "$api/articles/$slug/favorite" >/dev/null
    done
    test "$(curl -fsS "$api/articles?limit=20" | grep -o '"slug"' | wc -l)" = 20
    rates=()
    for round in 1 2 3; do
        rate=$(wrk -t1 -c16 -d10s "$api/articles?limit=20" | awk '/Requests\/sec/ {print $2}')
        echo "$db round $round: $rate req/s"
        rates+=("$rate")
    done
    printf '%s\n' "${rates[@]}" | sort -n | awk -v db=$db '{a[NR]=$1} END {printf "%s: median %s req/s (min %s, max %s), GET /api/articles?limit=20, 20 articles\n", db, a[2], a[1], a[3]}'
    kill -TERM $pid; wait $pid || true; pid=
done
