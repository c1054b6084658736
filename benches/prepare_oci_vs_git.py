#!/usr/bin/env python3
"""Benchmark: cold `skillfold prepare` of three bundles from an OCI registry against the same
three bundles from Git over smart HTTP, on loopback, in one run; then 16 concurrent preparers
from the registry.

Usage: python3 benches/prepare_oci_vs_git.py [ROUNDS]   (default 15)
Environment: as benches/prepare_vs_git.py (SKILLFOLD_BIN, CARGO_TARGET_DIR, HTTP_PORT,
BENCH_TMPDIR), and REGISTRY_PORT (default 18181).

1. Builds the release binary; generates the repository of benches/make_skills_repo.py (~1,800
   refs, 20 bundles, binary assets outside the approved ones) and serves it with lighttpd +
   `git http-backend` on 127.0.0.1:$HTTP_PORT, as benches/prepare_vs_git.py does.
2. Pins three of its bundles (`skillfold hash` of a `git archive` extraction), and pushes exactly
   those bytes with `skillfold push --to` to Debian's `docker-registry` on 127.0.0.1:$REGISTRY_PORT
   (filesystem storage in the temp dir, access log kept to count requests).
3. Two untimed warm-up rounds, then ROUNDS interleaved rounds (the order alternates), each into a
   fresh corpus: (a) `skillfold prepare` of one Git source approving the three bundles; (b) the
   same of one `oci:` source approving them by digest. Wall time from spawn to reap; every round
   checks that both corpora publish the same bytes.
4. 16 `skillfold prepare` processes started together, each with its own corpus, from the
   registry: the number that failed (must be 0), the wall time until the last finished, and the
   registry's request count for the phase (from its access log).

Target (issue 15): cold from the registry <= 0.5x Git's wall time; 16 concurrent preparers with
zero errors.
"""

import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare_vs_git import (ROOT, APPROVED, release_binary, run_measured,  # noqa: E402
                            start_server, tree_files)

REGISTRY_PORT = int(os.environ.get("REGISTRY_PORT", "18181"))
BUNDLES = APPROVED[:3]


def start_registry(state):
    config = os.path.join(state, "registry.yml")
    with open(config, "w") as f:
        f.write(f"version: 0.1\nlog:\n  level: info\n  accesslog:\n    disabled: false\n"
                f"storage:\n  filesystem:\n    rootdirectory: {state}/registry\n"
                f"http:\n  addr: 127.0.0.1:{REGISTRY_PORT}\n  secret: bench\n")
    log = open(os.path.join(state, "registry.log"), "w")
    proc = subprocess.Popen(["docker-registry", "serve", config], stdout=log, stderr=log)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", REGISTRY_PORT), timeout=1).close()
            return proc, log.name
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("docker-registry did not start")


def requests(log_path):
    with open(log_path, errors="replace") as f:
        return sum(1 for line in f if '"GET /v2/' in line or '"HEAD /v2/' in line)


