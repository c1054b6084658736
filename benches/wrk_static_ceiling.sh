#!/usr/bin/env bash
# The ceiling for benches/wrk_load_skill.sh: lighttpd serving a static file of the same size as
# skillfold's answer, loaded by wrk with the same threads and connections.
#
#   benches/wrk_static_ceiling.sh [BYTES] [CONNECTIONS...]     # default: 134600 bytes, 2 64
set -euo pipefail
bytes=${1:-134600}
shift || true
if [ "$#" -gt 0 ]; then conns=("$@"); else conns=(2 64); fi
duration=${DURATION:-10s}
command -v wrk >/dev/null || apt-get install -y wrk
command -v lighttpd >/dev/null || apt-get install -y lighttpd
dir=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$dir"' EXIT
mkdir -p "$dir/www"
head -c "$bytes" /dev/zero | tr '\0' x > "$dir/www/answer.txt"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
cat > "$dir/lighttpd.conf" <<CONF
server.document-root = "$dir/www"
server.bind = "127.0.0.1"
server.port = $port
server.max-keep-alive-requests = 100000
CONF
lighttpd -D -f "$dir/lighttpd.conf" &
pid=$!
for _ in $(seq 50); do curl -sf -o /dev/null "http://127.0.0.1:$port/answer.txt" && break; sleep 0.1; done
for c in "${conns[@]}"; do
  echo "== $c connections"
  wrk -t2 -c"$c" -d"$duration" --latency "http://127.0.0.1:$port/answer.txt" \
    | grep -E 'Requests/sec|99%|50%|Non-2xx|Socket errors|requests in'
done
