#!/usr/bin/env python3
"""Builds a bare Git repository shaped like a popular public skills repository
(github.com/anthropics/skills), for benchmarking `skillfold prepare` against the git CLI.

Usage: python3 benches/make_skills_repo.py OUT_DIR   ->  OUT_DIR/skills.git
       python3 benches/make_skills_repo.py OUT_DIR --agents A --skills S   (the agents shape, below)

Shape (deterministic: fixed seed, fixed identities and dates, so every run gives the same
commit ids):

- `skills/` with 20 bundles. 16 are text-only (`SKILL.md` with `name`/`description`
  frontmatter, `references/*.md`, `scripts/*.py`, some nested folders; UTF-8, no NUL, each file
  <= 16 KiB, <= 30 files per bundle). 4 carry binary assets (fonts, a PDF, GIFs, PNGs of random
  bytes behind the right magic numbers, 20 KiB - 1.5 MiB each, ~3.8 MiB in all), like the
  real repository's `canvas-design/canvas-fonts` and `theme-factory/theme-showcase.pdf`. The
  benchmark approves text-only bundles only (`TEXT_BUNDLES`).
- top-level `README.md`, `THIRD_PARTY_NOTICES.md`, `LICENSE`, `spec/`, `template/`.
- ~400 files at HEAD, no symlinks, no hidden files, no submodules.
- a history of 30 commits on `refs/heads/main` (bundles appear and change over time; binary
  assets are replaced twice, so the history holds more than the tip).
- ~1,800 refs: `main`, 89 `refs/heads/feature-NNNN`, 10 tags `refs/tags/vN`, and 1,700
  `refs/pull/NNNN/head`, all pointing into the history; packed with `git pack-refs --all`.

Built with `git fast-import` (one stream with every commit) and `git update-ref --stdin`, then
repacked into one pack like a server-side repository. The tip is checked against the shape above
before the history is imported. Prints the HEAD commit id, counts, and the bundle names
(`text-bundles:` are valid skillfold bundles; `binary-bundles:` are not, on purpose).

With `--agents A --skills S` (A <= 99, S <= 16) it builds a different repository instead: one
commit on `refs/heads/main` (no other ref, no history) holding nothing but A x S small text-only
bundles, `agents/agent-NN/aNN-<skill>/` for the first S names of `TEXT_BUNDLES` (sorted), so
every blob of the commit belongs to a bundle a benchmark can approve: `SKILL.md` with
`name`/`description` frontmatter and 3-7 references and scripts (300 B - 4 KiB each, ~5 files
and ~10 KiB per bundle; each bundle's bytes differ, so nothing is shared between agents). It
prints the HEAD commit id, counts, and one line per agent: `agent: NAME ROOT BUNDLE...`.
"""

import os
import random
import re
import shutil
import subprocess
import sys

SEED = 20260130
COMMITS = 30
FEATURE_BRANCHES = 89
TAGS = 10
PULLS = 1700
IDENT = "Skills Bench <bench@example.invalid>"
EPOCH = 1767225600  # 2026-01-01T00:00:00Z; commit i is EPOCH + i * 86400

# name -> number of files (SKILL.md included); all text-only.
TEXT_BUNDLES = {
    "algorithmic-art": 14, "doc-coauthoring": 12, "docx": 28, "frontend-design": 16,
    "internal-comms": 15, "mcp-builder": 24, "pdf": 22, "pptx": 30, "skill-creator": 26,
    "webapp-testing": 18, "web-artifacts-builder": 20, "xlsx": 19, "changelog-writer": 17,
    "api-review": 21, "incident-review": 23, "data-profiler": 15,
}
# name -> binary assets (path, magic, size); these bundles also get a few text files.
BINARY_BUNDLES = {
    "canvas-design": [(f"canvas-fonts/font-{i:02d}.ttf", b"\x00\x01\x00\x00", 20_000 + 2_500 * i)
                      for i in range(24)],
    "theme-factory": [("theme-showcase.pdf", b"%PDF-1.7\n", 1_536_000)],
    "slack-gif-creator": [(f"assets/sample-{i}.gif", b"GIF89a", 120_000 + 7_000 * i)
                          for i in range(4)],
    "brand-guidelines": [(f"assets/logo-{i}.png", b"\x89PNG\r\n\x1a\n", 180_000 + 40_000 * i)
                         for i in range(3)],
}

