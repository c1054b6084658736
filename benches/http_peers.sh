#!/usr/bin/env bash
# `skillfold serve --listen` against its peers under wrk: one skill with a 64 KiB body,
# `tools/call load_skill` over MCP Streamable HTTP, every request its own JSON-RPC id
# (benches/wrk_load_skill.lua), served by
#   skillfold            stateful: all connections on one session (2025-06-18);
#   skillfold-stateless  the same process on the stateless 2026-07-28 path (no session);
#   typescript           the official TypeScript SDK's server (benches/peers/ts_server.cjs), stateful;
#   python               the official Python SDK's MCPServer (benches/peers/python_server.py), stateful;
#   lighttpd             a static file of skillfold's answer (its bytes): the ceiling of HTTP here.
# and, when named in SERVERS, the cost of authentication (every request with a bearer token):
#   skillfold-static     stateful, `--tokens` (a SHA-256 hash file);
#   skillfold-oauth      stateful, `--oauth`: an RS256 JWT access token of the test identity
#                        provider (tests/oidc, npm ci into target/oidc-provider as its tests do),
#                        validated against its JWKS on every request.
# Each answer is checked to carry the body before anything is timed, and during each timed run
# the bytes read per call must be those of a whole answer (else every call of the run counts as
# an error); with CHECK_EACH=1 wrk's Lua also checks every answer for the body, for
# every server alike — a cost to the client (buffering and scanning each 134 KB answer) that
# weighs as much as a server's own, so that the ratios then tell little about the servers. The servers are loaded in
# turn at each connection count (wrk: 2 threads), for ROUNDS rounds, so that a load the machine
# gets from elsewhere falls on all of them alike; then a table of the medians over the rounds:
# calls/s, p50, p99, errors (all rounds), the server's CPU time per call (user + system, all its
# threads), its RSS, and each ratio to the ceiling and to the peers.
#
#   benches/http_peers.sh [BIN]                        # default: target/release/skillfold
#   CONNS="2 8 64" DURATION=5s ROUNDS=3 benches/http_peers.sh   # the defaults
#   SERVERS="lighttpd skillfold" benches/http_peers.sh # a subset (order kept)
#   SERVERS="skillfold-static skillfold-oauth" benches/http_peers.sh  # what --oauth costs
#   PERF=1 benches/http_peers.sh                       # perf record -g skillfold's stateful runs
#                                                      #   (target/perf-<conns>.data)
#   ANSWER_OUT=answer.txt benches/http_peers.sh        # keep skillfold's checked answer
#   CHECK_EACH=1 benches/http_peers.sh                 # wrk checks every answer (see above)
#
# wrk and lighttpd are installed with apt-get when missing; the Python SDK comes from the venv
# the tests use (target/mcp-client-venv, tests/mcp/requirements.txt), the TypeScript SDK from
# their npm install (target/mcp-ts-client, tests/mcp-ts); either is installed the same way when
# missing.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/skillfold}
read -r -a conns <<< "${CONNS:-2 8 64}"
read -r -a servers <<< "${SERVERS:-lighttpd skillfold skillfold-stateless typescript python}"
duration=${DURATION:-5s}
rounds=${ROUNDS:-3}
wants() { [[ " ${servers[*]} " == *" $1 "* ]]; }

for tool in wrk lighttpd; do
  if [ "$tool" = lighttpd ] && ! wants lighttpd; then continue; fi
  command -v "$tool" >/dev/null || apt-get install -y "$tool" >/dev/null
done

dir=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$dir"
}
trap cleanup EXIT

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# Waits until `curl ARGS...` succeeds (a server is up).
wait_up() {
  for _ in $(seq 200); do curl -s -o /dev/null "$@" && return 0; sleep 0.1; done
  echo "a server did not come up: $*" >&2
  return 1
}

