"""Repositories for benches/install_vs_peers.py: REPOS bare Git repositories of SKILLS skills each,
with other content beside the skills as real ones have, and the loopback smart-HTTP server that
serves them as a hosted Git service does.

Each repository `repo-NN.git` holds, on `main`, three commits of:
  skills/<name>/SKILL.md           frontmatter (name, a description of ~200 characters) and a
                                   body of ~3 KiB
  skills/<name>/references/*.md    two references, ~6 KiB and ~3 KiB
  skills/<name>/scripts/run.sh     a helper, executable (mode 100755)
  src/  (60 files, ~4 KiB each)    source code of the project the skills ship with
  docs/ (20 files), README.md, LICENSE, package.json
  assets/ (2 random binary files of 512 KiB each: images, fonts, archives in real repositories)
so that a depth-1 clone transfers ~1.4 MB per repository, of which the approved skills are
~60 KB. Skill names are `<word>-<NN>-<k>` (unique across repositories).

The server: lighttpd + `git http-backend` (CGI) on 127.0.0.1, as
/work/shared/reference/git-test-servers.sh runs it (plain HTTP only), at `/git/` with
`uploadpack.allowFilter` and `uploadpack.allowAnySHA1InWant` (as hosted Git services have them),
through a wrapper that logs every request it serves (method, path, query) before exec; lighttpd's
access log gives the bytes of every response. The benchmark requests `/marker/<run>` (a 404) after
each run, so the access log splits into runs without relying on the order of CGI requests.
"""

import os
import random
import shutil
import subprocess
import time
import urllib.error
import urllib.request

REPOS = 10
SKILLS = 5
WORDS = ["pdf", "docx", "review", "deploy", "triage", "release", "schema", "audit", "style", "data"]

GIT_ENV = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL="/dev/null",
               GIT_AUTHOR_NAME="bench", GIT_AUTHOR_EMAIL="bench@example.com",
               GIT_COMMITTER_NAME="bench", GIT_COMMITTER_EMAIL="bench@example.com",
               GIT_AUTHOR_DATE="2026-12-01T00:00:00Z", GIT_COMMITTER_DATE="2026-12-01T00:00:00Z")


def git(cwd, *args, capture=False):
    out = subprocess.run(["git", "-C", cwd, *args], env=GIT_ENV, check=True,
                         capture_output=True, text=True)
    return out.stdout.strip() if capture else None


def skill_names(r):
    return [f"{WORDS[r % len(WORDS)]}-{r:02d}-{k}" for k in range(SKILLS)]


def prose(rng, chars):
    """Deterministic English-looking text of about `chars` characters."""
    vocab = ("the skill reads the input and checks each field before it writes the result "
             "agents follow these steps when a user asks for a report on the data in the "
             "repository keep every change small review the output and report what failed").split()
    words, size = [], 0
    while size < chars:
        w = rng.choice(vocab)
        words.append(w)
        size += len(w) + 1
    lines, line = [], []
    for w in words:
        line.append(w)
        if len(line) == 12:
            lines.append(" ".join(line))
            line = []
    lines.append(" ".join(line))
    return "\n".join(lines) + "\n"


def write(path, text, mode=None):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb" if isinstance(text, bytes) else "w") as f:
        f.write(text)
    if mode:
        os.chmod(path, mode)


def write_skill(work, name, rng, revision=0):
    root = os.path.join(work, "skills", name)
    description = (f"Use {name} when the user asks to {prose(rng, 120).strip()}; "
                   f"it covers revision {revision}.").replace("\n", " ")
    write(os.path.join(root, "SKILL.md"),
          f"---\nname: {name}\ndescription: {description}\nlicense: MIT\n---\n# {name}\n\n"
          + prose(rng, 3000))
    write(os.path.join(root, "references", "guide.md"), "# Guide\n\n" + prose(rng, 6000))
    write(os.path.join(root, "references", "examples.md"), "# Examples\n\n" + prose(rng, 3000))
    write(os.path.join(root, "scripts", "run.sh"),
          f"#!/bin/sh\n# helper of {name}\necho \"$@\"\n", mode=0o755)


