#!/usr/bin/env python3
"""Benchmark: cold and warm `skillfold prepare` against the git CLI, over smart HTTP on loopback.

Usage: python3 benches/prepare_vs_git.py [ROUNDS] [--sources N | --agents A --skills S] [--big]
       [--no-filter] [--limits chamvi|extended]
(default 15 rounds, 1 source, the repository as generated, a server that offers `filter`)
Environment: SKILLFOLD_BIN (a binary to measure instead of building one), CARGO_TARGET_DIR
(default target/ in the repository), HTTP_PORT (default 18180),
BENCH_TMPDIR (where the repository, corpora and clones go; default: the system temp dir),
BENCH_VERBOSE=1 (one line per kept round on stderr), BENCH_BUSY_LIMIT and BENCH_PATIENCE (below).

--sources N (2-5): the descriptor has N Git sources that pin the same URL and commit, each with its
own corpus and a share of the approved bundles (as the bundled example does for three agents).
skillfold must fetch the commit once: the server counts the fetches it begins (a CGI wrapper
around `git http-backend` logs every request; an upload-pack handshake `GET info/refs` begins a
fetch) and every round checks the count is 1, and 0 on the warm path. The git side is one clone
and N `git archive | tar -x`, one per corpus.

--agents A --skills S (issue 29's "31 agents x 16 skills of one commit"): the repository is
make_skills_repo.py's agents shape instead (one commit of A x S small text bundles under
agents/agent-NN/, nothing else: every blob of the commit is approved), and the descriptor has no
default skills and A agents, each with one Git source of that URL and commit (`root:
agents/agent-NN`, its own corpus `<corpus>/agent-NN`) approving its S bundles. skillfold must
fetch the commit once for all A sources (checked every round, as with --sources); the server's
`POST`s (upload-pack `fetch` commands) are reported: 2 is the target, one for the trees and one
for every blob. The git side is one clone and ONE `git archive | tar -x` of all A x S folders
(git's sparse best: one `sparse-checkout set` of them all). Target (issue 37): <= 0.8x
clone+archive wall on tmpfs, <= 1.0x on a disk (the file system of BENCH_TMPDIR, from
/proc/mounts).

A partial fetch that falls back to the whole commit (said once on stderr: "... fetched the
whole commit"; a second connection, so 2 fetches begin at the server) is reported as a missed
target with its reason, not fatal; any other fetch count or kind is.
--limits PROFILE: every source names that limits profile (`chamvi` is the default; the pins do
not change, the digest does not depend on the profile). The partial fetch's bounds on the blobs'
pack follow the profile's file size.

--big: the pinned commit also holds 100 MiB of random binary files under assets/big (beside the
skills, in no other commit): what a partial fetch never transfers and a clone must.
--no-filter: skillfold and git fetch from a server that offers no partial fetch (`/plain/`);
skillfold must report `"fetch": "full"` (otherwise `"partial"`, checked every round).

1. Builds the release binary (`cargo build --release --locked` into $CARGO_TARGET_DIR, so it
   does not contend with other builds in ./target).
2. Generates the repository with benches/make_skills_repo.py (~1,800 refs, 20 bundles,
   ~400 files, binary assets outside the approved bundles) into a temp dir.
3. Serves it with lighttpd + `git http-backend` (CGI) on 127.0.0.1:$HTTP_PORT, configured as
   /work/shared/reference/git-test-servers.sh does (plain HTTP listener only), at `/git/` with
   `uploadpack.allowFilter` and `uploadpack.allowAnySHA1InWant` (as hosted Git services have
   them) and at `/plain/` without; lighttpd's access log gives the bytes each run received and
   its `POST`s (upload-pack `fetch` commands).
4. Pins APPROVED (text-only bundles; with --agents every bundle) by `skillfold hash` of a
   `git archive` extraction.
5. Warms the page cache and both clients (2 untimed rounds), then ROUNDS interleaved rounds
   (the order of the two cold runs alternates per round), each in a fresh directory:
   (a) cold  `skillfold prepare -c skillfold.yaml --json` into a fresh corpus directory;
   (b) git   `bash -c 'git clone --depth 1 --no-checkout --no-tags -q URL d &&
              git -C d archive COMMIT skills/<a> ... | tar -x -C out'` (the whole pipeline);
   (s) git's own best (not with --no-filter): `git clone --depth 1 --filter=blob:none --sparse
              --no-checkout --no-tags -q URL s && git -C s sparse-checkout set <folders> &&
              git -C s checkout -q COMMIT` (its bundles are compared too);
   (c) warm  the same `skillfold prepare` again on the corpus just prepared (nothing changed).
   Every round checks that <corpus>/current/<name>/ holds exactly the files (same paths, same
   bytes) that `git archive` extracted, and the statuses `published` / `up-to-date`.
   Round directories stay until the end (ext4 without a journal, as on the benchmark VM, skips
   recently deleted inodes when allocating, so deleting between runs slows later creates).
   Set BENCH_TMPDIR to put everything on another file system (e.g. /dev/shm: no disk, and
   fsync is free there).
   Each cold run (skillfold's and both of git's) starts after an untimed `sync`, so that it
   begins with nothing dirty in the page cache: git never syncs what it extracted (~20 MB in
   ~5,000 files with --agents 31 --skills 16), and skillfold's `syncfs` of the same file system
   would otherwise write that back too, charging the run before it to skillfold (on a disk this
   made skillfold's wall 250-375 ms for one binary, depending on what ran just before).

Shared machines: before each round the script waits (at most PATIENCE s in all) until other
processes use < 5 % of the CPUs; a round during which they used > BENCH_BUSY_LIMIT (default
0.10 = 10 %; system-wide busy time from /proc/stat minus ours, the server's and our children's)
is discarded and repeated. The number of discarded rounds is printed. BENCH_PATIENCE (default
900) bounds the waiting in seconds.

Measurements: wall time with time.perf_counter from spawn to reap of one child; peak RSS from
`/usr/bin/time -f %M` around the command (GNU time wait4()s for it: ru_maxrss is the largest
resident set of the command *or any descendant it reaped*, i.e. for git the max over bash,
git clone, git-remote-http, git fetch-pack, git index-pack, git rev-list, git archive and tar --
the largest single process, not the sum of the processes that run at the same time); CPU
(user+sys) from our own wait4 on the time process. The HTTP server's processes (lighttpd,
git http-backend, git upload-pack, git pack-objects) are not counted for either side. Both
clients run with GIT_CONFIG_NOSYSTEM=1, GIT_CONFIG_GLOBAL=/dev/null and no proxy variables.

Then MEMORY_ROUNDS cold runs alone, their /proc/PID/status polled every millisecond: peak
resident set (VmHWM) and the largest anonymous part seen (RssAnon, the heap: what an init
container's memory limit must hold; the mapped pack is file-backed and reclaimable).

Targets (issue 29): cold skillfold <= 0.4x git clone+archive wall (0.15x with --big, 0.8x with
--agents), <= 1.0x
git's sparse best; anonymous memory <= 32 MiB, the same with and without --big; without filter
no slower than before (issue 12's figures); warm <= 30 ms.
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
MEMORY_ROUNDS = 3  # cold runs measured alone for their resident and anonymous memory
BIG_MIB = 100  # --big: random (incompressible) blobs added beside the skills
# A round during which others used more of the CPUs is repeated (BENCH_BUSY_LIMIT=1 keeps every
# round: on a machine that is never quiet, only the ratios of one interleaved run mean anything).
BUSY_LIMIT = float(os.environ.get("BENCH_BUSY_LIMIT", "0.10"))
QUIET = 0.05  # before each round, wait for others to use less than this ...
PATIENCE = int(os.environ.get("BENCH_PATIENCE", "900"))  # ... but no more seconds than this


TIME = "/usr/bin/time" if os.access("/usr/bin/time", os.X_OK) else None


def release_binary():
    """$SKILLFOLD_BIN if set (a binary built beforehand), else the release build of this tree."""
    if os.environ.get("SKILLFOLD_BIN"):
        return os.environ["SKILLFOLD_BIN"]
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT,
                   env=dict(os.environ, CARGO_TARGET_DIR=TARGET_DIR), check=True)
    return os.path.join(TARGET_DIR, "release", "skillfold")


def run_measured(argv, env, cwd=None, stdout=subprocess.DEVNULL):
    """Runs argv; returns (wall seconds, peak RSS KiB, user+sys CPU seconds, stdout bytes,
    stderr bytes).

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
    return wall, peak, usage.ru_utime + usage.ru_stime, text, diag


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


