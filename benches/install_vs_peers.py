#!/usr/bin/env python3
"""Benchmark: installing 50 skills from 10 repositories into a project's `.claude/skills`, with
`skillfold install --into` from a descriptor and with two peers, over smart HTTP on loopback.

Usage: python3 benches/install_vs_peers.py [ROUNDS]        (default 5)
       python3 benches/install_vs_peers.py --install-peers  (once, with registry access)
Environment: SKILLFOLD_BIN (a binary to measure instead of building one), CARGO_TARGET_DIR
(default target/), PEERS_DIR (default target/peers), HTTP_PORT (default 18290), BENCH_TMPDIR
(default: the system temp dir; BENCH_KEEP=1 keeps what it made there), BENCH_NETNS=0 (run in the machine's network namespace; see below),
BENCH_PEERS (default "skills apm": the peers to run).

The peers, installed by --install-peers into PEERS_DIR (a scratch folder under target/):
  skills  the vercel `skills` CLI: npm `skills` 1.5.18, the newest whose `engines` admits the
          machine's Node 20 (1.5.19 and later want Node >= 22.20), `npm install --prefix`;
  apm     Microsoft APM: `apm-cli` 0.35.0 from PyPI, in a venv.

The repositories (benches/peers/skill_repos.py): 10 bare repositories of 5 skills each
(`skills/<name>/`: SKILL.md, two references, an executable helper; ~12 KB a skill), with other
content beside them as real ones have (source, docs, 1 MiB of binary assets; ~1.4 MB a depth-1
clone), three commits on `main`. lighttpd + `git http-backend` serve them on 127.0.0.1 with
`uploadpack.allowFilter` and `uploadpack.allowAnySHA1InWant`, as hosted Git services do.

No network but loopback: unless BENCH_NETNS=0 the script re-runs itself in a network namespace
of its own (`unshare -n -m`, loopback up, /etc/resolv.conf bind-mounted to name 127.0.0.1), so a
peer that tries to reach anything else (a telemetry endpoint, an update check, an audit API: the
`skills` CLI looks up `add-skill.vercel.sh` for its audit whatever the telemetry setting) fails at
once on loopback instead of reaching out. Besides, every
peer runs with HOME, TMPDIR and its caches in a scratch folder of the round, telemetry off
(`DISABLE_TELEMETRY=1`, `DO_NOT_TRACK=1`), and APM's daily update check marked done (its
`~/.cache/apm/last_version_check` touched before each run). Git runs with
GIT_CONFIG_NOSYSTEM=1 and GIT_CONFIG_GLOBAL=/dev/null for every tool.

Each round, in a fresh folder per tool (the order of the three cold runs rotates per round):
  skillfold cold    `skillfold install -c skillfold.yaml --into .claude/skills`: 10 Git sources
                    (`root: skills`, `track: main`, 5 approved pins each, corpora under
                    `.skillfold/`), `selection: { max_skills: 64 }`; no corpus yet;
  skillfold warm    the same command again: nothing changed;
  verify            `skillfold verify -c skillfold.yaml --installed .claude/skills`;
  skills cold       10 × `skills add URL --skill A ... --agent claude-code --yes --copy` (one
                    command per repository, as the CLI takes one source at a time);
  apm cold          `apm install --allow-insecure --target claude` of an `apm.yml` listing the 50
                    skills (`git: URL`, `path: skills/<name>`, `ref: <commit>`,
                    `allow_insecure: true`), its package cache empty;
  apm warm          `apm install ...` again (lock file and `apm_modules/` present);
  skillfold moved   one repository's `main` moves to a new commit (one skill changed):
                    `skillfold update -c skillfold.yaml --write` (the review to /dev/null), then
                    `skillfold install ...`; reported as the two commands together and apart.
Each run's `.claude/skills` is checked: exactly the 50 skills, each holding the bytes `git
archive` extracts (the changed skill's new bytes after the move).

Measured per run: wall time (spawn to reap), CPU time (user + system of the command and every
process it reaped, e.g. git for the peers), peak RSS (`/usr/bin/time -f %M`: the largest single
process), bytes fetched (the server's response bytes for the run, from lighttpd's access log),
and, per repository, the upload-pack advertisements (`GET info/refs`, one per fetch or ls-remote)
and `POST`s (ls-refs / fetch commands). Medians over the rounds; ratios of medians of the same
interleaved run.

Targets (issue "Installs in a blink" §1): skillfold cold <= 0.05x the faster peer's cold; warm
<= 100 ms; verify --installed <= 50 ms; one fetch per repository and commit (the cold run
fetches each repository once, the warm run none, the moved run only the moved repository).
Exit status 0 when the benchmark ran (targets missed are reported); 1 on a failure.
"""

