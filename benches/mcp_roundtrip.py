#!/usr/bin/env python3
"""Benchmark: `skillfold serve` measured from the official MCP Python SDK client over stdio.

Builds 16 bundles at the format's bounds (64 files, 1 MiB each; every SKILL.md carries a 64 KiB
body), pins them as local sources, then, in rounds:

1. start to first response: from spawning `skillfold serve` (which reads and verifies all
   16 MiB, builds the catalogue and the Skills extension index) to the answer of `initialize`,
   and to the answer of the first `tools/list`;
2. `load_skill` round trips for a 64 KiB body: N calls, p50 and p99, through the SDK client
   (`Client.call_tool`, which also validates every result with pydantic), and the same calls as
   raw JSON-RPC lines over the server's pipes (no SDK in the loop), which shows what the server
   and the pipe cost alone.

Usage: python3 benches/mcp_roundtrip.py [CALLS] [ROUNDS]   (builds the release binary first; the
client venv is target/mcp-client-venv, made by the test suite or by this script)
Targets (issue 7): round trip p50 <= 1 ms; start to first response <= 100 ms.
"""

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUNDLES, FILES, TOTAL, BODY = 16, 64, 1024 * 1024, 64 * 1024
VENV = os.path.join(ROOT, "target", "mcp-client-venv")


def make_bundles(base):
    dirs = []
    for b in range(BUNDLES):
        name = f"bench-{b:02d}"
        d = os.path.join(base, name)
        os.makedirs(os.path.join(d, "references"))
        head = f"---\nname: {name}\ndescription: Benchmark bundle {b} at the format's bounds.\n---\n"
        line = f"# {name}: a line of instructions, lorem ipsum dolor sit amet.\n"
        body = (line * (BODY // len(line) + 1))[:BODY]
        skill = head + body
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(skill)
        remaining = TOTAL - len(skill)
        each = remaining // (FILES - 1)
        for i in range(FILES - 1):
            size = each + (remaining % (FILES - 1) if i == 0 else 0)
            text = (f"bundle {b} file {i} - lorem ipsum\n" * (size // 20 + 1))[:size]
            with open(os.path.join(d, "references", f"r{i:02d}.md"), "w") as f:
                f.write(text)
        dirs.append(d)
    return dirs


def ensure_venv():
    python = os.path.join(VENV, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", VENV], check=True)
        subprocess.run(
            [python, "-m", "pip", "install", "-q", "--disable-pip-version-check", "-r",
             os.path.join(ROOT, "tests", "mcp", "requirements.txt")],
            check=True,
        )
    return python


def raw_round_trips(server, calls):
    """Start to first response and load_skill round trips as bare JSON-RPC lines."""
    start = time.perf_counter()
    proc = subprocess.Popen(server, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)

    def send(message):
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    send({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"}}})
    proc.stdout.readline()
    first = time.perf_counter() - start
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    request = {"jsonrpc": "2.0", "method": "tools/call",
               "params": {"name": "load_skill", "arguments": {"name": "bench-00", "reference": None}}}
    samples, size = [], 0
    for i in range(calls + 200):
        request["id"] = i + 1
        t = time.perf_counter()
        send(request)
        line = proc.stdout.readline()
        if i >= 200:
            samples.append(time.perf_counter() - t)
        size = len(line)
    proc.stdin.close()
    proc.wait()
    samples.sort()
    return first, samples, size


def pct(samples, p):
    return samples[min(len(samples) - 1, int(len(samples) * p))]


def main():
    calls = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    exe = os.path.join(ROOT, "target", "release", "skillfold")
    python = ensure_venv()
    with tempfile.TemporaryDirectory() as base:
        dirs = make_bundles(base)
        hashes = subprocess.run([exe, "hash", *dirs], check=True, capture_output=True, text=True).stdout.split()
        entries = "".join(
            f"  - local: {{ name: {os.path.basename(d)}, version: '1', directory: {d}, hash: {h} }}\n"
            for d, h in zip(dirs, hashes[0::2])
        )
        config = os.path.join(base, "skillfold.yaml")
        with open(config, "w") as f:
            f.write("skills:\n" + entries)
        server = [exe, "serve", "-c", config]
        sdk, raw = [], []
        for _ in range(rounds):
            out = subprocess.run(
                [python, os.path.join(ROOT, "tests", "mcp", "client.py"), "bench", str(calls), "bench-00", "--", *server],
                check=True, capture_output=True, text=True,
            )
            sdk.append(json.loads(out.stdout))
            raw.append(raw_round_trips(server, calls))
    print(f"corpus: {BUNDLES} bundles x {FILES} files x {TOTAL} bytes (verified at start); body {BODY} bytes")
    print(f"rounds: {rounds}, load_skill calls per round: {calls} (after 200 warm-up calls)")
    med = lambda xs: statistics.median(xs)
    print("official Python SDK client (mcp 2.3.0, legacy initialize):")
    print(f"  start to initialize response : median {med([r['start_to_initialize_ms'] for r in sdk]):6.1f} ms")
    print(f"  start to first tools/list    : median {med([r['start_to_first_response_ms'] for r in sdk]):6.1f} ms")
    print(f"  load_skill round trip        : p50 {med([r['p50_ms'] for r in sdk]):.3f} ms, "
          f"p99 {med([r['p99_ms'] for r in sdk]):.3f} ms  (body {sdk[0]['body_bytes']} bytes)")
    print("raw JSON-RPC lines over the same pipes (no SDK):")
    print(f"  start to initialize response : median {med([r[0] for r in raw]) * 1000:6.1f} ms")
    print(f"  load_skill round trip        : p50 {med([pct(r[1], 0.5) for r in raw]) * 1000:.3f} ms, "
          f"p99 {med([pct(r[1], 0.99) for r in raw]) * 1000:.3f} ms  (response {raw[0][2]} bytes)")


if __name__ == "__main__":
    main()
