"""The `skillfold` Python package end to end: loading (descriptor and builder), catalogues,
tool definitions per model API, tool calls and their records, refusals with their codes, the
policy callable, and hostile input that must raise a Python exception, never crash."""

import hashlib
import json
import threading

import pytest

import skillfold
from conftest import PINS, SKILLS, local, sha256


def test_the_builder_gives_each_agent_the_defaults_plus_its_own_extras(runtime):
    assert runtime.refused == []
    assert sorted(runtime.agents) == ["analyst", "writer"]
    names = lambda c: [s["name"] for s in c.skills()]
    assert names(runtime.catalogue()) == ["commit-message"]
    assert names(runtime.catalogue("writer")) == ["changelog-writer", "commit-message"]
    assert names(runtime.catalogue("analyst")) == ["commit-message", "csv-profiler"]
    info = runtime.catalogue("analyst").skills()[1]
    assert (info["version"], info["hash"]) == PINS["csv-profiler"]
    prompt = runtime.catalogue("writer").prompt()
    assert "<name>\nchangelog-writer\n</name>" in prompt and "csv-profiler" not in prompt


def test_a_descriptor_loads_to_the_same_catalogues_as_the_builder(runtime, tmp_path):
    lines = ["skills:"]
    lines.append(_local_yaml("commit-message", 2))
    lines.append("agents:\n  writer:\n    skills:")
    lines.append(_local_yaml("changelog-writer", 6))
    lines.append("  analyst:\n    skills:")
    lines.append(_local_yaml("csv-profiler", 6))
    path = tmp_path / "skillfold.yaml"
    path.write_text("\n".join(lines) + "\n")
    loaded = skillfold.Runtime.load(path)
    for agent in (None, "writer", "analyst"):
        assert loaded.catalogue(agent).prompt() == runtime.catalogue(agent).prompt()
        assert loaded.catalogue(agent).tools("mcp") == runtime.catalogue(agent).tools("mcp")


def _local_yaml(name, indent):
    version, digest = PINS[name]
    pad = " " * indent
    return f"{pad}- local: {{ name: {name}, version: '{version}', directory: {SKILLS / name}, hash: {digest} }}"


def test_tool_definitions_come_in_the_shape_of_each_model_api(runtime):
    c = runtime.catalogue("analyst")
    openai = c.tools()
    assert openai == c.tools("openai")
    assert openai[0]["type"] == "function" and openai[0]["function"]["name"] == "load_skill"
    assert openai[0]["function"]["strict"] is True
    assert openai[0]["function"]["parameters"]["additionalProperties"] is False
    responses = c.tools("openai-responses")
    assert responses[0]["name"] == "load_skill" and responses[0]["parameters"] == openai[0]["function"]["parameters"]
    anthropic = c.tools("anthropic")
    assert list(anthropic[0]) == ["name", "description", "input_schema"]
    mcp = c.tools("mcp")
    assert mcp[0]["annotations"]["readOnlyHint"] is True and "outputSchema" in mcp[0]
    with pytest.raises(ValueError, match="openai, openai-responses, anthropic, mcp"):
        c.tools("gemini")


def test_a_call_serves_the_verified_bytes_and_records_exactly_what_was_served(runtime):
    c = runtime.catalogue("analyst")
    output, record = c.call("load_skill", {"name": "csv-profiler", "reference": None})
    body = (SKILLS / "csv-profiler" / "SKILL.md").read_text().split("---\n", 2)[2]
    assert output["content"].strip() == body.strip()
    assert "references/interpreting-profiles.md" in output["references"]
    assert record["agent"] == "analyst" and record["skill"] == "csv-profiler"
    assert (record["version"], record["hash"]) == PINS["csv-profiler"]
    assert record["bytes"] == len(output["content"].encode())
    assert record["sha256"] == sha256(output["content"].encode())
    ref = "references/interpreting-profiles.md"
    output, record = c.call("load_skill", json.dumps({"name": "csv-profiler", "reference": ref}))
    assert output["content"] == (SKILLS / "csv-profiler" / ref).read_text()
    assert record["reference"] == ref


@pytest.mark.parametrize(
    "tool, arguments, code",
    [
        ("load_skill", {"name": "changelog-writer", "reference": None}, "validation_error"),
        ("load_skill", {"name": "csv-profiler", "reference": "../../../etc/passwd"}, "validation_error"),
        ("load_skill", {"name": "csv-profiler", "reference": "/etc/passwd"}, "validation_error"),
        ("load_skill", {"name": "csv-profiler", "reference": 5}, "validation_error"),
        ("load_skill", {"name": "csv-profiler", "reference": None, "extra": 1}, "validation_error"),
        ("skill_run_script", {"skill": "csv-profiler", "script": "scripts/profile_csv.py", "args": []}, "unknown_tool"),
        ("rm -rf", {}, "unknown_tool"),
    ],
)
def test_refused_calls_raise_tool_error_with_the_stable_code(runtime, tool, arguments, code):
    with pytest.raises(skillfold.ToolError) as raised:
        runtime.catalogue("analyst").call(tool, arguments)
    assert raised.value.code == code
    assert raised.value.error["code"] == code
    assert isinstance(raised.value, skillfold.SkillfoldError)