import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "peers"))
from prepare_vs_git import release_binary, run_measured, tree_files  # noqa: E402
import skill_repos  # noqa: E402

ROOT = os.path.dirname(HERE)
PEERS_DIR = os.environ.get("PEERS_DIR", os.path.join(ROOT, "target", "peers"))
HTTP_PORT = int(os.environ.get("HTTP_PORT", "18290"))
SKILLS_VERSION = "1.5.18"
APM_VERSION = "0.35.0"
MAX_SKILLS = 64
GIT_ENV = {"GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": "/dev/null",
           "GIT_TERMINAL_PROMPT": "0"}


def install_peers():
    """npm `skills` and `apm-cli` into PEERS_DIR (needs the registries: run outside the
    benchmark's namespace)."""
    home = os.path.join(PEERS_DIR, "home")
    os.makedirs(home, exist_ok=True)
    env = dict(os.environ, HOME=home, NPM_CONFIG_UPDATE_NOTIFIER="false")
    subprocess.run(["npm", "install", "--prefix", os.path.join(PEERS_DIR, "npm-skills"),
                    f"skills@{SKILLS_VERSION}", "--no-fund", "--no-audit"], env=env, check=True)
    venv = os.path.join(PEERS_DIR, "apm-venv")
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([os.path.join(venv, "bin", "pip"), "install", "-q",
                    f"apm-cli=={APM_VERSION}"], env=env, check=True)


def peer_commands():
    return {
        "skills": os.path.join(PEERS_DIR, "npm-skills", "node_modules", ".bin", "skills"),
        "apm": os.path.join(PEERS_DIR, "apm-venv", "bin", "apm"),
    }


def in_own_netns():
    """Re-runs this script in a network namespace of its own (loopback only) and a mount
    namespace in which /etc/resolv.conf names 127.0.0.1, so that a name lookup (the `skills`
    CLI looks up its audit service whatever the telemetry setting) goes to loopback too."""
    if os.environ.get("BENCH_IN_NETNS") == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        resolv = tempfile.NamedTemporaryFile("w", prefix="resolv-", delete=False)
        resolv.write("nameserver 127.0.0.1\n")
        resolv.close()
        subprocess.run(["mount", "--bind", resolv.name, "/etc/resolv.conf"], check=True)
        return
    if os.environ.get("BENCH_NETNS", "1") == "0":
        return
    env = dict(os.environ, BENCH_IN_NETNS="1")
    os.execvpe("unshare", ["unshare", "-n", "-m", "--propagation", "private", sys.executable,
                           *sys.argv], env)


def descriptor(path, base_url, repos, pins, revision_of):
    lines = [f"selection: {{ max_skills: {MAX_SKILLS} }}", "skills:"]
    for repo in repos:
        lines += [
            "  - git:",
            f"      source: {base_url}{repo['name']}.git",
            f"      revision: {revision_of(repo)}",
            f"      directory: .skillfold/{repo['name']}",
            "      root: skills",
            "      track: main",
            "      approved:",
        ]
        lines += [f"        - {{ name: {n}, version: '1', hash: {pins[(repo['name'], n)]} }}"
                  for n in repo["skills"]]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def apm_manifest(path, base_url, repos):
    lines = ["name: bench", "version: 1.0.0", "dependencies:", "  apm:"]
    for repo in repos:
        for n in repo["skills"]:
            lines += [f"    - git: {base_url}{repo['name']}.git", f"      path: skills/{n}",
                      f"      ref: {repo['head']}", "      allow_insecure: true"]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def pin_all(exe, repos, base, commit_of):
    """{(repo, name): digest} of every skill at `commit_of(repo)`, and where it was extracted."""
    pins, extracted = {}, {}
    for repo in repos:
        out = os.path.join(base, repo["name"] + "-" + commit_of(repo)[:8])
        if not os.path.isdir(out):
            skill_repos.extract(repo, commit_of(repo), out)
        dirs = [os.path.join(out, n) for n in repo["skills"]]
        text = subprocess.run([exe, "hash", *dirs], check=True, capture_output=True,
                              text=True).stdout
        for line in text.splitlines():
            digest, path = line.split(None, 1)
            pins[(repo["name"], os.path.basename(path))] = digest
        extracted.update({n: os.path.join(out, n) for n in repo["skills"]})
    return pins, extracted


def same_install(folder, expected, tool):
    """`folder` holds exactly the expected skills, each with the extracted bytes."""
    found = sorted(n for n in os.listdir(folder) if not n.startswith("."))
    if found != sorted(expected):
        raise RuntimeError(f"{tool}: {folder} holds {found}, not the 50 skills")
    for name, source in expected.items():
        ours, theirs = tree_files(os.path.join(folder, name)), tree_files(source)
        if ours != theirs:
            differ = sorted(set(ours) ^ set(theirs)) or sorted(
                p for p in ours if ours[p] != theirs[p])
            raise RuntimeError(f"{tool}: {name} differs from git archive: {differ[:5]}")


