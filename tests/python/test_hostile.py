"""Hostile and careless arguments, each built here from scratch: every one is refused with a
Python exception that `except Exception` catches (or, for the policy's `KeyboardInterrupt` and
`SystemExit`, with that very exception), before it costs more than its bound, and no error hands a
large input back whole."""

import itertools
import json

import pytest

import skillfold
from conftest import local

# The bounds of bindings/python/src/convert.rs and errors.rs, as docs/python.md states them.
MAX_NODES = 10_000
MAX_DEPTH = 64
MAX_BYTES = 1 << 20
MAX_MESSAGE = 1_000


@pytest.fixture
def c(runtime):
    return runtime.catalogue("analyst")


def shared(levels):
    """`x = [x, x]` `levels` times: `levels + 1` objects, 2^(levels+1) - 1 values."""
    x = []
    for _ in range(levels):
        x = [x, x]
    return x


def test_shared_references_are_counted_and_refused_at_the_value_bound(c):
    with pytest.raises(ValueError, match=f"more than {MAX_NODES} values"):
        c.call("load_skill", {"name": "csv-profiler", "reference": shared(21)})
    # The same in a tuple, and as dict values.
    t = ()
    for _ in range(21):
        t = (t, t)
    with pytest.raises(ValueError, match=f"more than {MAX_NODES} values"):
        c.call("load_skill", {"name": "csv-profiler", "reference": t})
    d = {}
    for _ in range(21):
        d = {"a": d, "b": d}
    with pytest.raises(ValueError, match=f"more than {MAX_NODES} values"):
        c.call("load_skill", {"name": "csv-profiler", "reference": d})
    # A flat list longer than what is left is refused before one item is read.
    with pytest.raises(ValueError, match=f"more than {MAX_NODES} values"):
        c.call("load_skill", {"name": "csv-profiler", "reference": [None] * 10**6})


def test_the_value_bound_is_exact(c):
    # The dict, the name, the list: 3 values, then the items.
    at_bound = {"name": "csv-profiler", "reference": [None] * (MAX_NODES - 3)}
    with pytest.raises(skillfold.ToolError) as refused:  # converted, then refused by the tool
        c.call("load_skill", at_bound)
    assert refused.value.code == "validation_error"
    over = {"name": "csv-profiler", "reference": [None] * (MAX_NODES - 2)}
    with pytest.raises(ValueError, match=f"more than {MAX_NODES} values"):
        c.call("load_skill", over)
    # JSON text is held to the same bound.
    with pytest.raises(skillfold.ToolError):
        c.call("load_skill", json.dumps(at_bound))
    with pytest.raises(ValueError, match=f"more than {MAX_NODES} values"):
        c.call("load_skill", json.dumps(over))


def nested(levels):
    value = []
    for _ in range(levels - 1):
        value = [value]
    return value


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 100, 127, 128, 200])
def test_json_text_nested_past_the_bound_is_a_value_error_as_documented(c, levels):
    text = json.dumps({"name": "csv-profiler", "reference": nested(levels)})
    with pytest.raises(ValueError) as refused:
        c.call("load_skill", text)
    assert not isinstance(refused.value, skillfold.SkillfoldError)
    assert "nested deeper than 64" in str(refused.value) or "recursion limit" in str(refused.value)
    with pytest.raises(ValueError, match="nested deeper than 64"):
        c.call("load_skill", {"name": "csv-profiler", "reference": nested(levels)})


def test_nesting_at_the_bound_is_converted(c):
    for arguments in (
        {"name": "csv-profiler", "reference": nested(MAX_DEPTH)},
        json.dumps({"name": "csv-profiler", "reference": nested(MAX_DEPTH)}),
    ):
        with pytest.raises(skillfold.ToolError):  # converted, then refused by the tool
            c.call("load_skill", arguments)


@pytest.mark.parametrize(
    "arguments, error",
    [
        ('["csv-profiler", null]', ValueError),
        ("null", ValueError),
        ('"csv-profiler"', ValueError),
        (["csv-profiler", None], TypeError),
        (("csv-profiler", None), TypeError),
        (None, TypeError),
    ],
)
def test_arguments_are_named_never_positional(c, arguments, error):
    with pytest.raises(error, match="not (a dict|an object) of named arguments"):
        c.call("load_skill", arguments)


def test_a_list_subclass_that_mutates_the_dict_is_refused_unread(c):
    ran = []
    arguments = {"name": "csv-profiler"}

    class Mutating(list):
        def __iter__(self):
            ran.append("iter")
            arguments["x"] = 1
            arguments["y"] = 2
            return iter(["references/interpreting-profiles.md"])

        def __len__(self):
            ran.append("len")
            return 1

    arguments["reference"] = Mutating(["references/interpreting-profiles.md"])
    try:
        c.call("load_skill", arguments)
    except Exception as e:  # PanicException is a BaseException: it would fly past this
        refused = e
    assert isinstance(refused, TypeError), refused
    assert "Mutating (a list subclass)" in str(refused) and 'arguments["reference"]' in str(refused)
    assert ran == [] and list(arguments) == ["name", "reference"]


@pytest.mark.parametrize("base", [list, tuple, dict])
def test_container_subclasses_are_refused_without_running_their_code(c, base):
    ran = []

    class Endless(base):
        def __iter__(self):
            ran.append("iter")
            return itertools.count()

        def __len__(self):
            ran.append("len")
            return 0

        def items(self):
            ran.append("items")
            return iter(lambda: ("k", "v"), None)

    with pytest.raises(TypeError, match=f"a {base.__name__} subclass"):
        c.call("load_skill", {"name": "csv-profiler", "reference": Endless()})
    if base is dict:
        with pytest.raises(TypeError, match="a dict subclass"):
            c.call("load_skill", Endless())
    assert ran == []