# The skill: a 64 KiB body, and that body alone for the peers.
mkdir -p "$dir/big"
python3 - "$dir/big/SKILL.md" "$dir/body.txt" <<'PY'
import sys
head = "---\nname: big\ndescription: A skill with a 64 KiB body.\n---\n"
line = "Follow the steps below carefully and check each result before going on.\n"
body = ""
while len(body) + len(line) <= 64 * 1024:
    body += line
body += "x" * (64 * 1024 - len(body))
open(sys.argv[1], "w").write(head + body)
open(sys.argv[2], "w").write(body)
PY
hash=$("$bin" hash --limits extended "$dir/big" | cut -d' ' -f1)

mcp_headers=(-H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream')
call='{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"big","reference":null}}}'

# Opens a 2025-06-18 session at URL and prints its id.
open_session() {
  local url=$1 session
  session=$(curl -s -D - -o /dev/null "$url" "${mcp_headers[@]}" \
    -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
    | tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
  [ -n "$session" ] || { echo "no session from $url" >&2; return 1; }
  curl -s -o /dev/null "$url" "${mcp_headers[@]}" -H "Mcp-Session-Id: $session" \
    -H 'MCP-Protocol-Version: 2025-06-18' -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
  echo "$session"
}

# Checks that NAME's answer (curl ARGS...) carries the body; keeps it in $dir/answer-NAME.
check_answer() {
  local name=$1
  shift
  curl -s "$@" > "$dir/answer-$name"
  if ! grep -q 'Follow the steps below' "$dir/answer-$name" \
    || ! grep -q '"structuredContent"' "$dir/answer-$name"; then
    echo "$name: no body in the answer:" >&2
    head -c 400 "$dir/answer-$name" >&2
    exit 1
  fi
  echo "$name: the answer carries the body ($(wc -c < "$dir/answer-$name") bytes)"
}

declare -A url session pid token
# Starts `skillfold serve` as NAME with the extra ARGS... and sets url[NAME] and pid[NAME].
# All of wrk's connections come from one address: the per-client and per-token bounds (64 by
# default) are raised above the 64 connections, with room for the connections of one run still
# closing when the next opens.
start_skillfold() {
  local name=$1 port
  shift
  "$bin" serve -c "$dir/skillfold.yaml" --listen 127.0.0.1:0 --max-sessions 4096 \
    --max-connections 1024 --max-connections-per-client 512 --max-in-flight-per-token 256 "$@" 2> "$dir/err-$name" &
  pid[$name]=$!
  pids+=("$!")
  for _ in $(seq 100); do grep -q "listening on" "$dir/err-$name" && break; sleep 0.1; done
  port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$dir/err-$name" | head -1)
  url[$name]=http://127.0.0.1:$port/mcp
  wait_up -f "http://127.0.0.1:$port/readyz"
}
if wants skillfold || wants skillfold-stateless || wants skillfold-static || wants skillfold-oauth; then
  printf "skills:\n  - local: { name: big, version: '1', directory: big, hash: %s, limits: extended }\n" "$hash" > "$dir/skillfold.yaml"
fi
if wants skillfold || wants skillfold-stateless; then
  start_skillfold skillfold
  url[skillfold-stateless]=${url[skillfold]}
  pid[skillfold-stateless]=${pid[skillfold]}
  session[skillfold]=$(open_session "${url[skillfold]}")
  check_answer skillfold "${url[skillfold]}" "${mcp_headers[@]}" -H "Mcp-Session-Id: ${session[skillfold]}" \
    -H 'MCP-Protocol-Version: 2025-06-18' -d "$call"
  if [ -n "${ANSWER_OUT:-}" ]; then cp "$dir/answer-skillfold" "$ANSWER_OUT"; fi
  if wants skillfold-stateless; then
    check_answer skillfold-stateless "${url[skillfold]}" "${mcp_headers[@]}" \
      -H 'MCP-Protocol-Version: 2026-07-28' -H 'Mcp-Method: tools/call' -H 'Mcp-Name: load_skill' \
      -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"big","reference":null},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}'
  fi