class Round:
    """One round's runs, each measured and attributed its server traffic."""

    def __init__(self, traffic, results, number):
        self.traffic, self.results, self.number = traffic, results, number

    def measure(self, key, commands, cwd, env):
        """Runs `commands` in order as one run of `key`: wall and CPU summed, peak RSS the max."""
        wall = cpu = 0.0
        peak = 0
        for argv in commands:
            w, rss, c, _, _ = run_measured(argv, env, cwd=cwd)
            wall, cpu, peak = wall + w, cpu + c, max(peak, rss)
        run_id = f"{self.number}-{key}".replace(" ", "_").replace("+", "")
        requests = self.traffic.end_run(run_id)
        self.results.setdefault(key, []).append(
            {"wall": wall, "cpu": cpu, "rss": peak, "run": run_id,
             "fetches": skill_repos.fetches(requests)})


def main():
    if sys.argv[1:] == ["--install-peers"]:
        install_peers()
        return
    in_own_netns()
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 5
    exe = os.path.abspath(release_binary())
    peers = {k: v for k, v in peer_commands().items()
             if k in os.environ.get("BENCH_PEERS", "skills apm").split()}
    for name, path in peers.items():
        if not os.access(path, os.X_OK):
            raise RuntimeError(f"{name}: {path} missing: run `python3 {sys.argv[0]} "
                               "--install-peers` first")
    base = tempfile.mkdtemp(prefix="install-vs-peers-", dir=os.environ.get("BENCH_TMPDIR"))
    repos_dir, state = os.path.join(base, "repos"), os.path.join(base, "state")
    os.makedirs(state)
    print(f"generating {skill_repos.REPOS} repositories of {skill_repos.SKILLS} skills ...",
          file=sys.stderr)
    repos = skill_repos.make_repos(repos_dir)
    moved = repos[0]
    pins, expected = pin_all(exe, repos, os.path.join(base, "archive"), lambda r: r["head"])
    moved_pins, moved_expected = pin_all(
        exe, [moved], os.path.join(base, "archive"), lambda r: r["moved"])
    after_move = dict(expected, **moved_expected)
    server, base_url = skill_repos.start_server(repos_dir, state, HTTP_PORT)
    traffic = skill_repos.Traffic(state, HTTP_PORT)
    results = {}
    env_common = dict(os.environ, **GIT_ENV)
    for k in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        env_common.pop(k, None)
    try:
        for number in range(rounds + 1):  # round 0 warms the page cache and is not kept
            r = Round(traffic, results if number else {}, number)
            skill_repos.set_main(moved, moved["head"])
            work = os.path.join(base, f"round-{number}")
            cold = ["skillfold"] + list(peers)
            shift = number % len(cold)
            for tool in cold[shift:] + cold[:shift]:
                project = os.path.join(work, tool)
                home = os.path.join(work, f"{tool}-home")
                tmp = os.path.join(work, f"{tool}-tmp")
                for d in (project, home, tmp):
                    os.makedirs(d)
                env = dict(env_common, HOME=home, TMPDIR=tmp, XDG_CACHE_HOME=f"{home}/.cache",
                           XDG_CONFIG_HOME=f"{home}/.config", DISABLE_TELEMETRY="1",
                           DO_NOT_TRACK="1", NPM_CONFIG_UPDATE_NOTIFIER="false")
                claude = os.path.join(project, ".claude", "skills")
                if tool == "skillfold":
                    config = os.path.join(project, "skillfold.yaml")
                    descriptor(config, base_url, repos, pins, lambda repo: repo["head"])
                    install = [exe, "install", "-c", "skillfold.yaml", "--into", ".claude/skills"]
                    r.measure("skillfold cold", [install], project, env)
                    same_install(claude, expected, "skillfold cold")
                    r.measure("skillfold warm", [install], project, env)
                    r.measure("skillfold verify --installed",
                              [[exe, "verify", "-c", "skillfold.yaml", "--installed",
                                ".claude/skills"]], project, env)
                elif tool == "skills":
                    commands = [[peers["skills"], "add", f"{base_url}{repo['name']}.git",
                                 *[a for n in repo["skills"] for a in ("--skill", n)],
                                 "--agent", "claude-code", "--yes", "--copy"] for repo in repos]
                    r.measure("skills cold", commands, project, env)
                    same_install(claude, expected, "skills cold")
                elif tool == "apm":
                    apm_manifest(os.path.join(project, "apm.yml"), base_url, repos)
                    mark = os.path.join(home, ".cache", "apm", "last_version_check")
                    os.makedirs(os.path.dirname(mark))
                    open(mark, "w").close()
                    command = [peers["apm"], "install", "--allow-insecure", "--target", "claude"]
                    r.measure("apm cold", [command], project, env)
                    same_install(claude, expected, "apm cold")
                    os.utime(mark)
                    r.measure("apm warm", [command], project, env)
            # One repository moves: review and write the new pins, then install them.
            skill_repos.set_main(moved, moved["moved"])
            project = os.path.join(work, "skillfold")
            env = dict(env_common, HOME=os.path.join(work, "skillfold-home"),
                       TMPDIR=os.path.join(work, "skillfold-tmp"))
            r.measure("skillfold update --write",
                      [[exe, "update", "-c", "skillfold.yaml", "--write"]], project, env)
            r.measure("skillfold install after the move",
                      [[exe, "install", "-c", "skillfold.yaml", "--into", ".claude/skills"]],
                      project, env)
            same_install(os.path.join(project, ".claude", "skills"), after_move,
                         "skillfold after the move")
            with open(os.path.join(project, "skillfold.yaml")) as f:
                if moved["moved"] not in f.read():
                    raise RuntimeError("update --write did not write the moved commit")
            print(f"round {number} done", file=sys.stderr)
    finally:
        server.terminate()
        server.wait()
        skill_repos.set_main(moved, moved["head"])
    received = traffic.bytes_by_run()
    report(results, received, moved["name"], rounds)
    if os.environ.get("BENCH_KEEP") == "1":
        print(f"kept {base}", file=sys.stderr)
    else:
        shutil.rmtree(base, ignore_errors=True)