WORDS = (
    "skill bundle agent review file reference script table column page render parse export "
    "import document slide sheet chart font color theme layout template spec header footer "
    "request response status error retry timeout cache token stream buffer schema field value "
    "record index query filter sort merge split convert validate check test build deploy "
    "version release commit branch change note summary detail example usage step rule when "
    "always never should must may output input format markdown python json yaml csv pdf docx "
    "the a an of to in on for with by from and or but not is are be this that it as at"
).split()


def words(rng, n):
    return " ".join(rng.choice(WORDS) for _ in range(n))


def markdown(rng, title, size):
    """Markdown text of about `size` bytes (never more than 16 KiB)."""
    size = min(size, 16 * 1024 - 64)
    out = [f"# {title}\n\n"]
    total = len(out[0])
    section = 0
    while total < size:
        section += 1
        if section % 3 == 1:
            part = f"## {words(rng, 3).capitalize()}\n\n"
        elif section % 3 == 2:
            items = rng.randint(2, 6)
            part = "".join(f"- {words(rng, rng.randint(4, 10))}\n" for _ in range(items)) + "\n"
        else:
            part = f"{words(rng, rng.randint(30, 80)).capitalize()}. Ünïcödé — ok.\n\n"
        out.append(part)
        total += len(part.encode())
    text = "".join(out).encode()
    return text[: size].rsplit(b"\n", 1)[0] + b"\n"


def python(rng, name, size):
    size = min(size, 16 * 1024 - 64)
    out = [f'"""{name}: {words(rng, 8)}."""\n\nimport json\nimport sys\n\n']
    total = len(out[0])
    i = 0
    while total < size:
        i += 1
        body = "".join(f"    {rng.choice(['x', 'y', 'row', 'item'])}_{j} = {rng.randint(0, 999)}"
                       f"  # {words(rng, 4)}\n" for j in range(rng.randint(2, 8)))
        part = f"\ndef step_{i}(data):\n    \"\"\"{words(rng, 6)}.\"\"\"\n{body}    return data\n"
        out.append(part)
        total += len(part)
    out.append('\n\nif __name__ == "__main__":\n    json.dump({}, sys.stdout)\n')
    return "".join(out).encode()


def skill_md(rng, name, size):
    front = (f"---\nname: {name}\ndescription: {words(rng, 14).capitalize()}. "
             f"Use when asked to {words(rng, 6)}.\nlicense: Complete terms in LICENSE.txt\n---\n\n")
    return front.encode() + markdown(rng, name.replace("-", " ").title(), size - len(front))


def text_bundle(rng, name, count, revision):
    """The files of a text-only bundle: SKILL.md, references/, scripts/, nested folders."""
    files = {f"skills/{name}/SKILL.md": (skill_md(rng, name, rng.randint(2_000, 9_000)), False)}
    files[f"skills/{name}/LICENSE.txt"] = (markdown(rng, "License", 1_500), False)
    i = 0
    while len(files) < count:
        i += 1
        kind = i % 5
        if kind in (0, 1):
            path = f"references/topic-{i:02d}.md"
            data, exe = markdown(rng, f"Topic {i} r{revision}", rng.randint(800, 16_000)), False
        elif kind == 2:
            path = f"scripts/tool_{i:02d}.py"
            data, exe = python(rng, f"tool_{i:02d}", rng.randint(600, 12_000)), (i % 4 == 2)
        elif kind == 3:
            path = f"scripts/lib/helpers_{i:02d}.py"
            data, exe = python(rng, f"helpers_{i:02d}", rng.randint(400, 6_000)), False
        else:
            path = f"references/examples/level-{i % 3}/example-{i:02d}.md"
            data, exe = markdown(rng, f"Example {i}", rng.randint(300, 4_000)), False
        files[f"skills/{name}/{path}"] = (data, exe)
    return files


