"""Fixtures of the Python package's tests: the example skills of the repository, their reviewed
digests, and a scratch copy of a skill for tests that change bytes."""

import hashlib
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SKILLS = REPO / "examples" / "skills"

# The reviewed digests (`skillfold hash examples/skills/<name>`).
PINS = {
    "commit-message": ("1.0.0", "b83e94b7c3e63e32663143c05ad2bd91f1ef552dd3d76b881bd2a1d90463088e"),
    "changelog-writer": ("1.0", "e7393af7bb7c7bf3f4269983c78a83617e020853a8405cdabe465e464f64c0ce"),
    "csv-profiler": ("1.0", "f1c40afd786dd9e23190d4e875c2c62f193e1e6769d235644e17aa86083215e2"),
}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def local(builder, name, directory=None):
    version, digest = PINS[name]
    return builder.local(name, version, str(directory or SKILLS / name), digest)


@pytest.fixture
def runtime():
    import skillfold

    b = skillfold.Runtime.builder()
    local(b, "commit-message")
    b.agent("writer", lambda a: local(a, "changelog-writer"))
    b.agent("analyst", lambda a: local(a, "csv-profiler"))
    return b.build()


@pytest.fixture
def scratch_skill(tmp_path):
    """A copy of csv-profiler whose bytes a test may change."""
    target = tmp_path / "csv-profiler"
    shutil.copytree(SKILLS / "csv-profiler", target)
    return target