def make_repos(base):
    """REPOS bare repositories under `base`; returns [{name, bare, head, skills}] (`head` the
    commit of `main`) and, for repo-00, `moved`: a later commit (one skill changed, other files
    too) that `main` does not yet point at."""
    rng = random.Random(20261201)
    repos = []
    for r in range(REPOS):
        name = f"repo-{r:02d}"
        work = os.path.join(base, f"{name}-work")
        bare = os.path.join(base, f"{name}.git")
        os.makedirs(work)
        git(work, "init", "-q", "-b", "main")
        names = skill_names(r)
        write(os.path.join(work, "README.md"), f"# {name}\n\n" + prose(rng, 4000))
        write(os.path.join(work, "LICENSE"), "MIT License\n\n" + prose(rng, 1000))
        write(os.path.join(work, "package.json"), f'{{"name": "{name}", "version": "1.0.0"}}\n')
        for i in range(60):
            write(os.path.join(work, "src", f"module_{i:02d}.py"),
                  f"# module {i}\n" + prose(rng, 4000).replace("\n", "\n# "))
        for i in range(20):
            write(os.path.join(work, "docs", f"page-{i:02d}.md"), f"# page {i}\n\n" + prose(rng, 3000))
        for i in range(2):
            write(os.path.join(work, "assets", f"blob-{i}.bin"), rng.randbytes(512 * 1024))
        for n in names:
            write_skill(work, n, rng)
        git(work, "add", "-A")
        git(work, "commit", "-qm", "initial")
        for step in ("src", "docs"):
            for i in range(0, 60 if step == "src" else 20, 7):
                path = os.path.join(work, step, f"module_{i:02d}.py" if step == "src"
                                    else f"page-{i:02d}.md")
                with open(path, "a") as f:
                    f.write(prose(rng, 300))
            git(work, "commit", "-qam", f"update {step}")
        head = git(work, "rev-parse", "HEAD", capture=True)
        entry = {"name": name, "bare": bare, "head": head, "skills": names}
        if r == 0:
            write_skill(work, names[0], rng, revision=1)
            with open(os.path.join(work, "src", "module_00.py"), "a") as f:
                f.write(prose(rng, 300))
            git(work, "commit", "-qam", f"{names[0]}: revision 1")
            entry["moved"] = git(work, "rev-parse", "HEAD", capture=True)
            git(work, "reset", "-q", "--hard", head)
        subprocess.run(["git", "clone", "-q", "--bare", work, bare], env=GIT_ENV, check=True)
        if "moved" in entry:
            # The later commit's objects are in the bare repository; `main` is moved to it (and
            # back) by set_main.
            subprocess.run(["git", "-C", work, "push", "-q", bare,
                            f"{entry['moved']}:refs/heads/moved-tmp"], env=GIT_ENV, check=True)
            git(bare, "update-ref", "-d", "refs/heads/moved-tmp")
        shutil.rmtree(work)
        repos.append(entry)
    return repos


def set_main(repo, commit):
    """Points `main` of the bare repository at `commit`."""
    git(repo["bare"], "update-ref", "refs/heads/main", commit)


def extract(repo, commit, out):
    """`git archive` of the repository's skills at `commit` into `out`/<name>/."""
    os.makedirs(out, exist_ok=True)
    archive = subprocess.Popen(["git", "-C", repo["bare"], "archive", commit, "skills"],
                               stdout=subprocess.PIPE, env=GIT_ENV)
    subprocess.run(["tar", "-x", "--strip-components=1", "-C", out], stdin=archive.stdout,
                   check=True)
    if archive.wait() != 0:
        raise RuntimeError(f"git archive of {repo['name']} failed")