def binary_bundle(rng, name, assets, generation):
    files = {f"skills/{name}/SKILL.md": (skill_md(rng, name, 3_000), False),
             f"skills/{name}/LICENSE.txt": (markdown(rng, "License", 1_500), False),
             f"skills/{name}/reference.md": (markdown(rng, "Reference", 6_000), False)}
    extra = {"theme-factory": ("themes/theme-{:02d}.md", 10),
             "slack-gif-creator": ("core/frame_{:02d}.py", 8)}
    if name in extra:
        pattern, count = extra[name]
        for i in range(count):
            path = pattern.format(i)
            maker = python if path.endswith(".py") else markdown
            files[f"skills/{name}/{path}"] = (maker(rng, path, rng.randint(800, 5_000)), False)
    for path, magic, size in assets:
        # Random bytes (incompressible, like real fonts and images); new bytes per generation.
        noise = random.Random(f"{SEED}/{name}/{path}/{generation}")
        data = magic + noise.randbytes(size - len(magic))
        files[f"skills/{name}/{path}"] = (data, False)
    return files


def small_bundle(rng, name):
    """A small text-only bundle for the agents shape: SKILL.md and 3-7 references and scripts."""
    files = {f"skills/{name}/SKILL.md": (skill_md(rng, name, rng.randint(1_200, 4_000)), False)}
    for i in range(rng.randint(3, 7)):
        if i % 3 == 1:
            path = f"scripts/tool_{i:02d}.py"
            data = python(rng, f"tool_{i:02d}", rng.randint(300, 3_000))
        elif i % 3 == 2:
            path = f"references/examples/example-{i:02d}.md"
            data = markdown(rng, f"Example {i}", rng.randint(300, 2_000))
        else:
            path = f"references/topic-{i:02d}.md"
            data = markdown(rng, f"Topic {i}", rng.randint(500, 4_000))
        files[f"skills/{name}/{path}"] = (data, False)
    return files


def agents_tree(agents, skills):
    """{agent: (root, [bundle names])} and the commit's {path: (bytes, executable)}."""
    layout, tree = {}, {}
    for a in range(1, agents + 1):
        agent, root = f"agent-{a:02d}", f"agents/agent-{a:02d}"
        names = [f"a{a:02d}-{skill}" for skill in sorted(TEXT_BUNDLES)[:skills]]
        for name in names:
            own = random.Random(f"{SEED}/agents/{name}")
            for path, entry in small_bundle(own, name).items():
                tree[root + path[len("skills"):]] = entry
        layout[agent] = (root, names)
    name_ok = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
    for root, names in layout.values():
        for name in names:
            assert name_ok.match(name), name
            assert tree[f"{root}/{name}/SKILL.md"][0].startswith(f"---\nname: {name}\n".encode())
    for path, (data, _) in tree.items():
        assert len(data) <= 16 * 1024 and b"\0" not in data, path
        data.decode("utf-8")
    return layout, tree


def top_level(rng, revision):
    files = {"README.md": (markdown(rng, f"Skills (revision {revision})", 6_000), False),
             "THIRD_PARTY_NOTICES.md": (markdown(rng, "Third-party notices", 14_000), False),
             "LICENSE": (markdown(rng, "Apache License", 11_000), False),
             "template/SKILL.md": (b"---\nname: template-skill\ndescription: Replace with a "
                                   b"description.\n---\n\n# Insert instructions below\n", False)}
    for i, title in enumerate(["agent-skills-spec", "frontmatter", "bundles", "distribution",
                                  "versioning", "security", "discovery", "glossary"]):
        files[f"spec/{title}.md"] = (markdown(rng, title, 3_000 + 1_000 * i), False)
    return files


