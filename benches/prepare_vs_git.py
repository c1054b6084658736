#!/usr/bin/env python3
"""Benchmark: cold and warm `skillfold prepare` against the git CLI, over smart HTTP on loopback.

Usage: python3 benches/prepare_vs_git.py [ROUNDS] [--sources N]   (default 15 rounds, 1 source)
Environment: SKILLFOLD_BIN (a binary to measure instead of building one), CARGO_TARGET_DIR
(default target/ in the repository), HTTP_PORT (default 18180),
BENCH_TMPDIR (where the repository, corpora and clones go; default: the system temp dir),
BENCH_VERBOSE=1 (one line per kept round on stderr).

--sources N (2-5): the descriptor has N Git sources that pin the same URL and commit, each with its
own corpus and a share of the approved bundles (as the bundled example does for three agents).
skillfold must fetch the commit once: the server counts the fetches it begins (a CGI wrapper
around `git http-backend` logs every request; an upload-pack handshake `GET info/refs` begins a
fetch) and every round checks the count is 1, and 0 on the warm path. The git side is one clone
and N `git archive | tar -x`, one per corpus.

1. Builds the release binary (`cargo build --release --locked` into $CARGO_TARGET_DIR, so it
   does not contend with other builds in ./target).
2. Generates the repository with benches/make_skills_repo.py (~1,800 refs, 20 bundles,
   ~400 files, binary assets outside the approved bundles) into a temp dir.
3. Serves it with lighttpd + `git http-backend` (CGI) on 127.0.0.1:$HTTP_PORT, configured as
   /work/shared/reference/git-test-servers.sh does (plain HTTP listener only).
4. Pins APPROVED (text-only bundles) by `skillfold hash` of a `git archive` extraction.
5. Warms the page cache and both clients (2 untimed rounds), then ROUNDS interleaved rounds
   (the order of the two cold runs alternates per round), each in a fresh directory:
   (a) cold  `skillfold prepare -c skillfold.yaml --json` into a fresh corpus directory;
   (b) git   `bash -c 'git clone --depth 1 --no-checkout --no-tags -q URL d &&
              git -C d archive COMMIT skills/<a> ... | tar -x -C out'` (the whole pipeline);
   (c) warm  the same `skillfold prepare` again on the corpus just prepared (nothing changed).
   Every round checks that <corpus>/current/<name>/ holds exactly the files (same paths, same
   bytes) that `git archive` extracted, and the statuses `published` / `up-to-date`.
   Round directories stay until the end (ext4 without a journal, as on the benchmark VM, skips
   recently deleted inodes when allocating, so deleting between runs slows later creates).
   Set BENCH_TMPDIR to put everything on another file system (e.g. /dev/shm: no disk, and
   fsync is free there).

Shared machines: before each round the script waits (at most PATIENCE s in all) until other
processes use < 5 % of the CPUs; a round during which they used > 10 % (system-wide busy time
from /proc/stat minus ours, the server's and our children's) is discarded and repeated. The
number of discarded rounds is printed.

Measurements: wall time with time.perf_counter from spawn to reap of one child; peak RSS from
`/usr/bin/time -f %M` around the command (GNU time wait4()s for it: ru_maxrss is the largest
resident set of the command *or any descendant it reaped*, i.e. for git the max over bash,
git clone, git-remote-http, git fetch-pack, git index-pack, git rev-list, git archive and tar --
the largest single process, not the sum of the processes that run at the same time); CPU
(user+sys) from our own wait4 on the time process. The HTTP server's processes (lighttpd,
git http-backend, git upload-pack, git pack-objects) are not counted for either side. Both
clients run with GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null and no proxy variables.

Targets (issue 12): cold skillfold <= 0.6x git wall time, peak RSS <= 1.2x git's; warm <= 30 ms.
Exit status 0 when the benchmark ran (targets missed are reported, not fatal); 1 on a
correctness failure or a failed command.
"""