def start_server(repos_dir, state, port):
    """lighttpd + `git http-backend` on 127.0.0.1:`port` serving `repos_dir` at `/git/`; returns
    the server process and the base URL (`http://127.0.0.1:PORT/git/`)."""
    real = subprocess.run(["git", "--exec-path"], check=True, capture_output=True,
                          text=True).stdout.strip() + "/git-http-backend"
    backend = os.path.join(state, "backend")
    switches = ["uploadpack.allowFilter", "uploadpack.allowAnySHA1InWant"]
    config = f"export GIT_CONFIG_COUNT={len(switches)}\n" + "".join(
        f"export GIT_CONFIG_KEY_{i}={k} GIT_CONFIG_VALUE_{i}=true\n" for i, k in enumerate(switches))
    write(backend, f'#!/bin/sh\necho "$REQUEST_METHOD $PATH_INFO?$QUERY_STRING" >> '
                   f'"{state}/requests"\n{config}exec "{real}"\n', mode=0o755)
    empty = os.path.join(state, "www")
    os.makedirs(empty, exist_ok=True)
    conf = os.path.join(state, "lighttpd.conf")
    write(conf, f"""server.modules = ("mod_alias", "mod_cgi", "mod_setenv", "mod_accesslog")
server.document-root = "{empty}"
server.bind = "127.0.0.1"
server.port = {port}
server.errorlog = "{state}/lighttpd-error.log"
accesslog.filename = "{state}/access.log"
accesslog.format = "%r %b"
alias.url = ("/git/" => "{backend}/")
$HTTP["url"] =~ "^/git/" {{
  cgi.assign = ("" => "")
  setenv.add-environment = ("GIT_PROJECT_ROOT" => "{repos_dir}", "GIT_HTTP_EXPORT_ALL" => "")
}}
""")
    server = subprocess.Popen(["lighttpd", "-D", "-f", conf], stdin=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/git/"
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    for _ in range(100):
        if server.poll() is not None:
            raise RuntimeError(f"lighttpd exited ({server.returncode}); port {port} in use?")
        try:
            with opener.open(f"{base}repo-00.git/info/refs?service=git-upload-pack",
                             timeout=2) as answer:
                if answer.status == 200:
                    return server, base
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("lighttpd did not answer")


class Traffic:
    """What the server did for each run: the CGI requests (from the wrapper's log, written as
    each request starts) and the response bytes (lighttpd's access log, which it buffers: read
    once the server has stopped, split at the `/marker/<run>` requests the benchmark makes)."""

    def __init__(self, state, port):
        self.requests = os.path.join(state, "requests")
        self.access = os.path.join(state, "access.log")
        self.port = port
        self.at = 0
        self.opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))

    def end_run(self, run_id):
        """Marks the end of a run; returns its CGI requests [(method, repo, what)]."""
        try:
            self.opener.open(f"http://127.0.0.1:{self.port}/marker/{run_id}", timeout=5)
        except urllib.error.HTTPError:
            pass
        try:
            with open(self.requests) as f:
                lines = f.readlines()
        except FileNotFoundError:
            lines = []
        new, self.at = lines[self.at:], len(lines)
        out = []
        for line in new:
            method, rest = line.strip().split(" ", 1)
            path, _, query = rest.partition("?")
            repo = path.strip("/").split("/")[0]
            out.append((method, repo, path.rsplit("/", 1)[-1] + (f"?{query}" if query else "")))
        return out

    def bytes_by_run(self):
        """{run_id: response bytes of the run}, once the server has stopped."""
        out, total = {}, 0
        with open(self.access) as f:
            for line in f:
                request, _, size = line.rstrip("\n").rpartition(" ")
                if " /marker/" in request:
                    out[request.split(" /marker/", 1)[1].split(" ")[0]] = total
                    total = 0
                else:
                    total += int(size) if size.isdigit() else 0
        return out


def fetches(requests):
    """{repo: (upload-pack advertisements, upload-pack POSTs)} of a run's CGI requests: a fetch
    (or an `ls-remote`) begins with `GET info/refs?service=git-upload-pack`; each `POST
    git-upload-pack` is one `ls-refs` or `fetch` command."""
    out = {}
    for method, repo, what in requests:
        gets, posts = out.get(repo, (0, 0))
        if method == "GET" and what.startswith("refs?service=git-upload-pack"):
            gets += 1
        elif method == "POST" and what == "git-upload-pack":
            posts += 1
        out[repo] = (gets, posts)
    return out