fi
if wants skillfold-static; then
  token[skillfold-static]=bench-token
  printf '[{"agent": null, "sha256": "%s"}]' "$(printf %s bench-token | sha256sum | cut -d' ' -f1)" > "$dir/tokens.json"
  start_skillfold skillfold-static --tokens "$dir/tokens.json"
fi
if wants skillfold-oauth; then
  node_dir=$here/target/oidc-provider
  if [ ! -d "$node_dir/node_modules/oidc-provider" ]; then
    rm -rf "$node_dir" && mkdir -p "$node_dir"
    cp "$here/tests/oidc/package.json" "$here/tests/oidc/package-lock.json" "$node_dir/"
    (cd "$node_dir" && npm ci --no-audit --no-fund --silent)
    cp "$here/tests/oidc/package-lock.json" "$node_dir/skillfold-package-lock.json"
  fi
  cp "$here/tests/oidc/provider.mjs" "$node_dir/"
  node "$node_dir/provider.mjs" "{\"keys\": \"$dir/keys.json\", \"clients\": [{\"client_id\": \"bench\", \"client_secret\": \"bench-secret\", \"scope\": \"skills.default\", \"alg\": \"RS256\"}]}" > "$dir/idp" 2>/dev/null &
  pids+=("$!")
  for _ in $(seq 100); do grep -q LISTENING "$dir/idp" && break; sleep 0.1; done
  idp_port=$(sed -n 's/^LISTENING //p' "$dir/idp")
  printf "issuer: http://127.0.0.1:%s\nagents:\n  - { agent: null, claim: client_id, value: bench }\n" "$idp_port" > "$dir/oauth.yaml"
  start_skillfold skillfold-oauth --oauth "$dir/oauth.yaml"
  token[skillfold-oauth]=$(curl -s -d grant_type=client_credentials -d client_id=bench -d client_secret=bench-secret \
    -d scope=skills.default --data-urlencode "resource=${url[skillfold-oauth]}" "http://127.0.0.1:$idp_port/token" \
    | sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')
fi
for name in skillfold-static skillfold-oauth; do
  wants "$name" || continue
  bearer=(-H "Authorization: Bearer ${token[$name]}")
  session[$name]=$(mcp_headers+=("${bearer[@]}"); open_session "${url[$name]}")
  check_answer "$name" "${url[$name]}" "${mcp_headers[@]}" "${bearer[@]}" -H "Mcp-Session-Id: ${session[$name]}" \
    -H 'MCP-Protocol-Version: 2025-06-18' -d "$call"
done

if wants python; then
  venv=$here/target/mcp-client-venv
  if ! "$venv/bin/python" -c 'import mcp.server.mcpserver, uvicorn' 2>/dev/null; then
    rm -rf "$venv"
    python3 -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
      -r "$here/tests/mcp/requirements.txt"
    cp "$here/tests/mcp/requirements.txt" "$venv/skillfold-requirements.txt"
  fi
  port=$(free_port)
  "$venv/bin/python" "$here/benches/peers/python_server.py" "$port" "$dir/body.txt" "$hash" 2> "$dir/err-python" &
  pid[python]=$!
  pids+=("$!")
  url[python]=http://127.0.0.1:$port/mcp
  wait_up "http://127.0.0.1:$port/"
  session[python]=$(open_session "${url[python]}")
  check_answer python "${url[python]}" "${mcp_headers[@]}" -H "Mcp-Session-Id: ${session[python]}" \
    -H 'MCP-Protocol-Version: 2025-06-18' -d "$call"
fi

if wants typescript; then
  ts=$here/target/mcp-ts-client
  if [ ! -d "$ts/node_modules/@modelcontextprotocol/sdk" ]; then
    rm -rf "$ts"
    mkdir -p "$ts"
    cp "$here/tests/mcp-ts/package.json" "$here/tests/mcp-ts/package-lock.json" "$ts/"
    (cd "$ts" && npm ci --no-audit --no-fund --silent)
    cp "$here/tests/mcp-ts/package-lock.json" "$ts/skillfold-package-lock.json"
  fi
  port=$(free_port)
  NODE_PATH=$ts/node_modules node "$here/benches/peers/ts_server.cjs" "$port" "$dir/body.txt" "$hash" 2> "$dir/err-typescript" &
  pid[typescript]=$!
  pids+=("$!")
  url[typescript]=http://127.0.0.1:$port/mcp
  wait_up "http://127.0.0.1:$port/"
  session[typescript]=$(open_session "${url[typescript]}")
  check_answer typescript "${url[typescript]}" "${mcp_headers[@]}" -H "Mcp-Session-Id: ${session[typescript]}" \
    -H 'MCP-Protocol-Version: 2025-06-18' -d "$call"
fi

if wants lighttpd; then
  # skillfold's checked answer itself (else as many bytes, the word the client checks for in
  # the middle), so that wrk's check of every answer does the same work on it.
  mkdir -p "$dir/www"
  if [ -f "$dir/answer-skillfold" ]; then
    cp "$dir/answer-skillfold" "$dir/www/answer.txt"
  else
    python3 -c 'import sys; half = "x" * 67290; sys.stdout.write(half + "\"structuredContent\"" + half)' > "$dir/www/answer.txt"
  fi
  size=$(wc -c < "$dir/www/answer.txt")
  port=$(free_port)
  cat > "$dir/lighttpd.conf" <<CONF
server.document-root = "$dir/www"
server.bind = "127.0.0.1"
server.port = $port
server.max-keep-alive-requests = 100000
CONF
  lighttpd -D -f "$dir/lighttpd.conf" 2> /dev/null &
  pid[lighttpd]=$!
  pids+=("$!")
  url[lighttpd]=http://127.0.0.1:$port/answer.txt
  wait_up -f "${url[lighttpd]}"
  echo "lighttpd: a static file of $size bytes"
fi

# The CPU time (user + system, in clock ticks) process PID and its threads have used so far.
cpu_ticks() {
  awk '{print $14 + $15}' "/proc/$1/stat"
}

# Loads NAME with C connections for D; appends "name conns calls/s p50_ms p99_ms errors" to
# $dir/results unless a fourth argument says `warm-up`.
load() {
  local name=$1 c=$2 d=$3 warm=${4:-}
  local env=(SESSION="${session[$name]:-}" TOKEN="${token[$name]:-}" CHECK_EACH="${CHECK_EACH:-}")
  local script=(-s "$here/benches/wrk_load_skill.lua")
  case $name in
    # The ceiling: a GET of the file, with the same client (and the same check, if any).
    lighttpd) env=(STATIC=1 CHECK_EACH="${CHECK_EACH:-}") ;;
    skillfold-stateless) env=(STATELESS=1 CHECK_EACH="${CHECK_EACH:-}") ;;
  esac
  local cpu_before
  cpu_before=$(cpu_ticks "${pid[$name]}")
  env "${env[@]}" wrk -t2 -c"$c" -d"$d" --latency "${script[@]}" "${url[$name]}" > "$dir/wrk-out" 2> "$dir/wrk-err"
  local cpu=$(( $(cpu_ticks "${pid[$name]}") - cpu_before ))
  if [ "$warm" = warm-up ]; then return 0; fi
  local answer=$dir/answer-$name
  if [ "$name" = lighttpd ]; then answer=$dir/www/answer.txt; fi
  python3 - "$name" "$c" "$dir/results" "$dir/wrk-out" "$(wc -c < "$answer")" "$cpu" "$(getconf CLK_TCK)" <<'PY'
