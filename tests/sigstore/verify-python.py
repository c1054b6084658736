"""sigstore-python's verdict on the signatures make-fixtures.mjs wrote, the second oracle.

Usage: python verify-python.py DIR
Judges every file DIR/oracle.json names (sigstore-js's verdicts) with sigstore-python
(tests/sigstore/requirements.txt) under DIR's trusted roots and the identity in DIR/meta.json,
writes DIR/oracle-python.json ({"FILE": {"accepted": bool, "error": str?} or {"not_judged":
str}}), and exits 1 when a verdict differs from sigstore-js's, but for the known differences:

- cosign <= v2's annotations are not judged: their Rekor bundle has a signed entry timestamp and
  no inclusion proof, and sigstore-python refuses every entry without a proof;
- under a root whose CA's or log's `validFor` ended before the signing time, sigstore-python
  accepts (it uses expired authorities and log keys for verification; sigstore-js and sigstore-go
  refuse, and so does skillfold).
"""

import json
import sys
from pathlib import Path

from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier, policy


KNOWN_LENIENT = ("trusted_root.ca-ended.json + ", "trusted_root.log-ended.json + ")


def verdict(directory: Path, name: str, identity: policy.Identity, payload: bytes) -> dict:
    root_name, _, file = name.rpartition(" + ")
    if file.endswith("cosign-v2.json"):
        return {"not_judged": "sigstore-python refuses a log entry without an inclusion proof"}
    root = TrustedRoot.from_file(str(directory / (root_name or "trusted_root.json")))
    verifier = Verifier(trusted_root=root)
    try:
        bundle = Bundle.from_json((directory / file).read_bytes())
        if file.endswith("dsse.bundle.json"):
            verifier.verify_dsse(bundle, identity)
        else:
            verifier.verify_artifact(payload, bundle, identity)
        return {"accepted": True}
    except Exception as error:  # every refusal is a verdict
        return {"accepted": False, "error": f"{type(error).__name__}: {error}"}


def main() -> int:
    directory = Path(sys.argv[1])
    meta = json.loads((directory / "meta.json").read_text())
    expected = json.loads((directory / "oracle.json").read_text())
    identity = policy.Identity(identity=meta["subject"], issuer=meta["issuer"])
    payload = (directory / "payload.json").read_bytes()
    verdicts = {name: verdict(directory, name, identity, payload) for name in expected}
    (directory / "oracle-python.json").write_text(json.dumps(verdicts, indent=2) + "\n")
    differ = [
        name
        for name in expected
        if "accepted" in verdicts[name]
        and verdicts[name]["accepted"] != (expected[name]["accepted"] or name.startswith(KNOWN_LENIENT))
    ]
    for name in differ:
        print(f"{name}: sigstore-js {expected[name]}, sigstore-python {verdicts[name]}", file=sys.stderr)
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