import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGET_DIR = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
HTTP_PORT = int(os.environ.get("HTTP_PORT", "18180"))
APPROVED = ["docx", "mcp-builder", "pdf", "pptx", "xlsx"]
WARMUP = 2
BUSY_LIMIT = 0.10  # a round during which others used more of the CPUs is repeated
QUIET = 0.05  # before each round, wait for others to use less than this ...
PATIENCE = 900  # ... but wait no more than this many seconds in all


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def release_binary():
    """$SKILLFOLD_BIN if set (a binary built beforehand), else the release build of this tree."""
    if os.environ.get("SKILLFOLD_BIN"):
        return os.environ["SKILLFOLD_BIN"]
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT,
                   env=dict(os.environ, CARGO_TARGET_DIR=TARGET_DIR), check=True)
    return os.path.join(TARGET_DIR, "release", "skillfold")


def run_measured(argv, env, cwd=None, stdout=subprocess.DEVNULL):
    """Runs argv; returns (wall seconds, peak RSS KiB, user+sys CPU seconds, stdout bytes).

    Peak RSS comes from `/usr/bin/time -f %M` (GNU time wait4()s for the command and prints
    the rusage's ru_maxrss). It is not taken from our own wait4: a child forked by Python starts
    with Python's resident set (~20 MiB), which exec keeps as the child's high-water mark, so
    ru_maxrss could never go below it. GNU time is small (~2 MiB), so its floor is below anything
    measured here. Without /usr/bin/time the wait4 value is reported, with that floor. CPU time
    is our wait4 on the time process (it includes everything time reaped), at microsecond
    resolution; the wall time includes the exec of time itself (well under 1 ms, both sides).
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile("r") as rss:
        command = [TIME, "-q", "-f", "%M", "-o", rss.name, *argv] if TIME else argv
        start = time.perf_counter()
        proc = subprocess.Popen(command, env=env, cwd=cwd, stdout=out if stdout is subprocess.PIPE
                                else stdout, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        text, diag = out.read(), err.read()
        peak = int(rss.read().split()[-1]) if TIME and proc.returncode == 0 else usage.ru_maxrss
    if proc.returncode != 0:
        detail = diag.decode(errors="replace")
        raise RuntimeError(f"exit {proc.returncode}: {' '.join(argv)}\n{detail}")
    return wall, peak, usage.ru_utime + usage.ru_stime, text


class CpuMeter:
    """CPU used by processes other than ours during a stretch of time.

    foreign = system-wide busy time (/proc/stat, all CPUs, idle and iowait excluded)
              - what this benchmark, its reaped children and the HTTP server with its reaped
                CGI children used. Kernel threads (writeback of our own files) count as foreign,
                so an idle machine shows a few percent.
    """

    def __init__(self, server_pid):
        self.server_pid = server_pid
        self.tick = os.sysconf("SC_CLK_TCK")

    def sample(self):
        with open("/proc/stat") as f:
            fields = [int(x) for x in f.readline().split()[1:]]
        busy = (sum(fields) - fields[3] - fields[4]) / self.tick  # minus idle, iowait
        own = sum(getattr(resource.getrusage(who), k)
                  for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN)
                  for k in ("ru_utime", "ru_stime"))
        with open(f"/proc/{self.server_pid}/stat") as f:
            stat = f.read().rsplit(")", 1)[1].split()
        own += sum(int(x) for x in stat[11:15]) / self.tick  # utime stime cutime cstime
        return time.perf_counter(), busy, own

    def wait_quiet(self, deadline):
        """Waits (until `deadline`) for a 0.5 s stretch in which others use < QUIET of the CPUs."""
        while time.perf_counter() < deadline:
            before = self.sample()
            time.sleep(0.5)
            if self.foreign_share(before, self.sample()) < QUIET:
                return

    def foreign_share(self, before, after):
        """Share of all CPUs used by others between two samples (0.0 - 1.0)."""
        wall = after[0] - before[0]
        other = (after[1] - before[1]) - (after[2] - before[2])
        return max(0.0, other) / (wall * os.cpu_count())


def tree_files(base):
    """{relative path: bytes} of every file under base; refuses anything but dirs and files."""
    found = {}
    for dirpath, dirnames, filenames in os.walk(base):
        for name in dirnames + filenames:
            path = os.path.join(dirpath, name)
            if os.path.islink(path):
                raise RuntimeError(f"unexpected symlink {path}")
        for name in filenames:
            path = os.path.join(dirpath, name)
            with open(path, "rb") as f:
                found[os.path.relpath(path, base)] = f.read()
    return found


def same_bundles(corpus, extracted, sources=1):
    for i, names in enumerate(bundle_shares(sources)):
        published = corpus if sources == 1 else os.path.join(corpus, str(i))
        unpacked = extracted if sources == 1 else os.path.join(extracted, str(i))
        for name in names:
            same_bundle(name, os.path.join(published, "current", name),
                        os.path.join(unpacked, "skills", name))


def same_bundle(name, published, unpacked):
    ours = tree_files(published)
    theirs = tree_files(unpacked)
    if ours != theirs:
        missing = sorted(set(theirs) - set(ours))
        extra = sorted(set(ours) - set(theirs))
        differ = sorted(p for p in set(ours) & set(theirs) if ours[p] != theirs[p])
        raise RuntimeError(f"bundle {name} differs: missing {missing[:5]}, extra {extra[:5]}, "
                           f"different {differ[:5]}")
    if not ours:
        raise RuntimeError(f"bundle {name} is empty")


def start_server(repos, state):
    real = subprocess.run(["git", "--exec-path"], check=True, capture_output=True,
                          text=True).stdout.strip() + "/git-http-backend"
    # A wrapper that logs each request (one `echo`, then exec: well under a millisecond).
    backend = os.path.join(state, "git-http-backend")
    with open(backend, "w") as f:
        f.write(f'#!/bin/sh\necho "$REQUEST_METHOD $PATH_INFO?$QUERY_STRING" >> '
                f'"{state}/requests"\nexec "{real}"\n')
    os.chmod(backend, 0o755)
    conf = os.path.join(state, "lighttpd.conf")
    with open(conf, "w") as f:
        f.write(f"""server.modules = ("mod_alias", "mod_cgi", "mod_setenv")