import re, sys
out = open(sys.argv[4]).read()
def ms(text):
    value, unit = re.fullmatch(r"([\d.]+)(us|ms|s)", text).groups()
    return float(value) * {"us": 0.001, "ms": 1, "s": 1000}[unit]
rate = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
p50 = ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))
p99 = ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))
errors = sum(int(n) for n in re.findall(r"(?:connect|read|write|timeout) (\d+)", out))
errors += int((re.search(r"Non-2xx or 3xx responses: (\d+)", out) or [0, 0])[1])
errors += int((re.search(r"bad answers: (\d+)", out) or [0, 0])[1])
# Every call must have read a whole answer (headers come on top): on average at least 99 % of
# the checked answer's bytes, as wrk rounds what it read to three significant figures.
calls, read, unit = re.search(r"(\d+) requests in \S+, ([\d.]+)(B|KB|MB|GB|TB) read", out).groups()
per_call = float(read) * 1024 ** "B KB MB GB TB".split().index(unit) / max(int(calls), 1)
if per_call < 0.99 * int(sys.argv[5]):
    print(f"{sys.argv[1]}, {sys.argv[2]} connections: {per_call:.0f} bytes read per call, "
          f"under the {sys.argv[5]} of an answer")
    errors += int(calls)
with open(sys.argv[3], "a") as f:
    # The server's CPU (user + system) per call, in µs.
    cpu_us = int(sys.argv[6]) / int(sys.argv[7]) * 1e6 / max(int(calls), 1)
    f.write(f"{sys.argv[1]} {sys.argv[2]} {rate} {p50} {p99} {errors} {cpu_us}\n")