def report(results, received, moved_repo, rounds):
    def med(key, field):
        return statistics.median(x[field] for x in results[key])

    def med_bytes(key):
        return statistics.median(received.get(x["run"], 0) for x in results[key])

    both = [a["wall"] + b["wall"] for a, b in zip(results["skillfold update --write"],
                                                  results["skillfold install after the move"])]
    print(f"{rounds} interleaved rounds, medians; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs at the end")
    print(f"{'run':36} {'wall ms':>10} {'CPU ms':>10} {'peak RSS MiB':>13} {'fetched KiB':>12}")
    for key in results:
        print(f"{key:36} {med(key, 'wall') * 1000:10.1f} {med(key, 'cpu') * 1000:10.1f} "
              f"{med(key, 'rss') / 1024:13.1f} {med_bytes(key) / 1024:12.1f}")
    print(f"{'skillfold update --write + install':36} {statistics.median(both) * 1000:10.1f}")

    def ok(met):
        return "met" if met else "MISSED"

    cold = med("skillfold cold", "wall")
    peers = {k.split()[0]: med(k, "wall") for k in results if k in ("skills cold", "apm cold")}
    if peers:
        fastest = min(peers, key=peers.get)
        ratio = cold / peers[fastest]
        for name, wall in peers.items():
            print(f"ratio skillfold cold / {name} cold wall: {cold / wall:.3f}x")
        print(f"cold vs the faster peer ({fastest}): {ratio:.3f}x (target <= 0.05x) "
              f"{ok(ratio <= 0.05)}")
    warm = med("skillfold warm", "wall") * 1000
    verify = med("skillfold verify --installed", "wall") * 1000
    print(f"warm install: {warm:.1f} ms (target <= 100 ms) {ok(warm <= 100)}")
    print(f"verify --installed of 50: {verify:.1f} ms (target <= 50 ms) {ok(verify <= 50)}")
    # One fetch per repository and commit.
    per = {key: [x["fetches"] for x in results[key]] for key in results}
    cold_ok = all(len(f) == 10 and all(g == 1 for g, _ in f.values())
                  for f in per["skillfold cold"])
    warm_ok = all(not f for f in per["skillfold warm"] + per["skillfold verify --installed"])
    moved_ok = all(set(f) == {f"{moved_repo}.git"} and f[f"{moved_repo}.git"][0] == 1
                   for f in per["skillfold install after the move"])
    posts = sorted({p for f in per["skillfold cold"] for _, p in f.values()})
    print(f"fetches: cold 1 per repository ({ok(cold_ok)}; POSTs per repository {posts}), "
          f"warm and verify none ({ok(warm_ok)}), install after the move only {moved_repo} "
          f"once ({ok(moved_ok)}); update --write: {per['skillfold update --write'][0]}")
    for key in ("skills cold", "apm cold", "apm warm"):
        if key in per:
            gets = sum(g for g, _ in per[key][0].values())
            posts = sum(p for _, p in per[key][0].values())
            print(f"{key}: {gets} upload-pack advertisements and {posts} POSTs for 10 "
                  "repositories (first kept round)")
    print(json.dumps({k: [{f: x[f] for f in ("wall", "cpu", "rss")} for x in v]
                      for k, v in results.items()}), file=sys.stderr)


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        sys.exit(f"error: {e}")