def history(rng):
    """Yields (message, {path: (bytes, executable)}) per commit; later files override earlier."""
    pending = sorted(TEXT_BUNDLES)[6:] + sorted(BINARY_BUNDLES)[1:]
    present = []
    for c in range(COMMITS):
        changes = {}
        added = []
        if c == 0:
            added = sorted(TEXT_BUNDLES)[:6] + sorted(BINARY_BUNDLES)[:1]
        elif pending:
            added = [pending.pop(0)]  # one bundle appears per commit until all are there
        if c % 5 == 0 or c == COMMITS - 1:
            changes.update(top_level(rng, c))
        for name in present + added:
            fresh = name in added
            if name in TEXT_BUNDLES and (fresh or rng.random() < 0.2):
                own = random.Random(f"{SEED}/{name}/{c}")
                changes.update(text_bundle(own, name, TEXT_BUNDLES[name], c))
            elif name in BINARY_BUNDLES and (fresh or c in (18, 25)):
                own = random.Random(f"{SEED}/{name}/{c}")
                changes.update(binary_bundle(own, name, BINARY_BUNDLES[name], c))
        present += added
        yield f"Commit {c + 1}: {words(rng, 6)}", changes


def check_tip(tree):
    """The promised shape of the final tree (what the benchmark relies on)."""
    name_ok = re.compile(r"^[a-z][a-z0-9-]{0,63}$")
    for name in TEXT_BUNDLES:
        files = {p: d for p, (d, _) in tree.items() if p.startswith(f"skills/{name}/")}
        assert name_ok.match(name) and 0 < len(files) <= 30, (name, len(files))
        assert files[f"skills/{name}/SKILL.md"].startswith(f"---\nname: {name}\n".encode()), name
        for path, data in files.items():
            assert len(data) <= 16 * 1024 and b"\0" not in data, path
            data.decode("utf-8")
    for path in tree:
        assert not any(part.startswith(".") for part in path.split("/")), path
        binary = b"\0" in tree[path][0] or path.endswith((".ttf", ".pdf", ".gif", ".png"))
        assert not binary or path.split("/")[1] in BINARY_BUNDLES, path


def git(*args, cwd, stdin=None, env=None):
    return subprocess.run(["git", *args], cwd=cwd, input=stdin, env=env, check=True,
                          stdout=subprocess.PIPE).stdout


def fast_import_stream(commits):
    """A `git fast-import` stream of `commits` ([(message, {path: (bytes, executable)})]), each
    the child of the one before on `refs/heads/main`, commit i dated EPOCH + i days."""
    stream = bytearray()
    for c, (message, changes) in enumerate(commits):
        when = EPOCH + c * 86400
        msg = message.encode()
        stream += (f"commit refs/heads/main\nmark :{c + 1}\n"
                   f"author {IDENT} {when} +0000\ncommitter {IDENT} {when} +0000\n"
                   f"data {len(msg)}\n").encode() + msg + b"\n"
        if c > 0:
            stream += f"from :{c}\n".encode()
        for path in sorted(changes):
            data, exe = changes[path]
            mode = "100755" if exe else "100644"
            stream += f"M {mode} inline {path}\ndata {len(data)}\n".encode()
            stream += data + b"\n"
        stream += b"\n"
    return bytes(stream + b"done\n")


