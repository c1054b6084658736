#!/usr/bin/env python3
"""Benchmark: the memory `skillfold serve` holds for one agent's catalogue of large bundles under
the `extended` limits profile, against the bytes of those bundles.

Makes N local bundles (default 16, the per-agent bound), each a `SKILL.md` plus F binary files of
S MiB (default 4 x 6 MiB = 24 MiB a bundle) and 32 text files of 4 KiB, pins them with
`skillfold hash --limits extended`, starts `skillfold serve` on a descriptor naming them all with
`limits: extended`, waits for the MCP `initialize` answer (the catalogue is loaded and verified
before it), reads one binary file as a resource blob, and then reads the server's VmRSS (memory
held while serving) and VmHWM (peak, reached while bundles are verified) from /proc. The same is
done for the same catalogue without the large files (text only) as the baseline of the process.

Snapshots keep binary files, files over 128 KiB and files past a 1 MiB text budget on disk (hash-
checked on each read) instead of in memory; the figure that shows it is VmRSS against the total
bundle bytes. The peak is one bundle per loading thread (one thread per core).

Usage: python3 benches/serve_memory.py [N] [F] [S]
Environment: SKILLFOLD_BIN (a binary to measure instead of building one), CARGO_TARGET_DIR,
BENCH_TMPDIR (default: the system temp dir).
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare_vs_git import release_binary  # noqa: E402


def make_bundles(root, n, files, mib, binary):
    total = 0
    names = []
    for i in range(n):
        name = f"large-{i:02d}"
        d = os.path.join(root, name)
        os.makedirs(os.path.join(d, "assets"), exist_ok=True)
        os.makedirs(os.path.join(d, "references"), exist_ok=True)
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(f"---\nname: {name}\ndescription: Large bundle {i}.\n---\n# {name}\n\n"
                    + "Use the assets.\n" * 200)
        for j in range(32):
            with open(os.path.join(d, "references", f"r{j:02d}.md"), "w") as f:
                f.write((f"reference {j} of {name}\n" * 200)[:4096])
        if binary:
            for j in range(files):
                with open(os.path.join(d, "assets", f"a{j}.bin"), "wb") as f:
                    f.write(os.urandom(mib * 1024 * 1024))
        for dirpath, _, fnames in os.walk(d):
            total += sum(os.path.getsize(os.path.join(dirpath, x)) for x in fnames)
        names.append(name)
    return names, total


def descriptor(binary_dir, names, bin_path):
    lines = ["skills:"]
    for name in names:
        digest = subprocess.run([bin_path, "hash", "--limits", "extended",
                                 os.path.join(binary_dir, name)],
                                check=True, capture_output=True, text=True).stdout.strip()
        lines.append(f"  - local: {{ name: {name}, version: '1', directory: {name}, "
                     f"hash: {digest}, limits: extended }}")
    path = os.path.join(binary_dir, "skillfold.yaml")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    return path


def serve_memory(bin_path, config, read_uri):
    proc = subprocess.Popen([bin_path, "serve", "-c", config], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                            cwd=os.path.dirname(config))
    def send(*messages):
        for m in messages:
            proc.stdin.write(json.dumps(m) + "\n")
        proc.stdin.flush()

    def answer(want):
        for line in proc.stdout:
            msg = json.loads(line)
            if msg.get("id") == want:
                return msg
        raise RuntimeError("the server stopped")

    def status():
        out = {}
        with open(f"/proc/{proc.pid}/status") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    out[key] = int(value.split()[0]) / 1024
        return out

    send({"jsonrpc": "2.0", "id": 1, "method": "initialize",
          "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                     "clientInfo": {"name": "bench", "version": "1"}}},
         {"jsonrpc": "2.0", "method": "notifications/initialized"})
    answer(1)
    loaded = status()
    blob_len = 0
    if read_uri:
        send({"jsonrpc": "2.0", "id": 2, "method": "resources/read",
              "params": {"uri": read_uri}})
        blob_len = len(answer(2)["result"]["contents"][0]["blob"])
    after_read = status()
    proc.stdin.close()
    proc.wait()
    return loaded, after_read, blob_len


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 16
    files = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    mib = int(sys.argv[3]) if len(sys.argv) > 3 else 6
    bin_path = os.path.abspath(os.environ.get("SKILLFOLD_BIN") or release_binary())
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMPDIR")) as tmp:
        results = {}
        for label, binary in (("text only", False), ("with binary files", True)):
            root = os.path.join(tmp, label.replace(" ", "-"))
            names, total = make_bundles(root, n, files, mib, binary)
            config = descriptor(root, names, bin_path)
            uri = f"skill://{names[0]}/assets/a0.bin" if binary else None
            loaded, after_read, blob = serve_memory(bin_path, config, uri)
            results[label] = (total, loaded, after_read, blob)
        print(f"{n} bundles under `limits: extended`, served by `skillfold serve` (one agent)")
        print(f"{'catalogue':<20} {'bundle bytes':>14} {'RSS loaded':>11} {'peak':>10} "
              f"{'RSS after a blob read':>22}")
        for label, (total, loaded, after, _) in results.items():
            print(f"{label:<20} {total / 2**20:>10.1f} MiB {loaded['VmRSS']:>7.1f} MiB "
                  f"{loaded['VmHWM']:>6.1f} MiB {after['VmRSS']:>18.1f} MiB")
        total, loaded, after, blob = results["with binary files"]
        base = results["text only"][1]
        print(f"held for the large files once loaded: {loaded['VmRSS'] - base['VmRSS']:.1f} MiB "
              f"of {(total - results['text only'][0]) / 2**20:.1f} MiB "
              f"(then one {mib} MiB file was read as a {blob / 2**20:.1f} MiB base64 blob)")


if __name__ == "__main__":
    main()