def write(path, text):
    with open(path, "w") as f:
        f.write(text)


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    exe = release_binary()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") and not k.lower().endswith("_proxy")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               LC_ALL="C", no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    env.pop("SKILLFOLD_REGISTRY_AUTH", None)
    env["DOCKER_CONFIG"] = os.devnull
    base = tempfile.mkdtemp(prefix="prepare-oci-vs-git-", dir=os.environ.get("BENCH_TMPDIR"))
    server = registry = None
    try:
        repos, state = os.path.join(base, "repos"), os.path.join(base, "server")
        os.makedirs(state)
        gen = subprocess.run([sys.executable, os.path.join(ROOT, "benches", "make_skills_repo.py"),
                              repos], check=True, capture_output=True, text=True, env=env).stdout
        commit = dict(line.split(": ", 1) for line in gen.splitlines() if ": " in line)["head"]
        server, url = start_server(repos, state)
        registry, log_path = start_registry(state)

        ref = os.path.join(base, "reference")
        os.makedirs(ref)
        folders = [f"skills/{n}" for n in BUNDLES]
        archive = subprocess.run(["git", "-C", os.path.join(repos, "skills.git"), "archive",
                                  commit, *folders], check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", ref], input=archive, check=True)
        hashed = subprocess.run([exe, "hash", *(os.path.join(ref, f) for f in folders)],
                                check=True, capture_output=True, text=True).stdout
        pins = {os.path.basename(d): h for h, d in (l.split("  ", 1) for l in hashed.splitlines())}
        approved = "".join(f'        - {{ name: {n}, version: "1.0.0", hash: {pins[n]} }}\n'
                           for n in BUNDLES)

        local = os.path.join(base, "local.yaml")
        write(local, "skills:\n" + "".join(
            f'  - local: {{ name: {n}, version: "1.0.0", directory: {ref}/skills/{n}, hash: {pins[n]} }}\n'
            for n in BUNDLES))
        pushed = subprocess.run([exe, "push", "-c", local, "--plain-http", "--to",
                                 f"127.0.0.1:{REGISTRY_PORT}/bench/skills:v1"],
                                check=True, capture_output=True, text=True, env=env).stdout
        reference = pushed.strip().splitlines()[-1]

        def git_yaml(corpus):
            return (f"skills:\n  - git:\n      source: {url}\n      revision: {commit}\n"
                    f"      directory: {corpus}\n      root: skills\n      approved:\n{approved}")

        def oci_yaml(corpus):
            return (f"skills:\n  - oci:\n      reference: {reference}\n      directory: {corpus}\n"
                    f"      plain_http: true\n      approved:\n{approved}")

        work = os.path.join(base, "rounds")
        os.makedirs(work)
        times = {"git": [], "oci": []}
        for i in range(rounds + 2):
            order = ["git", "oci"] if i % 2 == 0 else ["oci", "git"]
            corpora = {}
            for kind in order:
                corpus = os.path.join(work, f"{i}-{kind}")
                config = corpus + ".yaml"
                write(config, (git_yaml if kind == "git" else oci_yaml)(corpus))
                wall, _, _, _ = run_measured([exe, "prepare", "-c", config], env)
                corpora[kind] = corpus
                if i >= 2:
                    times[kind].append(wall)
            for n in BUNDLES:
                a = tree_files(os.path.join(corpora["git"], "current", n))
                b = tree_files(os.path.join(corpora["oci"], "current", n))
                if a != b:
                    raise RuntimeError(f"round {i}: {n} differs between the corpora")

        before = requests(log_path)
        fleet = os.path.join(base, "fleet")
        os.makedirs(fleet)
        procs = []
        start = time.perf_counter()
        for i in range(16):
            corpus = os.path.join(fleet, str(i))
            write(corpus + ".yaml", oci_yaml(corpus))
            procs.append(subprocess.Popen([exe, "prepare", "-c", corpus + ".yaml"], env=env,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        failed = sum(1 for p in procs if p.wait() != 0)
        fleet_wall = time.perf_counter() - start
        time.sleep(0.2)
        fleet_requests = requests(log_path) - before

        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"cold prepare, 3 bundles, {rounds} rounds (median / min / max, ms):")
        for kind in ("git", "oci"):
            v = times[kind]
            print(f"  {kind}: {med[kind] * 1e3:8.1f} {min(v) * 1e3:8.1f} {max(v) * 1e3:8.1f}")
        ratio = med["oci"] / med["git"]
        print(f"  registry / git: {ratio:.2f}x (target <= 0.5x)")
        print(f"16 concurrent preparers from the registry: {failed} failed, "
              f"{fleet_wall * 1e3:.0f} ms until the last finished, {fleet_requests} registry requests")
        print(json.dumps({"rounds": rounds, "git_ms": med["git"] * 1e3, "oci_ms": med["oci"] * 1e3,
                          "ratio": ratio, "fleet_failed": failed, "fleet_ms": fleet_wall * 1e3,
                          "fleet_requests": fleet_requests}))
        return 1 if failed else 0
    finally:
        for proc in (server, registry):
            if proc is not None:
                proc.terminate()
                proc.wait()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
