#!/usr/bin/env python3
"""Benchmark: `skillfold validate DIR` against skills-ref 0.1.1's `agentskills validate DIR`
over the same 1,000 skill directories, measured side by side in one run.

`validate` takes one directory, so each tool is run once per directory (1,000 process spawns
each, sequentially, from this script): the number is the total wall time of the 1,000 runs,
process start-up included, which is what a CI job or a pre-commit hook looping over skills
pays. The directories are realistic: a frontmatter with all six allowed fields (a block
`description`, block-list `allowed-tools`, nested `metadata`), a 40-line body, 1 in 10 invalid
(unknown key, upper-case name or a YAML error) so both outcomes are timed. Before timing, every
directory's stdout, stderr and exit status are compared between the two tools; the benchmark
refuses to report a ratio if any differ.

skills-ref is installed into a throwaway venv from tests/skills_ref/requirements.lock (hashes
pinned; needs PyPI and Python 3.11 for identical output), then deleted.

Usage: python3 benches/spec_validate_vs_agentskills.py [DIRS]   (builds the release binary first)
Target (issue 3): skillfold at least 50x faster in total wall time.
"""

import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def make_skills(base, count):
    dirs = []
    body = "".join(f"Step {i}: do the thing carefully and check the result.\n" for i in range(40))
    for i in range(count):
        name = f"skill-{i:04d}"
        d = os.path.join(base, name)
        os.makedirs(d)
        shown_name = name
        extra = ""
        if i % 10 == 3:
            extra = "title: unexpected\n"
        elif i % 10 == 6:
            shown_name = name.upper()
        elif i % 10 == 9:
            extra = "tags: [a, b]\n"
        text = (
            f"---\nname: {shown_name}\n"
            "description: |\n  Processes things of kind "
            f"{i}. Use when the user asks about\n  kind {i} or related tasks.\n"
            "license: Apache-2.0\ncompatibility: Requires Python 3.11\n"
            "allowed-tools:\n  - Read\n  - Bash(git status:*)\n"
            f"metadata:\n  author: bench\n  version: \"1.{i}\"\n{extra}---\n# {name}\n\n{body}"
        )
        with open(os.path.join(d, "SKILL.md"), "w") as f:
            f.write(text)
        dirs.append(name)
    return dirs


def run_all(cmd, dirs, cwd, env):
    outputs = []
    start = time.perf_counter()
    for d in dirs:
        p = subprocess.run(cmd + [d], cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        outputs.append((p.returncode, p.stdout, p.stderr))
    return time.perf_counter() - start, outputs


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    skillfold = os.path.join(target, "release", "skillfold")
    with tempfile.TemporaryDirectory(prefix="spec-bench-") as tmp:
        venv = os.path.join(tmp, "venv")
        python = os.environ.get("PYTHON", "python3")
        subprocess.run([python, "-m", "venv", venv], check=True)
        subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--quiet",
                        "--disable-pip-version-check", "--no-input", "--no-deps",
                        "--require-hashes", "--only-binary", ":all:", "-r",
                        os.path.join(ROOT, "tests", "skills_ref", "requirements.lock")], check=True)
        agentskills = os.path.join(venv, "bin", "agentskills")
        base = os.path.join(tmp, "skills")
        os.makedirs(base)
        dirs = make_skills(base, count)
        env = {"PATH": "/usr/bin:/bin", "HOME": tmp, "LC_ALL": "C.UTF-8",
               "PYTHONIOENCODING": "utf-8", "PYTHONDONTWRITEBYTECODE": "1"}
        # Warm both (page cache, Python bytecode compiled once into the venv).
        run_all([agentskills, "validate"], dirs[:5], base, env)
        run_all([skillfold, "validate"], dirs[:5], base, env)
        ours, ours_out = run_all([skillfold, "validate"], dirs, base, env)
        ref, ref_out = run_all([agentskills, "validate"], dirs, base, env)
        differ = [d for d, a, b in zip(dirs, ours_out, ref_out) if a != b]
        if differ:
            print(f"outputs differ for {len(differ)} directories, e.g. {differ[:3]}", file=sys.stderr)
            sys.exit(1)
        invalid = sum(1 for status, _, _ in ours_out if status != 0)
        print(f"{count} directories ({invalid} invalid), identical stdout/stderr/status")
        print(f"skillfold validate:   {ours:8.2f} s total, {1000 * ours / count:7.2f} ms per directory")
        print(f"agentskills validate: {ref:8.2f} s total, {1000 * ref / count:7.2f} ms per directory")
        print(f"ratio: {ref / ours:.1f}x faster (target >= 50x)")


if __name__ == "__main__":
    main()
