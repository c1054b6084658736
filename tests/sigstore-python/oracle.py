"""sigstore-python's verdict on every keyless fixture of tests/fixtures/sigstore (the reference
verdict skillfold's must equal; see README.md). Prints one JSON object: case -> {"accepted":
bool, "error": str}. Offline: the trusted root is the fixture's, given to `Verifier` directly.

A cosign <= v2 signature (cosign-v2.json) is given to sigstore-python as the v0.1 bundle its
annotations amount to (the leaf as a one-certificate chain, the Rekor bundle as a log entry with
its inclusion promise, the payload's message signature), as cosign itself reads them.
"""

import base64
import hashlib
import json
import sys
from pathlib import Path

from sigstore.models import Bundle, TrustedRoot
from sigstore.verify import Verifier, policy

FIXTURES = Path(sys.argv[1])
META = json.loads((FIXTURES / "meta.json").read_text())
PAYLOAD = (FIXTURES / "payload.json").read_bytes()
POLICY = policy.Identity(identity=META["subject"], issuer=META["issuer"])
ROOTS = ["trusted_root.json", "trusted_root.ca-ended.json", "trusted_root.log-ended.json"]
FOLDERS = ["", "other-subject/", "other-issuer/", "other-ca/", "other-log/", "expired/",
           "legacy-issuer/", "no-issuer/"]
FILES = ["message.bundle.json", "message.v02.bundle.json", "dsse.bundle.json", "cosign-v2.json"]


def cosign_v2_as_bundle(text: str) -> str:
    layer = json.loads(text)
    annotations = layer["annotations"]
    rekor = json.loads(annotations["dev.sigstore.cosign/bundle"])
    pem = annotations["dev.sigstore.cosign/certificate"]
    der = base64.b64decode("".join(l for l in pem.splitlines() if not l.startswith("-----")))
    payload = layer["payload"].encode()
    return json.dumps({
        "mediaType": "application/vnd.dev.sigstore.bundle+json;version=0.1",
        "verificationMaterial": {
            "x509CertificateChain": {"certificates": [{"rawBytes": base64.b64encode(der).decode()}]},
            "tlogEntries": [{
                "logIndex": str(rekor["Payload"]["logIndex"]),
                "logId": {"keyId": base64.b64encode(bytes.fromhex(rekor["Payload"]["logID"])).decode()},
                "kindVersion": {"kind": "hashedrekord", "version": "0.0.1"},
                "integratedTime": str(rekor["Payload"]["integratedTime"]),
                "inclusionPromise": {"signedEntryTimestamp": rekor["SignedEntryTimestamp"]},
                "canonicalizedBody": rekor["Payload"]["body"],
            }],
        },
        "messageSignature": {
            "messageDigest": {"algorithm": "SHA2_256",
                              "digest": base64.b64encode(hashlib.sha256(payload).digest()).decode()},
            "signature": annotations["dev.cosignproject.cosign/signature"],
        },
    })


def with_proto3_defaults(text: str) -> str:
    """The same bundle with the inclusion proof's zero-valued fields spelled out: protobuf JSON
    omits `logIndex: 0` and empty `hashes` (sigstore-js does), which sigstore-python's model
    requires present."""
    bundle = json.loads(text)
    for entry in bundle["verificationMaterial"].get("tlogEntries", []):
        proof = entry.get("inclusionProof")
        if proof is not None:
            proof.setdefault("logIndex", "0")
            proof.setdefault("hashes", [])
    return json.dumps(bundle)


def verdict(root: str, name: str) -> dict:
    try:
        verifier = Verifier(trusted_root=TrustedRoot.from_file(str(FIXTURES / root)))
        text = (FIXTURES / name).read_text()
        if name.endswith("cosign-v2.json"):
            text = cosign_v2_as_bundle(text)
        text = with_proto3_defaults(text)
        bundle = Bundle.from_json(text)
        if "dsse" in name:
            verifier.verify_dsse(bundle, POLICY)
        else:
            verifier.verify_artifact(PAYLOAD, bundle, POLICY)
        return {"accepted": True}
    except Exception as error:  # every refusal, whatever its class
        return {"accepted": False, "error": f"{type(error).__name__}: {error}"}


out = {}
for root in ROOTS:
    for folder in FOLDERS if root == "trusted_root.json" else [""]:
        for file in FILES:
            out[f"{root} + {folder}{file}"] = verdict(root, folder + file)
json.dump(out, sys.stdout, indent=2, sort_keys=True)
print()