def same_bundles(corpus, extracted, groups, by_group=True):
    """Every approved bundle published under `corpus` holds what git put under `extracted`
    (in each group's own folder of it when `by_group`, as the archives of --sources do)."""
    for group in groups:
        published = corpus_of(corpus, group)
        unpacked = os.path.join(extracted, group["out"]) if by_group else extracted
        for name in group["names"]:
            same_bundle(name, os.path.join(published, "current", name),
                        os.path.join(unpacked, group["root"], name))


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
    """lighttpd + `git http-backend` on 127.0.0.1: `/git/` with `uploadpack.allowFilter` and
    `uploadpack.allowAnySHA1InWant` (as hosted Git services have them), `/plain/` without (a
    server that offers no partial fetch). Returns the server and both repository URLs."""
    real = subprocess.run(["git", "--exec-path"], check=True, capture_output=True,
                          text=True).stdout.strip() + "/git-http-backend"
    # Wrappers that log each request (one `echo`, then exec: well under a millisecond) and set
    # the upload-pack switches through GIT_CONFIG_* (every git the backend runs reads them).
    backends = {}
    for name, switches in (("git", ["uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"]),
                           ("plain", [])):
        backend = os.path.join(state, f"backend-{name}")
        config = f"export GIT_CONFIG_COUNT={len(switches)}\n" + "".join(
            f"export GIT_CONFIG_KEY_{i}={k} GIT_CONFIG_VALUE_{i}=true\n"
            for i, k in enumerate(switches))
        with open(backend, "w") as f:
            f.write(f'#!/bin/sh\necho "$REQUEST_METHOD $PATH_INFO?$QUERY_STRING" >> '
                    f'"{state}/requests"\n{config}exec "{real}"\n')
        os.chmod(backend, 0o755)
        backends[name] = backend
    conf = os.path.join(state, "lighttpd.conf")
    with open(conf, "w") as f:
        f.write(f"""server.modules = ("mod_alias", "mod_cgi", "mod_setenv", "mod_accesslog")
server.document-root = "{repos}"
server.bind = "127.0.0.1"
server.port = {HTTP_PORT}
server.errorlog = "{state}/lighttpd-error.log"
accesslog.filename = "{state}/access.log"
accesslog.format = "%r %b"
alias.url = ("/git/" => "{backends['git']}/", "/plain/" => "{backends['plain']}/")
$HTTP["url"] =~ "^/(git|plain)/" {{
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "{repos}", "GIT_HTTP_EXPORT_ALL" => "")
}}
""")
    server = subprocess.Popen(["lighttpd", "-D", "-f", conf], stdin=subprocess.DEVNULL)
    urls = {name: f"http://127.0.0.1:{HTTP_PORT}/{name}/skills.git" for name in backends}
    for _ in range(100):
        if server.poll() is not None:
            raise RuntimeError(f"lighttpd exited ({server.returncode}); port {HTTP_PORT} in use?")
        try:
            opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
            with opener.open(f"{urls['git']}/info/refs?service=git-upload-pack", timeout=2) as r:
                if r.status == 200:
                    return server, urls
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("lighttpd did not answer")


