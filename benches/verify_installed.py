#!/usr/bin/env python3
"""Benchmark: whole-process `skillfold verify --installed DIR` of a folder of 16 installed
bundles, warm (page cache), beside `sha256sum` over the same installed files, interleaved rounds,
medians.

Two sizes of bundle, each 16 local sources installed once with `skillfold install --into`:
  typical: a SKILL.md, two references and a helper script per bundle (about 6 KiB each);
  maximum: the bundles of benches/hash_vs_sha256sum.py (64 files adding up to exactly 1 MiB each).
Every round runs
  (a) `skillfold verify --installed installed` (reads the descriptor and the record, re-reads
      every installed file through the safe reader, recomputes every bundle digest, compares it
      with the descriptor's pin, lists the folder);
  (b) `sha256sum` over the installed files.
The order of (a) and (b) alternates per round.

Usage: python3 benches/verify_installed.py [ROUNDS]   (default 30; builds the release binary)
Environment: SKILLFOLD_BIN (a binary to measure instead of building one), CARGO_TARGET_DIR
(default target/), BENCH_TMPDIR (default: the system temp dir).
Target (issue 36): under 50 ms for 16 bundles on a warm cache.
"""

import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hash_vs_sha256sum import BUNDLES, interleaved, make_bundles  # noqa: E402
from prepare_vs_git import release_binary  # noqa: E402


def make_typical(base):
    """16 bundles of the size most skills have: SKILL.md, two references, a helper."""
    dirs = []
    for b in range(BUNDLES):
        name = f"skill-{b:02d}"
        root = os.path.join(base, name)
        os.makedirs(os.path.join(root, "references"))
        os.makedirs(os.path.join(root, "scripts"))
        with open(os.path.join(root, "SKILL.md"), "w") as f:
            f.write(f"---\nname: {name}\ndescription: Typical skill {b}.\n---\n# {name}\n\n")
            f.write("Follow the steps in references/guide.md.\n" * 40)
        for ref in ("guide.md", "examples.md"):
            with open(os.path.join(root, "references", ref), "w") as f:
                f.write(f"# {ref}\n\n" + "A line of guidance for the model to read.\n" * 50)
        with open(os.path.join(root, "scripts", "check.py"), "w") as f:
            f.write("import sys\nprint(sys.argv)\n")
        dirs.append((name, root))
    return dirs


def setup(exe, base, dirs):
    lines = ["skills:"]
    for name, root in dirs:
        out = subprocess.run([exe, "hash", root], check=True, capture_output=True, text=True)
        digest = out.stdout.split()[0]
        lines.append(f"  - local: {{ name: {name}, version: '1.0', directory: {root}, hash: {digest} }}")
    descriptor = os.path.join(base, "skillfold.yaml")
    with open(descriptor, "w") as f:
        f.write("\n".join(lines) + "\n")
    target = os.path.join(base, "installed")
    subprocess.run([exe, "install", "-c", descriptor, "--into", target], check=True,
                   stderr=subprocess.DEVNULL)
    subprocess.run([exe, "verify", "-c", descriptor, "--installed", target], check=True,
                   stderr=subprocess.DEVNULL)
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(target) for f in fs
                   if not f.startswith("."))
    return descriptor, target, files


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    exe = release_binary()
    for label, make in (("typical", make_typical), ("maximum", lambda b: [
            (os.path.basename(d), d) for d in make_bundles(b)[0]])):
        with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMPDIR")) as base:
            dirs = make(os.path.join(base, "skills"))
            descriptor, target, files = setup(exe, base, dirs)
            size = sum(os.path.getsize(f) for f in files)
            # The per-bundle `ok:` lines go to stderr: silenced while timing.
            saved = os.dup(2)
            with open(os.devnull, "w") as null:
                os.dup2(null.fileno(), 2)
                try:
                    ours, peer = interleaved(
                        [exe, "verify", "-c", descriptor, "--installed", target],
                        ["sha256sum", *files], rounds)
                finally:
                    os.dup2(saved, 2)
            o, p = statistics.median(ours) * 1000, statistics.median(peer) * 1000
            print(f"{label}: 16 bundles, {len(files)} files, {size} bytes: "
                  f"verify --installed {o:.1f} ms vs sha256sum {p:.1f} ms median "
                  f"({o / p:.2f}x), {rounds} interleaved rounds")


if __name__ == "__main__":
    main()