def test_a_bundle_that_does_not_verify_is_listed_and_never_served(scratch_skill):
    (scratch_skill / "references" / "interpreting-profiles.md").write_text("tampered\n")
    b = skillfold.Runtime.builder()
    local(b, "commit-message")
    local(b, "csv-profiler", scratch_skill)
    runtime = b.build()
    [refused] = runtime.refused
    assert refused["name"] == "csv-profiler" and refused["code"] == "digest_mismatch", refused
    assert [s["name"] for s in runtime.catalogue().skills()] == ["commit-message"]
    with pytest.raises(skillfold.ToolError):
        runtime.catalogue().call("load_skill", {"name": "csv-profiler", "reference": None})


def test_configuration_errors_list_every_problem_with_its_location():
    b = skillfold.Runtime.builder().local("Bad Name", "1", "/nonexistent", "not-a-digest")
    b.agent("writer", lambda a: a.git_corpus("https://example.com/x.git", "main", "/tmp/c", [("x", "1", "0" * 64)]))
    with pytest.raises(skillfold.ConfigurationError) as raised:
        b.build()
    codes = {(p["code"], p["location"]) for p in raised.value.problems}
    assert ("invalid_name", "skills[0].local.name") in codes
    assert ("invalid_hash", "skills[0].local.hash") in codes
    assert ("revision_not_commit", "agents.writer.skills[0].git.revision") in codes
    assert raised.value.code == raised.value.problems[0]["code"]
    with pytest.raises(RuntimeError, match="already built"):
        b.build()


def test_a_descriptor_that_cannot_be_read_or_parsed_raises_configuration_error(tmp_path):
    with pytest.raises(skillfold.ConfigurationError) as raised:
        skillfold.Runtime.load(tmp_path / "missing.yaml")
    assert raised.value.code == "descriptor_unreadable"
    bad = tmp_path / "bad.yaml"
    bad.write_text("skills: [\n")
    with pytest.raises(skillfold.ConfigurationError) as raised:
        skillfold.Runtime.load(bad)
    assert raised.value.code == "descriptor_syntax"
    with pytest.raises(skillfold.CatalogueError) as raised:
        skillfold.Runtime.builder().build().catalogue("ghost")
    assert raised.value.code == "unknown_agent"


def test_wrong_types_and_hostile_arguments_raise_python_exceptions(runtime):
    c = runtime.catalogue("analyst")
    with pytest.raises(TypeError):
        c.call(5, {})
    with pytest.raises(TypeError, match="set is not a JSON value"):
        c.call("load_skill", {"name": {1, 2}, "reference": None})
    with pytest.raises(TypeError, match="keys must be str"):
        c.call("load_skill", {1: "x"})
    with pytest.raises(ValueError, match="not a JSON number"):
        c.call("load_skill", {"name": float("nan"), "reference": None})
    with pytest.raises(ValueError, match="64-bit range"):
        c.call("load_skill", {"name": 2**80, "reference": None})
    with pytest.raises(ValueError, match="not JSON"):
        c.call("load_skill", "{not json")
    with pytest.raises(ValueError, match="over the bound"):
        c.call("load_skill", " " * (1 << 21))
    deep = []
    tip = deep
    for _ in range(100_000):
        tip.append([])
        tip = tip[0]
    with pytest.raises(ValueError, match="nested deeper than 64"):
        c.call("load_skill", {"name": "csv-profiler", "reference": deep})
    with pytest.raises(TypeError):
        skillfold.Runtime.builder().local("x", "1", 42, "y")
    with pytest.raises(TypeError, match="approval"):
        skillfold.Runtime.builder().git_corpus("s", "r", "d", [("only-two", "parts")])
    with pytest.raises(TypeError, match="callable"):
        skillfold.Runtime.builder().policy("allow everything")
    # The runtime still serves after all of that.
    assert c.call("load_skill", {"name": "csv-profiler", "reference": None})[1]["skill"] == "csv-profiler"


def _with_policy(policy):
    b = skillfold.Runtime.builder().policy(policy)
    local(b, "commit-message")
    b.agent("analyst", lambda a: local(a, "csv-profiler"))
    return b.build().catalogue("analyst")