class Served:
    """What the server answered each run: its requests and `POST`s (one per upload-pack `fetch`
    command) from the CGI wrappers' log, written as each request starts; the bytes of the
    responses from lighttpd's access log (`%b`), which lighttpd buffers, so they are read once
    the server has stopped, and handed to the runs in order (the runs are sequential)."""

    def __init__(self, state):
        self.requests = os.path.join(state, "requests")
        self.access = os.path.join(state, "access.log")
        self.at = 0
        self.runs = []  # (key, number of requests), in order

    def since(self):
        """The requests and `POST`s since the last call."""
        try:
            with open(self.requests) as f:
                lines = f.readlines()
        except FileNotFoundError:
            lines = []
        new, self.at = lines[self.at:], len(lines)
        return len(new), sum(1 for line in new if line.startswith("POST "))

    def record(self, key):
        """Attributes the requests since the last call to a run of `key`; returns its POSTs."""
        count, posts = self.since()
        self.runs.append((key, count))
        return posts

    def received(self):
        """{key: [bytes sent to each recorded run of it]}, once the server has stopped."""
        with open(self.access) as f:
            sizes = [int(line.rsplit(" ", 1)[1]) if line.rsplit(" ", 1)[1].strip().isdigit()
                     else 0 for line in f]
        out, at = {}, 0
        for key, count in self.runs:
            if key is not None:
                out.setdefault(key, []).append(sum(sizes[at:at + count]))
            at += count
        return out