def test_str_subclasses_are_read_by_value_without_running_their_code(c):
    class Name(str):
        def __str__(self):
            raise AssertionError("ran __str__")

        def __len__(self):
            raise AssertionError("ran __len__")

        def __iter__(self):
            raise AssertionError("ran __iter__")

    output, record = c.call("load_skill", {Name("name"): Name("csv-profiler"), "reference": None})
    assert record["skill"] == "csv-profiler"


def test_text_is_bounded_in_all_and_a_long_value_is_never_quoted_back(c):
    name = "x" * 50_000_000
    for arguments in (
        {"name": name, "reference": None},
        {name: "csv-profiler", "reference": None},
        {"name": "csv-profiler", "reference": [name]},
    ):
        with pytest.raises(ValueError, match=f"more than {MAX_BYTES} bytes") as refused:
            c.call("load_skill", arguments)
        assert len(str(refused.value)) < 300, len(str(refused.value))
    # Many short strings add up to the same bound.
    many = {"name": "csv-profiler", "reference": ["y" * 200_000] * 6}
    with pytest.raises(ValueError, match=f"more than {MAX_BYTES} bytes"):
        c.call("load_skill", many)
    # JSON text over the bound is refused by its length.
    with pytest.raises(ValueError, match="over the bound") as refused:
        c.call("load_skill", json.dumps({"name": name, "reference": None}))
    assert len(str(refused.value)) < 300


def test_a_refusal_quotes_at_most_its_bound(c, runtime):
    long_name = "n" * 900_000  # under the text bound: the tool refuses it, naming it
    with pytest.raises(skillfold.ToolError) as refused:
        c.call("load_skill", {"name": long_name, "reference": None})
    assert refused.value.code == "validation_error"
    for message in (str(refused.value), refused.value.message, refused.value.error["message"]):
        assert len(message) < MAX_MESSAGE + 100, len(message)
        assert message.startswith("unknown skill `nnn") and "more bytes)" in message
    # A refusal whose text the runtime does not clip is clipped by the module.
    with pytest.raises(skillfold.ToolError) as refused:
        c.call("t" * 50_000_000, {})
    assert refused.value.code == "unknown_tool"
    for message in (str(refused.value), refused.value.message, refused.value.error["message"]):
        assert MAX_MESSAGE <= len(message) < MAX_MESSAGE + 100, len(message)
        assert message.startswith("no tool `ttt") and "more bytes)" in message
    with pytest.raises(ValueError, match="unknown tool format") as refused:
        c.tools("f" * 50_000_000)
    assert len(str(refused.value)) < 300
    with pytest.raises(skillfold.CatalogueError) as refused:
        runtime.catalogue("a" * 10_000_000)
    assert refused.value.code == "unknown_agent" and len(str(refused.value)) < MAX_MESSAGE + 100
    with pytest.raises(skillfold.ConfigurationError) as refused:
        skillfold.Runtime.builder().local("B" * 10_000_000, "1", "/nonexistent", "0" * 64).build()
    assert len(str(refused.value)) < MAX_MESSAGE + 100
    for problem in refused.value.problems:
        assert len(problem["message"]) < MAX_MESSAGE + 100 and len(problem["location"]) < MAX_MESSAGE + 100
    with pytest.raises(skillfold.ConfigurationError) as refused:
        skillfold.Runtime.builder().agent("A" * 10_000_000, lambda a: a).build()
    for problem in refused.value.problems:
        assert len(problem["message"]) < MAX_MESSAGE + 100 and len(problem["location"]) < MAX_MESSAGE + 100


def test_a_type_error_clips_the_name_of_the_type(c):
    Huge = type("H" * 1_000_000, (), {})
    with pytest.raises(TypeError, match="is not a JSON value") as refused:
        c.call("load_skill", {"name": "csv-profiler", "reference": Huge()})
    assert len(str(refused.value)) < 300


def _with_policy(policy):
    b = skillfold.Runtime.builder().policy(policy)
    local(b, "csv-profiler")
    return b.build().catalogue()


@pytest.mark.parametrize(
    "raised",
    [KeyboardInterrupt(), SystemExit(3), GeneratorExit()],
    ids=["KeyboardInterrupt", "SystemExit", "GeneratorExit"],
)
def test_a_policy_raising_a_base_exception_propagates_it_as_it_is(raised):
    calls = []

    def policy(access):
        calls.append(access["skill"])
        if len(calls) == 1:
            raise raised

    c = _with_policy(policy)
    with pytest.raises(BaseException) as caught:
        c.call("load_skill", {"name": "csv-profiler", "reference": None})
    assert caught.value is raised
    assert not isinstance(caught.value, skillfold.PolicyError)
    # Nothing is parked for the next call, which the policy allows.
    output, record = c.call("load_skill", {"name": "csv-profiler", "reference": None})
    assert record["skill"] == "csv-profiler" and len(calls) == 2


def test_an_approvals_iterable_that_never_ends_is_refused_at_its_bound():
    endless = itertools.repeat(("x", "1", "0" * 64))
    with pytest.raises(ValueError, match="more than 10000 approvals"):
        skillfold.Runtime.builder().git_corpus("https://example.com/x.git", "0" * 40, "/tmp/c", endless)
    endless = itertools.repeat({"skill": "x", "script": "scripts/a.py", "sha256": "0" * 64})
    with pytest.raises(ValueError, match="more than 10000 approvals"):
        skillfold.Runtime.builder().runner(endless)
    with pytest.raises(ValueError, match="more than 10000 approvals"):
        skillfold.Runtime.builder().agent(
            "w", lambda a: a.git_corpus("https://example.com/x.git", "0" * 40, "/tmp/c", itertools.count())
        )