def test_the_policy_callable_sees_each_call_and_may_refuse_it():
    seen = []

    def policy(access):
        seen.append(access)
        if access["reference"] is not None:
            return "references are not for this agent"
        return access["skill"] != "commit-message"

    c = _with_policy(policy)
    assert c.call("load_skill", {"name": "csv-profiler", "reference": None})[1]["skill"] == "csv-profiler"
    assert seen[0] == {
        "agent": "analyst",
        "tool": "load_skill",
        "skill": "csv-profiler",
        "pinned": True,
        "version": PINS["csv-profiler"][0],
        "hash": PINS["csv-profiler"][1],
        "reference": None,
    }
    with pytest.raises(skillfold.ToolError) as raised:
        c.call("load_skill", {"name": "commit-message", "reference": None})
    assert raised.value.code == "policy_denied"
    with pytest.raises(skillfold.ToolError) as raised:
        c.call("load_skill", {"name": "csv-profiler", "reference": "references/interpreting-profiles.md"})
    assert raised.value.code == "policy_denied"
    assert "references are not for this agent" in raised.value.message
    # Bad input is refused before the policy is asked.
    with pytest.raises(skillfold.ToolError):
        c.call("load_skill", {"name": "csv-profiler", "reference": ["x"]})
    assert len(seen) == 3


def test_a_policy_that_raises_refuses_the_call_and_surfaces_its_exception():
    def policy(access):
        raise KeyError("no such tenant")

    c = _with_policy(policy)
    with pytest.raises(skillfold.PolicyError) as raised:
        c.call("load_skill", {"name": "csv-profiler", "reference": None})
    assert isinstance(raised.value.__cause__, KeyError)
    assert raised.value.code == "policy_error"
    # The exception does not leak into the next call.
    c2 = _with_policy(lambda access: None)
    assert c2.call("load_skill", {"name": "csv-profiler", "reference": None})[1]["skill"] == "csv-profiler"


def test_catalogues_serve_many_threads_at_once_with_a_python_policy():
    counts = {"n": 0}
    lock = threading.Lock()

    def policy(access):
        with lock:
            counts["n"] += 1

    c = _with_policy(policy)
    errors = []

    def work():
        try:
            for _ in range(200):
                out, rec = c.call("load_skill", {"name": "csv-profiler", "reference": None})
                assert rec["sha256"] == sha256(out["content"].encode())
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    threads = [threading.Thread(target=work) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and counts["n"] == 1600


def _bundle_digest(root):
    """The `chamvi-skill-bundle-v1` digest (docs/format.md), written out for this test."""
    h = hashlib.sha256(b"chamvi-skill-bundle-v1\n")
    files = sorted((p.relative_to(root).as_posix(), p) for p in root.rglob("*") if p.is_file())
    for rel, path in files:
        data = path.read_bytes()
        h.update(f"{len(rel.encode())}:".encode() + rel.encode() + f"{len(data)}:".encode() + data)
    return h.hexdigest()


def test_two_agents_each_get_their_own_bundle_under_one_name(scratch_skill):
    """Issue 37 §1: a name is unique per agent, not per runtime."""
    (scratch_skill / "references" / "interpreting-profiles.md").write_text("the other team's notes\n")
    theirs = _bundle_digest(scratch_skill)
    version, ours = PINS["csv-profiler"]
    assert _bundle_digest(SKILLS / "csv-profiler") == ours
    b = skillfold.Runtime.builder()
    b.agent("analyst", lambda a: a.local("csv-profiler", version, str(SKILLS / "csv-profiler"), ours))
    b.agent("other", lambda a: a.local("csv-profiler", version, str(scratch_skill), theirs))
    runtime = b.build()
    assert runtime.refused == []
    read = {"name": "csv-profiler", "reference": "references/interpreting-profiles.md"}
    for agent, digest, root in (("analyst", ours, SKILLS / "csv-profiler"), ("other", theirs, scratch_skill)):
        output, record = runtime.catalogue(agent).call("load_skill", read)
        assert output["content"] == (root / "references" / "interpreting-profiles.md").read_text()
        assert record["hash"] == digest
    clash = skillfold.Runtime.builder()
    clash.agent("analyst", lambda a: (a.local("csv-profiler", version, str(SKILLS / "csv-profiler"), ours),
                                      a.local("csv-profiler", version, str(scratch_skill), theirs)))
    with pytest.raises(skillfold.ConfigurationError) as raised:
        clash.build()
    assert raised.value.code == "conflicting_pins"
    assert raised.value.problems[0]["location"] == "agents.analyst.skills[1].local"