def add_unrelated_blobs(repos, env, megabytes):
    """A new commit on `main` of skills.git with `megabytes` MiB of random binary files under
    `assets/` (beside the skills, in no other commit): returns its id."""
    bare = os.path.join(repos, "skills.git")
    work = os.path.join(repos, "big-work")
    subprocess.run(["git", "clone", "-q", "--depth", "1", f"file://{bare}", work], check=True,
                   env=env)
    os.makedirs(os.path.join(work, "assets", "big"))
    for i in range(megabytes // 4):
        with open(os.path.join(work, "assets", "big", f"blob-{i:03d}.bin"), "wb") as f:
            f.write(os.urandom(4 * 1024 * 1024))
    ident = dict(env, GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
                 GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com")
    subprocess.run(["git", "-C", work, "add", "-A"], check=True, env=ident)
    subprocess.run(["git", "-C", work, "commit", "-qm", "unrelated assets"], check=True, env=ident)
    subprocess.run(["git", "-C", work, "push", "-q", bare, "HEAD:refs/heads/main"], check=True,
                   env=ident)
    head = subprocess.run(["git", "-C", work, "rev-parse", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()
    shutil.rmtree(work)
    return head


def memory_of(argv, env, cwd):
    """Runs argv alone (no /usr/bin/time) and polls /proc/PID/status every millisecond: its
    peak resident set (VmHWM, exact) and the largest anonymous part seen (RssAnon, sampled)."""
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    hwm = anon = 0
    while proc.poll() is None:
        try:
            with open(f"/proc/{proc.pid}/status") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        hwm = max(hwm, int(line.split()[1]))
                    elif line.startswith("RssAnon:"):
                        anon = max(anon, int(line.split()[1]))
        except (FileNotFoundError, ProcessLookupError, ValueError):
            pass
        time.sleep(0.001)
    if proc.returncode != 0:
        raise RuntimeError(f"exit {proc.returncode}: {' '.join(argv)}")
    return hwm, anon


def statuses(report, sources, want):
    """Every source of the report is there and every bundle of it has status `want`."""
    if len(report["sources"]) != sources:
        raise RuntimeError(f"{len(report['sources'])} source(s) reported, not {sources}")
    for source in report["sources"]:
        for bundle in source["bundles"]:
            if bundle["status"] != want:
                raise RuntimeError(f"{bundle.get('name')}: {bundle['status']}, not {want}")


def bundle_shares(sources):
    """The approved bundles split into `sources` non-empty groups, in order."""
    return [APPROVED[i::sources] for i in range(sources)]


def source_groups(sources, agents=None):
    """The descriptor's Git sources, one dict each: `agent` (None: a default source), `corpus`
    (its directory under the round's corpus; "" for the corpus itself), `root`, `names` (the
    approved bundles) and `out` (where the per-source `git archive` of --sources extracts).
    `agents`: {agent: (root, names)} from make_skills_repo.py's agents shape."""
    if agents:
        return [{"agent": agent, "corpus": agent, "root": root, "names": names, "out": ""}
                for agent, (root, names) in agents.items()]
    if sources == 1:
        return [{"agent": None, "corpus": "", "root": "skills", "names": APPROVED, "out": ""}]
    return [{"agent": None, "corpus": str(i), "root": "skills", "names": names, "out": str(i)}
            for i, names in enumerate(bundle_shares(sources))]


def corpus_of(corpus, group):
    """The corpus directory of a group's source under the round's `corpus`."""
    return os.path.join(corpus, group["corpus"]) if group["corpus"] else corpus


def descriptor(path, url, commit, corpus, pins, groups, limits=None):
    """One Git source per group, each with its own corpus (`<corpus>/<group's corpus>`): the
    default skills, or with --agents one agent each (and no default skills)."""
    def source(group, indent):
        pad = " " * indent
        lines = [f"{pad}- git:"] + [f"{pad}    {line}" for line in (
            f"source: {url}", f"revision: {commit}",
            f"directory: {corpus_of(corpus, group)}", f"root: {group['root']}",
            *([f"limits: {limits}"] if limits else []), "approved:")]
        return lines + [f'{pad}      - {{ name: {n}, version: "1.0.0", hash: {pins[n]} }}'
                        for n in group["names"]]

    if groups[0]["agent"] is None:
        lines = ["skills:"] + [line for group in groups for line in source(group, 2)]
    else:
        lines = ["agents:"]
        for group in groups:
            lines += [f"  {group['agent']}:", "    skills:"] + source(group, 6)
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


def file_system_type(path):
    """The type of the file system holding `path` (its longest mount point in /proc/mounts)."""
    path, best, kind = os.path.realpath(path), "", "unknown"
    with open("/proc/mounts") as mounts:
        for line in mounts:
            fields = line.split()
            point = fields[1].replace("\\040", " ")
            inside = path == point or path.startswith(point.rstrip("/") + "/")
            if inside and len(point) >= len(best):
                best, kind = point, fields[2]
    return kind


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
    shape = []  # --agents A --skills S, passed on to make_skills_repo.py
    for flag in ("--agents", "--skills"):
        if flag in args:
            at = args.index(flag)
            shape += [flag, args[at + 1]]
            del args[at:at + 2]
    if shape and (len(shape) != 4 or sources != 1):
        raise RuntimeError("--agents and --skills go together, and not with --sources")
    limits = None
    if "--limits" in args:
        at = args.index("--limits")
        limits = args[at + 1]
        del args[at:at + 2]
        if limits not in ("chamvi", "extended"):
            raise RuntimeError("--limits takes chamvi or extended")
    big = "--big" in args
    if big:
        args.remove("--big")
    no_filter = "--no-filter" in args
    if no_filter:
        args.remove("--no-filter")
    rounds = int(args[0]) if args else 15
    exe = release_binary()

    # Both clients: no system/global git config, no proxy (loopback only), no prompts.
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("GIT_") and not k.lower().endswith("_proxy")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, GIT_TERMINAL_PROMPT="0",
               LC_ALL="C", no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    base = tempfile.mkdtemp(prefix="prepare-vs-git-", dir=os.environ.get("BENCH_TMPDIR"))
    in_memory = file_system_type(base) == "tmpfs"
    server = None

    def on_signal(signum, _frame):
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, on_signal)
    try:
        repos, state = os.path.join(base, "repos"), os.path.join(base, "server")
        os.makedirs(state)
        gen = subprocess.run([sys.executable, os.path.join(ROOT, "benches", "make_skills_repo.py"),
                              repos, *shape], check=True, capture_output=True, text=True,
                             env=env).stdout
        info = dict(line.split(": ", 1) for line in gen.splitlines() if ": " in line)
        agents = {agent: (root, names) for agent, root, *names in
                  (line.split()[1:] for line in gen.splitlines() if line.startswith("agent: "))}
        groups = source_groups(sources, agents)
        commit = info["head"]
        if big:
            commit = add_unrelated_blobs(repos, env, BIG_MIB)
        server, urls = start_server(repos, state)
        url = urls["plain" if no_filter else "git"]
        served = Served(state)

        # Pins: skillfold hash over a git archive extraction of the approved bundles.
        ref = os.path.join(base, "reference")
        os.makedirs(ref)
        folders = [f"{g['root']}/{n}" for g in groups for n in g["names"]]
        archive = subprocess.run(["git", "-C", os.path.join(repos, "skills.git"), "archive", commit,
                                  *folders], check=True, capture_output=True, env=env).stdout
        subprocess.run(["tar", "-x", "-C", ref], input=archive, check=True)
        hashed = subprocess.run([exe, "hash", *(os.path.join(ref, f) for f in folders)],
                                check=True, capture_output=True, text=True).stdout
        pins = {os.path.basename(d): h
                for h, d in (line.split("  ", 1) for line in hashed.splitlines())}

        if len(groups) == 1 or agents:  # one archive of every approved folder
            git_script = (f"set -eo pipefail; "
                          f"git clone --depth 1 --no-checkout --no-tags -q {url} d && "
                          f"git -C d archive {commit} {' '.join(folders)} | tar -x -C out")
        else:
            archives = " && ".join(
                f"mkdir out/{g['out']} && git -C d archive {commit} "
                + " ".join(f"{g['root']}/{n}" for n in g["names"])
                + f" | tar -x -C out/{g['out']}"
                for g in groups)
            git_script = (f"set -eo pipefail; "
                          f"git clone --depth 1 --no-checkout --no-tags -q {url} d && {archives}")
        # git's own best: a blob-less shallow clone, a sparse checkout of the approved folders.
        sparse_script = (f"set -eo pipefail; git clone --depth 1 --filter=blob:none --sparse "
                         f"--no-checkout --no-tags -q {url} s && "
                         f"git -C s sparse-checkout set {' '.join(folders)} && "
                         f"git -C s checkout -q {commit}")
        cold, warm, peer, internal = [], [], [], []
        sparse, posts, kept = [], {}, []  # posts: {run key: the server's POSTs}
        fallbacks = {}  # {run key: why a partial fetch fetched the whole commit instead}
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
            descriptor(desc, url, commit, corpus, pins, groups, limits)
            prep = [exe, "prepare", "-c", desc, "--json"]

            def skillfold_cold():
                seen = server_fetches(state)
                served.record(None)
                os.sync()  # nothing left dirty by the run before (see 5.)
                m = run_measured(prep, env, cwd=d, stdout=subprocess.PIPE)
                posts[f"skillfold-{attempt}"] = served.record(f"skillfold-{attempt}")
                report = json.loads(m[3])
                statuses(report, len(groups), "published")
                fetched = server_fetches(state) - seen
                kinds = {source.get("fetch") for source in report["sources"]}
                # The partial path may fall back to the whole commit on a second connection
                # (said once on stderr): reported below as a missed target, not fatal.
                said = [line for line in m[4].decode(errors="replace").splitlines()
                        if "fetched the whole commit" in line]
                fell_back = not no_filter and kinds == {"full"} and len(said) == 1
                if fell_back:
                    fallbacks[f"skillfold-{attempt}"] = said[0].split(": ", 2)[-1]
                if fetched != 1 + fell_back or report["fetches"] != 1:
                    raise RuntimeError(f"{len(groups)} source(s) of one commit made {fetched} "
                                       f"fetch(es) at the server (report: {report['fetches']})")
                want = "full" if no_filter else "partial"
                if kinds != {want} and not fell_back:
                    raise RuntimeError(f"expected a {want} fetch: {report}")
                return m[:3], report["duration_ms"] / 1000

            def git_cold(script, key):
                served.record(None)
                os.sync()
                m = run_measured(["bash", "-c", script], env, cwd=d)[:3]
                posts[f"{key}-{attempt}"] = served.record(f"{key}-{attempt}")
                return m

            before = meter.sample()
            if attempt % 2:
                a, dur = skillfold_cold()
                b = git_cold(git_script, "git")
                e = None if no_filter else git_cold(sparse_script, "sparse")
            else:
                e = None if no_filter else git_cold(sparse_script, "sparse")
                b = git_cold(git_script, "git")
                a, dur = skillfold_cold()
            seen = server_fetches(state)
            c = run_measured(prep, env, cwd=d, stdout=subprocess.PIPE)
            share = meter.foreign_share(before, meter.sample())
            report = json.loads(c[3])
            statuses(report, len(groups), "up-to-date")
            if server_fetches(state) != seen or report["fetches"] != 0:
                raise RuntimeError("the warm path fetched")
            same_bundles(corpus, out, groups)
            if e is not None:
                same_bundles(corpus, os.path.join(d, "s"), groups, by_group=False)
            if attempt <= WARMUP:
                continue
            if share > BUSY_LIMIT:
                discarded += 1
                continue
            kept.append(attempt)
            if os.environ.get("BENCH_VERBOSE"):
                print(f"round {len(cold) + 1:2d}: skillfold {a[0] * 1000:6.1f} ms"
                      f" cpu {a[2] * 1000:6.1f} | git {b[0] * 1000:6.1f} ms"
                      f" cpu {b[2] * 1000:6.1f} | warm {c[0] * 1000:5.1f} ms"
                      f" | others {share:.0%}", file=sys.stderr)
            shares.append(share)
            cold.append(a)
            peer.append(b)
            if e is not None:
                sparse.append(e)
            warm.append(c[:3])
            internal.append(dur)
        # Memory: the cold run alone, its resident set polled (no /usr/bin/time around it).
        memory = []
        for i in range(MEMORY_ROUNDS):
            d = tempfile.mkdtemp(dir=work)
            desc = os.path.join(d, "skillfold.yaml")
            descriptor(desc, url, commit, os.path.join(d, "corpus"), pins, groups, limits)
            memory.append(memory_of([exe, "prepare", "-c", desc, "--json"], env, d))
        served.record(None)
        server.terminate()
        server.wait()
        server = None
        by_run = served.received()
        sent = {key: [by_run[f"{key}-{a}"][0] for a in kept if f"{key}-{a}" in by_run]
                for key in ("skillfold", "git", "sparse")}
        commands = {key: [posts[f"{key}-{a}"] for a in kept if f"{key}-{a}" in posts]
                    for key in ("skillfold", "git", "sparse")}
        fell_back = [fallbacks[f"skillfold-{a}"] for a in kept if f"skillfold-{a}" in fallbacks]
    finally:
        if server is not None:
            server.terminate()
            server.wait()
        shutil.rmtree(base, ignore_errors=True)

    def col(samples, k):
        return [s[k] for s in samples]

    versions = [subprocess.run(c, capture_output=True, text=True).stdout.strip()
                for c in ([exe, "--version"], ["git", "--version"])]
    print(f"{' / '.join(versions)} / {os.uname().release}, {os.cpu_count()} CPUs, "
          f"on {'tmpfs' if in_memory else 'a disk'}")
    print(f"repository: files {info['files']}"
          + (f" + {BIG_MIB} MiB of random blobs under assets/big in the pinned commit" if big
             else ""))
    ok = lambda good: "ok" if good else "MISSED"  # noqa: E731
    print(f"limits profile of every source: {limits or 'chamvi (default)'}")
    print(f"server: {'without filter (/plain/)' if no_filter else 'uploadpack.allowFilter + allowAnySHA1InWant'}"
          f"; skillfold fetch: {'full' if no_filter else 'partial'} (checked every round"
          + (f"; MISSED: fell back to the whole commit, on a second connection, in "
             f"{len(fell_back)} of {rounds} rounds: {fell_back[0]}" if fell_back else "")
          + ")"
          f"; upload-pack fetch commands (POSTs) per cold run, median: skillfold "
          f"{statistics.median(commands['skillfold']):.0f}"
          + ((" (target 2: trees, blobs) "
              + ok(statistics.median(commands["skillfold"]) == 2)) if not no_filter else "")
          + f", git clone {statistics.median(commands['git']):.0f}"
          + (f", git sparse {statistics.median(commands['sparse']):.0f}" if commands["sparse"]
             else ""))
    if agents:
        bundles = sum(len(g["names"]) for g in groups)
        print(f"approved: every bundle of the commit, {len(agents)} agents x "
              f"{bundles // len(agents)} = {bundles} @ {commit[:12]}; "
              f"rounds: {rounds} (+{WARMUP} warm-up); every round: published bytes == git "
              f"archive bytes")
        print(f"sources: {len(agents)} agents, one Git source each, of one commit (no default "
              f"skills); git: one clone, one archive of all {bundles} folders; server-side "
              f"fetches per cold skillfold run: 1 (2 when it fell back), per warm run: 0 "
              f"(checked every round)")
    else:
        print(f"approved: {', '.join(APPROVED)} @ {commit[:12]}; rounds: {rounds} "
              f"(+{WARMUP} warm-up); every round: published bytes == git archive bytes")
        print(f"sources: {sources} of one commit "
              f"({' | '.join(','.join(n) for n in bundle_shares(sources))}); server-side fetches "
              f"per cold skillfold run: 1 (2 when it fell back), per warm run: 0 (checked every "
              f"round)")
    print(f"{'':<26} {'median':>9} {'min':>9} {'max':>9}")
    print(fmt_row("cold skillfold wall", col(cold, 0), 1000, "ms"))
    print(fmt_row("  (its --json duration)", internal, 1000, "ms"))
    print(fmt_row("git clone+archive wall", col(peer, 0), 1000, "ms"))
    if sparse:
        print(fmt_row("git sparse best wall", col(sparse, 0), 1000, "ms"))
    print(fmt_row("warm skillfold wall", col(warm, 0), 1000, "ms"))
    print(fmt_row("cold skillfold peak RSS", col(cold, 1), 1 / 1024, "MiB"))
    print(fmt_row("git peak RSS (max proc)", col(peer, 1), 1 / 1024, "MiB"))
    print(fmt_row("warm skillfold peak RSS", col(warm, 1), 1 / 1024, "MiB"))
    print(fmt_row("cold skillfold CPU u+s", col(cold, 2), 1000, "ms"))
    print(fmt_row("git CPU u+s (reaped)", col(peer, 2), 1000, "ms"))
    if sparse:
        print(fmt_row("git sparse CPU u+s", col(sparse, 2), 1000, "ms"))
        print(fmt_row("git sparse peak RSS", col(sparse, 1), 1 / 1024, "MiB"))
    for key, label in (("skillfold", "cold skillfold received"), ("git", "git clone received"),
                       ("sparse", "git sparse received")):
        if sent[key]:
            print(fmt_row(label, sent[key], 1 / 1024, "KiB"))
    print(fmt_row("cold skillfold VmHWM", [m[0] for m in memory], 1 / 1024, "MiB"))
    print(fmt_row("cold skillfold RssAnon", [m[1] for m in memory], 1 / 1024, "MiB"))
    print(fmt_row("warm skillfold CPU u+s", col(warm, 2), 1000, "ms"))
    wall = statistics.median(col(cold, 0)) / statistics.median(col(peer, 0))
    rss = statistics.median(col(cold, 1)) / statistics.median(col(peer, 1))
    warm_ms = statistics.median(col(warm, 0)) * 1000
    paired = statistics.median(a[0] / b[0] for a, b in zip(cold, peer))
    target = 0.15 if big else (0.8 if in_memory else 1.0) if agents else 0.4
    print(f"ratio skillfold/git wall (medians): {wall:.2f}x  (target <= {target}x) "
          f"{ok(wall <= target)}"
          f"; median of the per-round ratios {paired:.2f}x")
    if sparse:
        best = statistics.median(col(cold, 0)) / statistics.median(col(sparse, 0))
        print(f"ratio skillfold/git sparse best wall (medians): {best:.2f}x  (target <= 1.0x) "
              f"{ok(best <= 1.0)}")
    anon = statistics.median(m[1] for m in memory) / 1024
    print(f"ratio skillfold/git RSS  (medians): {rss:.2f}x; anonymous memory of the cold run "
          f"{anon:.1f} MiB (target <= 32 MiB) {ok(anon <= 32)}")
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
