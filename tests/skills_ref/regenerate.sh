#!/usr/bin/env bash
# Regenerate the skills-ref 0.1.1 golden corpus from the REAL tool.
#   bash tests/skills_ref/regenerate.sh
# See README.md in this directory for the case layout and the run protocol.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cases="$here/cases"
python="${PYTHON:-python3}"

pyver="$("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')"
if [[ "$pyver" != "3.11" && -z "${SKILLS_REF_ANY_PYTHON:-}" ]]; then
    echo "regenerate.sh: need Python 3.11 (found $pyver); set SKILLS_REF_ANY_PYTHON=1 to override" >&2
    exit 1
fi

# 1. Inputs (cases/*/cmd, description, tree/, setup.sh, deviation) from the generator.
"$python" "$here/make_cases.py"

# 2. Throwaway venv with the pinned tool.
tmp="$(realpath "$(mktemp -d /tmp/skills-ref-golden.XXXXXXXX)")"
cleanup() { rm -rf -- "$tmp"; }
trap cleanup EXIT

venv="$tmp/venv"
"$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
    --no-deps --require-hashes --only-binary ':all:' -r "$here/requirements.lock"
base_prefix="$("$venv/bin/python" -c 'import sys; print(sys.base_prefix)')"
"$venv/bin/agentskills" --version >/dev/null

# 3. Run every case in a fresh copy of its tree at a fixed-length, symlink-free path.
n=0
for dir in "$cases"/*/; do
    dir="${dir%/}"
    id="$(basename "$dir")"
    run="$tmp/run"              # same path for every case: $tmp/run/tree
    rm -rf -- "$run"
    mkdir -p "$run"
    if [[ -d "$dir/tree" ]]; then
        cp -R -- "$dir/tree" "$run/tree"
    else
        mkdir "$run/tree"
    fi
    root="$(realpath "$run/tree")"
    if [[ -e "$dir/setup.sh" ]]; then
        (cd "$root" && "$dir/setup.sh")
    fi

    args=()
    IFS=' ' read -r -a args < "$dir/cmd" || true

    status=0
    (
        cd "$root"
        exec env -i \
            PATH="$venv/bin:/usr/bin:/bin" \
            HOME="$tmp" \
            LC_ALL=C.UTF-8 \
            PYTHONIOENCODING=utf-8 \
            PYTHONHASHSEED=0 \
            PYTHONDONTWRITEBYTECODE=1 \
            "$venv/bin/agentskills" ${args[@]+"${args[@]}"}
    ) </dev/null >"$run/stdout" 2>"$run/stderr" || status=$?

    mkdir -p "$dir/expected"
    "$python" - "$root" "$venv" "$base_prefix" "$run" "$dir/expected" <<'PY'
import sys
root, venv, base, run, out = sys.argv[1:6]
# Longest first, so a more specific prefix wins.
subs = sorted([(root, "{ROOT}"), (venv, "{VENV}"), (base, "{PYTHON}")],
              key=lambda kv: -len(kv[0]))
for name in ("stdout", "stderr"):
    data = open(f"{run}/{name}", "rb").read()
    for old, new in subs:
        data = data.replace(old.encode(), new.encode())
    with open(f"{out}/{name}", "wb") as f:
        f.write(data)
PY
    printf '%d\n' "$status" >"$dir/expected/status"
    n=$((n + 1))
done

# 4. README with the case table.
"$python" "$here/make_cases.py" --readme

echo "regenerate.sh: captured $n cases with $("$venv/bin/agentskills" --version)"
