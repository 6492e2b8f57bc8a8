#!/usr/bin/env bash
# Runs the third-party hardening checks against real Tern servers on
# 127.0.0.1 (examples/hardening-target, release build). Each check is
# bounded in time; the script exits non-zero when any check fails. Used by
# .ci/run; docs/hardening.md says what each check proves.
#
#   bash hardening/run.sh                    # every check
#   bash hardening/run.sh oracle smuggling   # some of: oracle smuggling h2 h2conformance boofuzz slow flood restart headers differential
set -euo pipefail
cd "$(dirname "$0")/.."

venv=target/hardening-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
"$venv/bin/pip" install -q --disable-pip-version-check -r hardening/requirements.txt
py="$venv/bin/python"

cargo build -q --release --locked -p example-hardening-target
bin=$PWD/target/release/example-hardening-target
# 10,000 connections need as many descriptors in the server and the client.
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# start_target NAME [VAR=VALUE ...]: starts a target with extra settings;
# sets $port and $pid.
start_target() {
  local name=$1
  shift
  # Below the kernel's ephemeral range (32768 and up here): a port there
  # may be the local end of some client connection, and the bind fails.
  # A port in use anyway (another test's server) gets another try.
  for _attempt in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 12000))
    env TERN_ADDR=127.0.0.1:$port RUST_LOG=warn "$@" "$bin" >"target/hardening-$name.log" 2>&1 &
    pid=$!
    pids+=("$pid")
    for _ in $(seq 1 100); do
      (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && return 0
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    grep -q "already in use" "target/hardening-$name.log" || break
  done
  echo "the $name target did not start:" >&2
  cat "target/hardening-$name.log" >&2
  return 1
}

stop_target() {
  kill -TERM "$pid"
  wait "$pid"
}

checks=${*:-oracle smuggling h2 h2conformance boofuzz slow flood restart headers differential}
for check in $checks; do
  case "$check" in
    oracle)
      echo "== hardening: llhttp oracle =="
      start_target oracle
      timeout 300 "$py" hardening/oracle.py 127.0.0.1:$port --cases 3000 \
        --report target/hardening-oracle.json
      stop_target
      ;;
    smuggling)
      echo "== hardening: request smuggling =="
      start_target smuggling TERN_MAX_BODY_BYTES=65536
      timeout 300 "$py" hardening/smuggling.py 127.0.0.1:$port --max-body 65536
      stop_target
      ;;
    h2)
      echo "== hardening: HTTP/2 load and floods (h2load, hand-built frames) =="
      start_target h2
      timeout 300 "$py" hardening/h2_floods.py 127.0.0.1:$port "$pid"
      stop_target
      ;;
    h2conformance)
      echo "== hardening: HTTP/2 edge cases (h2 from PyPI: preface, stream rules, stalled windows) =="
      # A fixed mmap threshold: glibc's sliding one would keep freed 1 MiB
      # answers in its heap, and RSS would not show that they were freed.
      start_target h2conformance TERN_WRITE_TIMEOUT=2s TERN_HEADER_READ_TIMEOUT=2s \
        MALLOC_MMAP_THRESHOLD_=131072
      timeout 600 "$py" hardening/h2_conformance.py 127.0.0.1:$port "$pid" --repeat 50 \
        --write-timeout 2 --header-timeout 2
      stop_target
      ;;
    boofuzz)
      echo "== hardening: boofuzz over a real socket =="
      start_target boofuzz
      timeout 600 "$py" hardening/boofuzz_http.py 127.0.0.1:$port "$pid" --cases 1500
      stop_target
      ;;
    slow)
      echo "== hardening: slow clients (slowhttptest) =="
      start_target slow TERN_HEADER_READ_TIMEOUT=4s TERN_REQUEST_TIMEOUT=4s TERN_WRITE_TIMEOUT=4s \
        TERN_KEEP_ALIVE_TIMEOUT=4s
      timeout 300 "$py" hardening/slow_clients.py 127.0.0.1:$port --connections 500 \
        --seconds 20 --drop-within 14
      stop_target
      ;;
    flood)
      echo "== hardening: connection floods =="
      timeout 300 "$py" hardening/flood.py "$bin" --connections 10000 --limit 1000 --extra 500
      ;;
    restart)
      echo "== hardening: graceful restart and shutdown =="
      timeout 300 "$py" hardening/restart.py "$bin" --seconds 8
      ;;
    headers)
      echo "== hardening: security headers of the production showcase (drheader) =="
      cargo build -q --release --locked -p showcase
      port=$((20000 + RANDOM % 12000))
      secret=$(head -c 48 /dev/urandom | base64 | tr -d '\n')
      env TERN_ENV=production SECRET_KEY="$secret" ALLOWED_HOSTS=127.0.0.1 \
        TERN_ADDR=127.0.0.1:$port RUST_LOG=warn target/release/showcase \
        >target/hardening-headers.log 2>&1 &
      pid=$!
      pids+=("$pid")
      for _ in $(seq 1 100); do
        (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && break
        sleep 0.1
      done
      # Pages, JSON, the health check and an error: every kind of answer.
      for path in / /json /health /users/7 /missing; do
        if "$venv/bin/drheader" scan single "http://127.0.0.1:$port$path" \
          --rules-file hardening/drheader-rules.yml --output json >target/hardening-drheader.json; then
          echo "ok   $path: no rule failed"
        else
          echo "FAIL $path:"
          cat target/hardening-drheader.json
          exit 1
        fi
      done
      stop_target
      ;;
    differential) echo "== hardening: Tern's HTTP/1.1 codec against llhttp, no server ==" && timeout 300 "$py" hardening/differential.py ;;
    *)
      echo "unknown check: $check" >&2
      exit 2
      ;;
  esac
done
echo "hardening: every check passed"
