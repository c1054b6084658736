#!/usr/bin/env python3
"""Benchmark: whole-process `skillfold verify` of a prepared corpus of 16 maximum-size bundles
against `sha256sum` over the same 1,024 published files, side by side in one run (interleaved
rounds, medians).

The bundles are the ones benches/hash_vs_sha256sum.py makes (64 files adding up to exactly 1 MiB
each). They are committed with the git CLI into a bare repository, pinned with `skillfold hash`,
and prepared once from `file://` into a corpus; every round then runs
  (a) `skillfold verify -c skillfold.yaml` (reads the manifest, re-reads and re-hashes every
      published file through the safe reader, recomputes every bundle digest, compares the pins);
  (b) `sha256sum` over the 1,024 files under `<corpus>/current/`.
The order of (a) and (b) alternates per round.

Usage: python3 benches/verify_vs_sha256sum.py [ROUNDS]   (default 30; builds the release binary)
Environment: SKILLFOLD_BIN (a binary to measure instead of building one), CARGO_TARGET_DIR
(default target/), BENCH_TMPDIR (default: the system temp dir).
Target (issue 12): skillfold wall time <= 1.2 x sha256sum wall time.
"""

import os
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from hash_vs_sha256sum import BUNDLES, FILES, TOTAL, interleaved, make_bundles  # noqa: E402
from prepare_vs_git import release_binary  # noqa: E402



def git(*args, cwd):
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull,
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@skillfold.invalid",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@skillfold.invalid")
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    exe = release_binary()
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMPDIR")) as base:
        work = os.path.join(base, "work")
        dirs, _ = make_bundles(os.path.join(work, "skills"))
        git("init", "-q", "-b", "main", cwd=work)
        git("add", "-A", cwd=work)
        git("commit", "-q", "-m", "bundles", cwd=work)
        commit = git("rev-parse", "HEAD", cwd=work)
        bare = os.path.join(base, "skills.git")
        git("clone", "-q", "--bare", work, bare, cwd=base)
        hashed = subprocess.run([exe, "hash", *dirs], check=True, capture_output=True,
                                text=True).stdout
        pins = [(os.path.basename(d), h) for h, d in (l.split("  ", 1) for l in hashed.splitlines())]
        desc = os.path.join(base, "skillfold.yaml")
        with open(desc, "w") as f:
            f.write(f"skills:\n  - git:\n      source: file://{bare}\n      revision: {commit}\n"
                    f"      directory: corpus\n      root: skills\n      approved:\n")
            f.writelines(f'        - {{ name: {n}, version: "1.0", hash: {h} }}\n' for n, h in pins)
        subprocess.run([exe, "prepare", "-c", desc], check=True, capture_output=True)
        current = os.path.join(base, "corpus", "current")
        files = sorted(os.path.join(dp, n) for dp, _, ns in os.walk(current) for n in ns)
        assert len(files) == BUNDLES * FILES, len(files)
        ours_cmd = [exe, "verify", "-c", desc]
        peer_cmd = ["sha256sum", *files]
        ours, peer = interleaved(ours_cmd, peer_cmd, rounds)
    o, p = statistics.median(ours), statistics.median(peer)
    paired = statistics.median(a / b for a, b in zip(ours, peer))
    print(f"corpus: {BUNDLES} bundles x {FILES} files x {TOTAL} bytes, rounds: {rounds}")
    print(f"skillfold verify : median {o * 1000:7.2f} ms  (min {min(ours) * 1000:.2f})")
    print(f"sha256sum        : median {p * 1000:7.2f} ms  (min {min(peer) * 1000:.2f})")
    ok = "ok" if o / p <= 1.2 else "MISSED"
    print(f"ratio skillfold/sha256sum: {o / p:.2f}x (target <= 1.20x) {ok}; "
          f"median of the per-round ratios {paired:.2f}x")


if __name__ == "__main__":
    main()