def main():
    args = sys.argv[1:]
    shape = {}
    for flag in ("--agents", "--skills"):
        if flag in args:
            at = args.index(flag)
            shape[flag] = int(args[at + 1])
            del args[at:at + 2]
    if len(args) != 1 or (shape and len(shape) != 2):
        sys.exit("usage: make_skills_repo.py OUT_DIR [--agents A --skills S]")
    agents, skills = shape.get("--agents"), shape.get("--skills")
    if shape and not (1 <= agents <= 99 and 1 <= skills <= len(TEXT_BUNDLES)):
        sys.exit(f"--agents takes 1 to 99, --skills 1 to {len(TEXT_BUNDLES)}")
    out = os.path.abspath(args[0])
    repo = os.path.join(out, "skills.git")
    if os.path.exists(repo):
        shutil.rmtree(repo)
    os.makedirs(out, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update(GIT_CONFIG_NOSYSTEM="1", GIT_CONFIG_GLOBAL=os.devnull, LC_ALL="C",
               GIT_AUTHOR_NAME="Skills Bench", GIT_AUTHOR_EMAIL="bench@example.invalid",
               GIT_COMMITTER_NAME="Skills Bench", GIT_COMMITTER_EMAIL="bench@example.invalid",
               GIT_AUTHOR_DATE=f"@{EPOCH} +0000", GIT_COMMITTER_DATE=f"@{EPOCH} +0000")
    git("init", "--quiet", "--bare", "--initial-branch=main", repo, cwd=out, env=env)

    if shape:
        layout, tree = agents_tree(agents, skills)
        message = f"{agents} agents x {skills} skills"
        git("fast-import", "--quiet", "--done", cwd=repo,
            stdin=fast_import_stream([(message, tree)]), env=env)
        commits = git("rev-list", "--reverse", "main", cwd=repo, env=env).decode().split()
        assert len(commits) == 1, commits
    else:
        commits = list(history(random.Random(SEED)))
        tree = {}
        for _, changes in commits:
            tree.update(changes)
        check_tip(tree)
        git("fast-import", "--quiet", "--done", cwd=repo, stdin=fast_import_stream(commits),
            env=env)
        commits = git("rev-list", "--reverse", "main", cwd=repo, env=env).decode().split()
        assert len(commits) == COMMITS, commits

        # ~1,800 refs pointing into the history, like a forge with many pull requests.
        pick = random.Random(SEED + 1)
        lines = [f"create refs/heads/feature-{n:04d} {pick.choice(commits)}"
                 for n in range(1, FEATURE_BRANCHES + 1)]
        lines += [f"create refs/tags/v{n} {commits[n * COMMITS // (TAGS + 1)]}"
                  for n in range(1, TAGS + 1)]
        lines += [f"create refs/pull/{n}/head {pick.choice(commits)}"
                  for n in range(1, PULLS + 1)]
        git("update-ref", "--stdin", cwd=repo, stdin=("\n".join(lines) + "\n").encode(), env=env)
    git("pack-refs", "--all", cwd=repo, env=env)
    git("repack", "-a", "-d", "-q", cwd=repo, env=env)  # one pack, as a hosted repository has
    git("prune-packed", cwd=repo, env=env)

    head = commits[-1]
    files = git("ls-tree", "-r", "--name-only", head, cwd=repo, env=env).decode().splitlines()
    refs = git("for-each-ref", "--format=%(refname)", cwd=repo, env=env).decode().splitlines()
    listing = git("ls-tree", "-r", "-l", head, cwd=repo, env=env).decode().split()
    size = sum(int(x) for x in listing[3::5])
    print(f"repository: {repo}")
    print(f"head: {head}")
    print(f"files: {len(files)}  bytes: {size}  refs: {len(refs)}  commits: {len(commits)}")
    if shape:
        assert sorted(files) == sorted(tree), "the commit holds files outside the bundles"
        for agent, (root, names) in layout.items():
            print(f"agent: {agent} {root} {' '.join(names)}")
    else:
        print("text-bundles: " + " ".join(sorted(TEXT_BUNDLES)))
        print("binary-bundles: " + " ".join(sorted(BINARY_BUNDLES)))

if __name__ == "__main__":
    main()
