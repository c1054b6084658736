#!/usr/bin/env bash
# `skillfold serve --listen` under wrk: one skill with a 64 KiB body, `tools/call load_skill` on
# one MCP session, every request with its own JSON-RPC id (benches/wrk_load_skill.lua).
#
#   benches/wrk_load_skill.sh [BIN] [CONNECTIONS...]     # default: target/release/skillfold, 2 64
#   DURATION=10s PERF=1 benches/wrk_load_skill.sh        # PERF=1: perf record -g the server
#   ANSWER_OUT=answer.txt benches/wrk_load_skill.sh       # keep the checked answer (to compare builds)
#   AUTH=static|oauth|compare benches/wrk_load_skill.sh  # every request with a bearer token: a
#       --tokens hash, or an RS256 JWT access token (--oauth) of the test identity provider
#       (tests/oidc, npm ci into target/oidc-provider as its tests do); compare: both, one after
#       the other in the same run
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/target/release/skillfold}
shift || true
if [ "$#" -gt 0 ]; then conns=("$@"); else conns=(2 64); fi
duration=${DURATION:-10s}
command -v wrk >/dev/null || apt-get install -y wrk
dir=$(mktemp -d)
pid=; idp=
trap 'kill $pid $idp 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/big"
python3 - "$dir/big/SKILL.md" <<'PY'
import sys
head = "---\nname: big\ndescription: A skill with a 64 KiB body.\n---\n"
line = "Follow the steps below carefully and check each result before going on.\n"
body = ""
while len(body) + len(line) <= 64 * 1024:
    body += line
body += "x" * (64 * 1024 - len(body))
open(sys.argv[1], "w").write(head + body)
PY
hash=$("$bin" hash --limits extended "$dir/big" | cut -d' ' -f1)
printf "skills:\n  - local: { name: big, version: '1', directory: big, hash: %s, limits: extended }\n" "$hash" > "$dir/skillfold.yaml"
# AUTH=oauth: the test identity provider, a client for /mcp.
start_idp() {
  local node=$here/target/oidc-provider
  if [ ! -d "$node/node_modules/oidc-provider" ]; then
    mkdir -p "$node" && cp "$here/tests/oidc/package.json" "$here/tests/oidc/package-lock.json" "$node/"
    (cd "$node" && npm ci --no-audit --no-fund --silent)
  fi
  cp "$here/tests/oidc/provider.mjs" "$node/"
  node "$node/provider.mjs" "{\"keys\": \"$dir/keys.json\", \"clients\": [{\"client_id\": \"bench\", \"client_secret\": \"bench-secret\", \"scope\": \"skills.default\", \"alg\": \"RS256\"}]}" > "$dir/idp" 2>/dev/null &
  idp=$!
  for _ in $(seq 100); do grep -q LISTENING "$dir/idp" && break; sleep 0.1; done
  idp_port=$(sed -n 's/^LISTENING //p' "$dir/idp")
  printf "issuer: http://127.0.0.1:%s\nagents:\n  - { agent: null, claim: client_id, value: bench }\n" "$idp_port" > "$dir/oauth.yaml"
}

# Starts the server with the authentication of $1 (none, static, oauth), opens a session, checks
# the answer and runs wrk for each connection count.
bench() {
auth=$1
args=(); token=
case "$auth" in
  static)
    token=bench-token
    printf '[{"agent": null, "sha256": "%s"}]' "$(printf %s "$token" | sha256sum | cut -d' ' -f1)" > "$dir/tokens.json"
    args=(--tokens "$dir/tokens.json") ;;
  oauth)
    [ -n "$idp" ] || start_idp
    args=(--oauth "$dir/oauth.yaml") ;;
esac
"$bin" serve -c "$dir/skillfold.yaml" --listen 127.0.0.1:0 --max-sessions 4096 "${args[@]}" 2> "$dir/err" &
pid=$!
for _ in $(seq 100); do grep -q "listening on" "$dir/err" && break; sleep 0.1; done
port=$(sed -n 's/.*listening on http:\/\/127.0.0.1:\([0-9]*\).*/\1/p' "$dir/err" | head -1)
url=http://127.0.0.1:$port/mcp
if [ "$auth" = oauth ]; then
  for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/readyz" && break; sleep 0.1; done
  token=$(curl -s -d grant_type=client_credentials -d client_id=bench -d client_secret=bench-secret \
    -d scope=skills.default --data-urlencode "resource=$url" "http://127.0.0.1:$idp_port/token" \
    | sed -n 's/.*"access_token":"\([^"]*\)".*/\1/p')
fi
auth_header=(); [ -z "$token" ] || auth_header=(-H "Authorization: Bearer $token")
session=$(curl -s -D - -o /dev/null "$url" "${auth_header[@]}" -H 'Content-Type: application/json' \
  -H 'Accept: application/json, text/event-stream' \
  -d '{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"wrk","version":"1"}}}' \
  | tr -d '\r' | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
curl -s -o /dev/null "$url" "${auth_header[@]}" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $session" -H 'MCP-Protocol-Version: 2025-06-18' \
  -d '{"jsonrpc":"2.0","method":"notifications/initialized"}'
# The answer carries the body before anything is timed.
curl -s "$url" "${auth_header[@]}" -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
  -H "Mcp-Session-Id: $session" -H 'MCP-Protocol-Version: 2025-06-18' \
  -d '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"load_skill","arguments":{"name":"big","reference":null}}}' \
  > "$dir/answer"
grep -q 'Follow the steps below' "$dir/answer" || { echo "no body in the answer:"; head -c 400 "$dir/answer"; exit 1; }
echo "answer: $(wc -c < "$dir/answer") bytes"
if [ -n "${ANSWER_OUT:-}" ]; then cp "$dir/answer" "$ANSWER_OUT"; fi
if [ "${PERF:-}" = 1 ]; then
  perf record -g -o "${PERF_OUT:-$here/target/perf.data}" -p "$pid" 2>/dev/null &
  perf_pid=$!
  sleep 0.5
fi
for c in "${conns[@]}"; do
  echo "== $c connections${token:+ (auth: $auth)}"
  SESSION=$session TOKEN=$token wrk -t2 -c"$c" -d"$duration" --latency -s "$here/benches/wrk_load_skill.lua" "$url" \
    | grep -E 'Requests/sec|99%|50%|Non-2xx|Socket errors|requests in'
done
if [ "${PERF:-}" = 1 ]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; fi
echo "server peak RSS: $(grep VmHWM /proc/$pid/status)"
kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}

case "${AUTH:-none}" in
  none|static|oauth) bench "${AUTH:-none}" ;;
  compare) bench static; bench oauth ;;
  *) echo "AUTH is none, static, oauth or compare"; exit 2 ;;
esac