if errors:
    detail = [l.strip() for l in out.splitlines() if re.search(r"errors|Non-2xx|bad answers", l)]
    print(f"{sys.argv[1]}, {sys.argv[2]} connections: {'; '.join(detail)}")
PY
  if [ -s "$dir/wrk-err" ]; then sed "s/^/$name, $c connections: /" "$dir/wrk-err" | head -3 | cut -c1-300; fi
}

echo "load: $(uptime)"
for name in "${servers[@]}"; do load "$name" 2 2s warm-up; done
for _ in $(seq "$rounds"); do for c in "${conns[@]}"; do
  for name in "${servers[@]}"; do
    perf_pid=
    if [ "${PERF:-}" = 1 ] && [ "$name" = skillfold ]; then
      perf record -g -o "$here/target/perf-$c.data" -p "${pid[skillfold]}" 2>/dev/null &  # the last round's
      perf_pid=$!
      sleep 0.5
    fi
    load "$name" "$c" "$duration"
    if [ -n "$perf_pid" ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
  done
done; done
echo "load: $(uptime)"
for name in "${servers[@]}"; do
  rss=$(awk '/VmRSS/ {print $2}' "/proc/${pid[$name]}/status")
  hwm=$(awk '/VmHWM/ {print $2}' "/proc/${pid[$name]}/status")
  echo "$name $rss $hwm" >> "$dir/rss"
done

python3 - "$dir/results" "$dir/rss" "$rounds" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    n, c, *figures = line.split()
    runs.setdefault((n, c), []).append([float(f) for f in figures])
rss = {n: (int(r) / 1024, int(h) / 1024) for n, r, h in (l.split() for l in open(sys.argv[2]))}
rows = [
    (n, c, statistics.median(f[0] for f in fs), statistics.median(f[1] for f in fs),
     statistics.median(f[2] for f in fs), int(sum(f[3] for f in fs)),
     statistics.median(f[4] for f in fs))
    for (n, c), fs in runs.items()
]
rows.sort(key=lambda row: int(row[1]))
rate = {(n, c): r for n, c, r, *_ in rows}
print()
print(f"medians of {sys.argv[3]} rounds")
print("| server | conns | calls/s | p50 ms | p99 ms | errors | CPU µs/call | RSS MiB (peak) | × ceiling | × TypeScript | × Python |")
print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
for n, c, r, p50, p99, errors, cpu in rows:
    def ratio(peer):
        other = rate.get((peer, c))
        return f"{r / other:.2f}×" if other and peer != n else "—"
    now, peak = rss.get(n, (0, 0))
    print(f"| {n} | {c} | {r:,.0f} | {float(p50):.2f} | {float(p99):.2f} | {errors} | {cpu:.0f} | {now:.1f} ({peak:.1f}) "
          f"| {ratio('lighttpd')} | {ratio('typescript')} | {ratio('python')} |")
PY