server.document-root = "{repos}"
server.bind = "127.0.0.1"
server.port = {HTTP_PORT}
server.errorlog = "{state}/lighttpd-error.log"
alias.url = ("/git/" => "{backend}/")
$HTTP["url"] =~ "^/git/" {{
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "{repos}", "GIT_HTTP_EXPORT_ALL" => "")
}}
""")
    server = subprocess.Popen(["lighttpd", "-D", "-f", conf], stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{HTTP_PORT}/git/skills.git"
    for _ in range(100):
        if server.poll() is not None:
            raise RuntimeError(f"lighttpd exited ({server.returncode}); port {HTTP_PORT} in use?")
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(f"{url}/info/refs?service=git-upload-pack", timeout=2) as r:
                if r.status == 200:
                    return server, url
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("lighttpd did not answer")


def bundle_shares(sources):
    """The approved bundles split into `sources` non-empty groups, in order."""
    return [APPROVED[i::sources] for i in range(sources)]


def descriptor(path, url, commit, corpus, pins, sources=1):
    """One Git source per share of the bundles, each with its own corpus `<corpus>/<i>` (or
    `<corpus>` itself when there is one source)."""
    lines = ["skills:"]
    for i, names in enumerate(bundle_shares(sources)):
        directory = corpus if sources == 1 else os.path.join(corpus, str(i))
        lines += ["  - git:", f"      source: {url}", f"      revision: {commit}",
                  f"      directory: {directory}", "      root: skills", "      approved:"]
        lines += [f'        - {{ name: {n}, version: "1.0.0", hash: {pins[n]} }}' for n in names]
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def server_fetches(state):
    """How many fetches the server has begun (upload-pack handshakes)."""
    try:
        with open(os.path.join(state, "requests")) as f:
            return sum(1 for line in f
                       if line.startswith("GET ") and "service=git-upload-pack" in line)
    except FileNotFoundError:
        return 0


def fmt_row(label, values, scale, unit):
    med, lo = statistics.median(values) * scale, min(values) * scale
    return f"{label:<26} {med:9.1f} {lo:9.1f} {max(values) * scale:9.1f}  {unit}"


def main():
    args = sys.argv[1:]
    sources = 1
    if "--sources" in args:
        at = args.index("--sources")
        sources = int(args[at + 1])
        del args[at:at + 2]
        if not 2 <= sources <= len(APPROVED):
            raise RuntimeError(f"--sources takes 2 to {len(APPROVED)}")
    rounds = int(args[0]) if args else 15
    exe = release_binary()

    # Both clients: no system/global git config, no proxy (loopback only), no prompts.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") and not k.lower().endswith("_proxy")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               LC_ALL="C", no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    base = tempfile.mkdtemp(prefix="prepare-vs-git-", dir=os.environ.get("BENCH_TMPDIR"))
    server = None

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    try:
        repos, state = os.path.join(base, "repos"), os.path.join(base, "server")
        os.makedirs(state)
        gen = subprocess.run([sys.executable, os.path.join(ROOT, "benches", "make_skills_repo.py"),
                              repos], check=True, capture_output=True, text=True, env=env).stdout
        info = dict(line.split(": ", 1) for line in gen.splitlines() if ": " in line)
        commit = info["head"]
        server, url = start_server(repos, state)

        # Pins: skillfold hash over a git archive extraction of the approved bundles.
        ref = os.path.join(base, "reference")
        os.makedirs(ref)
        folders = [f"skills/{n}" for n in APPROVED]
        archive = subprocess.run(["git", "-C", os.path.join(repos, "skills.git"), "archive", commit,
                                  *folders], check=True, capture_output=True, env=env).stdout
        subprocess.run(["tar", "-x", "-C", ref], input=archive, check=True)
        hashed = subprocess.run([exe, "hash", *(os.path.join(ref, f) for f in folders)],
                                check=True, capture_output=True, text=True).stdout
        pins = {os.path.basename(d): h
                for h, d in (line.split("  ", 1) for line in hashed.splitlines())}

        if sources == 1:
            git_script = (f"set -eo pipefail; "
                          f"git clone --depth 1 --no-checkout --no-tags -q {url} d && "
                          f"git -C d archive {commit} {' '.join(folders)} | tar -x -C out")
        else:
            archives = " && ".join(
                f"mkdir out/{i} && git -C d archive {commit} "
                f"{' '.join(f'skills/{n}' for n in names)} | tar -x -C out/{i}"
                for i, names in enumerate(bundle_shares(sources)))
            git_script = (f"set -eo pipefail; "
                          f"git clone --depth 1 --no-checkout --no-tags -q {url} d && {archives}")
        cold, warm, peer, internal = [], [], [], []
        work = os.path.join(base, "rounds")
        os.makedirs(work)

        meter = CpuMeter(server.pid)
        deadline = time.perf_counter() + PATIENCE
        attempt, discarded, shares = 0, 0, []
        while len(cold) < rounds:
            attempt += 1
            if attempt > WARMUP + 5 * rounds:
                raise RuntimeError(f"the machine stayed busy: {discarded} rounds disturbed by "
                                   f"other processes (> {BUSY_LIMIT:.0%} of the CPUs)")
            meter.wait_quiet(deadline)
            # Round directories are only removed at the end: on a file system without a journal
            # ext4 skips recently deleted inodes when it allocates new ones, so deleting between
            # runs makes every later file creation slower (seen on the benchmark VM).
            d = tempfile.mkdtemp(dir=work)
            corpus, out = os.path.join(d, "corpus"), os.path.join(d, "out")
            os.makedirs(out)
            desc = os.path.join(d, "skillfold.yaml")
            descriptor(desc, url, commit, corpus, pins, sources)
            prep = [exe, "prepare", "-c", desc, "--json"]

            def skillfold_cold():
                seen = server_fetches(state)
                m = run_measured(prep, env, cwd=d, stdout=subprocess.PIPE)
                report = json.loads(m[3])
                for source in report["sources"]:
                    assert source["bundles"][0]["status"] == "published", report
                fetched = server_fetches(state) - seen
                if fetched != 1 or report["fetches"] != 1:
                    raise RuntimeError(f"{sources} source(s) of one commit made {fetched} "
                                       f"fetch(es) at the server (report: {report['fetches']})")
                return m[:3], report["duration_ms"] / 1000

            def git_cold():
                return run_measured(["bash", "-c", git_script], env, cwd=d)[:3]

            before = meter.sample()
            if attempt % 2:
                a, dur = skillfold_cold()
                b = git_cold()
            else:
                b = git_cold()
                a, dur = skillfold_cold()
            seen = server_fetches(state)
            c = run_measured(prep, env, cwd=d, stdout=subprocess.PIPE)
            share = meter.foreign_share(before, meter.sample())
            report = json.loads(c[3])
            for source in report["sources"]:
                assert source["bundles"][0]["status"] == "up-to-date", report
            if server_fetches(state) != seen or report["fetches"] != 0:
                raise RuntimeError("the warm path fetched")
            same_bundles(corpus, out, sources)
            if attempt <= WARMUP:
                continue
            if share > BUSY_LIMIT:
                discarded += 1
                continue
            if os.environ.get("BENCH_VERBOSE"):
                print(f"round {len(cold) + 1:2d}: skillfold {a[0] * 1000:6.1f} ms"
                      f" cpu {a[2] * 1000:6.1f} | git {b[0] * 1000:6.1f} ms"
                      f" cpu {b[2] * 1000:6.1f} | warm {c[0] * 1000:5.1f} ms"
                      f" | others {share:.0%}", file=sys.stderr)
            shares.append(share)
            cold.append(a)
            peer.append(b)
            warm.append(c[:3])
            internal.append(dur)
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(base, ignore_errors=True)

    def col(samples, k):
        return [s[k] for s in samples]

    versions = [subprocess.run(c, capture_output=True, text=True).stdout.strip()
                for c in ([exe, "--version"], ["git", "--version"])]
    print(f"{' / '.join(versions)} / {os.uname().release}, {os.cpu_count()} CPUs")
    print(f"repository: files {info['files']}")
    print(f"approved: {', '.join(APPROVED)} @ {commit[:12]}; rounds: {rounds} (+{WARMUP} warm-up); "
          f"every round: published bytes == git archive bytes")
    print(f"sources: {sources} of one commit ({' | '.join(','.join(n) for n in bundle_shares(sources))}); "
          f"server-side fetches per cold skillfold run: 1, per warm run: 0 (checked every round)")
    print(f"{'':<26} {'median':>9} {'min':>9} {'max':>9}")
    print(fmt_row("cold skillfold wall", col(cold, 0), 1000, "ms"))
    print(fmt_row("  (its --json duration)", internal, 1000, "ms"))
    print(fmt_row("git clone+archive wall", col(peer, 0), 1000, "ms"))
    print(fmt_row("warm skillfold wall", col(warm, 0), 1000, "ms"))
    print(fmt_row("cold skillfold peak RSS", col(cold, 1), 1 / 1024, "MiB"))
    print(fmt_row("git peak RSS (max proc)", col(peer, 1), 1 / 1024, "MiB"))
    print(fmt_row("warm skillfold peak RSS", col(warm, 1), 1 / 1024, "MiB"))
    print(fmt_row("cold skillfold CPU u+s", col(cold, 2), 1000, "ms"))
    print(fmt_row("git CPU u+s (reaped)", col(peer, 2), 1000, "ms"))
    print(fmt_row("warm skillfold CPU u+s", col(warm, 2), 1000, "ms"))
    wall = statistics.median(col(cold, 0)) / statistics.median(col(peer, 0))
    rss = statistics.median(col(cold, 1)) / statistics.median(col(peer, 1))
    warm_ms = statistics.median(col(warm, 0)) * 1000
    paired = statistics.median(a[0] / b[0] for a, b in zip(cold, peer))
    ok = lambda good: "ok" if good else "MISSED"  # noqa: E731
    print(f"ratio skillfold/git wall (medians): {wall:.2f}x  (target <= 0.60x) {ok(wall <= 0.6)}"
          f"; median of the per-round ratios {paired:.2f}x")
    print(f"ratio skillfold/git RSS  (medians): {rss:.2f}x  (target <= 1.20x) {ok(rss <= 1.2)}")
    print(f"warm prepare median: {warm_ms:.1f} ms  (target <= 30 ms) {ok(warm_ms <= 30)}")
    print(f"other processes: median {statistics.median(shares):.0%}, max {max(shares):.0%} of the "
          f"{os.cpu_count()} CPUs in the kept rounds; {discarded} round(s) over {BUSY_LIMIT:.0%} "
          f"discarded and repeated")
    print("peak RSS: " + ("/usr/bin/time -f %M (max over the command and every process it "
                          "reaped; for git the largest single process of the pipeline)" if TIME
                          else "os.wait4 ru_maxrss (floor: the benchmark's own RSS)"))


if __name__ == "__main__":
    try:
        main()
    except RuntimeError as e:
        sys.exit(f"error: {e}")
