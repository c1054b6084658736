"""Validates a bill of materials written by `skillfold sbom`: `cyclonedx FILE` with
cyclonedx-python-lib's strict JSON validator for CycloneDX 1.6 (the official schema), `spdx FILE`
by reading it with spdx-tools (`pyspdxtools -i FILE`, which parses and validates SPDX 2.3).
Exits 0 when valid, else prints why and exits 1."""

import subprocess
import sys


def main() -> int:
    kind, path = sys.argv[1], sys.argv[2]
    if kind == "cyclonedx":
        from cyclonedx.schema import SchemaVersion
        from cyclonedx.validation.json import JsonStrictValidator

        with open(path, encoding="utf-8") as f:
            text = f.read()
        error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
        if error is not None:
            print(f"invalid CycloneDX 1.6: {error}")
            return 1
        return 0
    tool = [sys.executable, "-m", "spdx_tools.spdx.clitools.pyspdxtools", "-i", path]
    out = subprocess.run(tool, capture_output=True, text=True)
    print(out.stdout + out.stderr)
    return out.returncode


if __name__ == "__main__":
    sys.exit(main())
