"""cosign's private key file written independently of skillfold, and signatures checked.

The key file is what `cosign generate-key-pair` writes: a PEM block `ENCRYPTED SIGSTORE PRIVATE
KEY` whose bytes are go-securesystemslib's `encrypted` JSON envelope (scrypt, then NaCl secretbox)
around a PKCS#8 private key. This writes one from the published format with Python's
`hashlib.scrypt`, PyNaCl's `SecretBox` and `cryptography`'s keys, sharing no code with skillfold.

    cosign_key.py make OUT.key OUT.pub [--curve P-256|P-384|ed25519] [--n N --r R --p P]
                       [--label LABEL] [--no-derive] [--plain]
        The password is COSIGN_PASSWORD (empty when unset). --no-derive seals with a random key
        instead of deriving one (for scrypt parameters too costly to derive: the file is refused
        before any derivation). --plain writes an unencrypted PKCS#8 `PRIVATE KEY`.
    cosign_key.py verify KEY.pub PAYLOAD_FILE SIGNATURE_BASE64
        Exit 0 when the ECDSA (SHA-256) signature verifies, 1 when it does not.
"""

import argparse
import base64
import hashlib
import json
import os
import sys

import nacl.secret
import nacl.utils
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, ed25519


def pem(label, der):
    body = base64.b64encode(der).decode()
    lines = [body[i : i + 64] for i in range(0, len(body), 64)]
    return "-----BEGIN %s-----\n%s\n-----END %s-----\n" % (label, "\n".join(lines), label)


def make(args):
    if args.curve == "P-256":
        key = ec.generate_private_key(ec.SECP256R1())
    elif args.curve == "P-384":
        key = ec.generate_private_key(ec.SECP384R1())
    else:
        key = ed25519.Ed25519PrivateKey.generate()
    pkcs8 = key.private_bytes(
        serialization.Encoding.DER,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    public = key.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    if args.plain:
        text = pem("PRIVATE KEY", pkcs8)
    else:
        password = os.environ.get("COSIGN_PASSWORD", "").encode()
        salt = os.urandom(32)
        if args.no_derive:
            box_key = os.urandom(32)
        else:
            box_key = hashlib.scrypt(
                password, salt=salt, n=args.n, r=args.r, p=args.p,
                maxmem=512 * 1024 * 1024, dklen=32,
            )
        nonce = nacl.utils.random(nacl.secret.SecretBox.NONCE_SIZE)
        sealed = nacl.secret.SecretBox(box_key).encrypt(pkcs8, nonce).ciphertext
        b64 = lambda b: base64.b64encode(b).decode()
        # The field order and compact spelling of Go's encoding/json for the envelope struct.
        envelope = json.dumps(
            {
                "kdf": {
                    "name": "scrypt",
                    "params": {"N": args.n, "r": args.r, "p": args.p},
                    "salt": b64(salt),
                },
                "cipher": {"name": "nacl/secretbox", "nonce": b64(nonce)},
                "ciphertext": b64(sealed),
            },
            separators=(",", ":"),
        ).encode()
        text = pem(args.label, envelope)
    with open(args.key, "w") as f:
        f.write(text)
    with open(args.pub, "wb") as f:
        f.write(public)


def verify(args):
    with open(args.pub, "rb") as f:
        public = serialization.load_pem_public_key(f.read())
    with open(args.payload, "rb") as f:
        payload = f.read()
    signature = base64.b64decode(args.signature, validate=True)
    try:
        public.verify(signature, payload, ec.ECDSA(hashes.SHA256()))
    except InvalidSignature:
        print("the signature does not verify")
        return 1
    print("verified")
    return 0


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command", required=True)
    m = sub.add_parser("make")
    m.add_argument("key")
    m.add_argument("pub")
    m.add_argument("--curve", default="P-256", choices=["P-256", "P-384", "ed25519"])
    m.add_argument("--n", type=int, default=65536)
    m.add_argument("--r", type=int, default=8)
    m.add_argument("--p", type=int, default=1)
    m.add_argument("--label", default="ENCRYPTED SIGSTORE PRIVATE KEY")
    m.add_argument("--no-derive", action="store_true")
    m.add_argument("--plain", action="store_true")
    v = sub.add_parser("verify")
    v.add_argument("pub")
    v.add_argument("payload")
    v.add_argument("signature")
    args = parser.parse_args()
    if args.command == "make":
        make(args)
        return 0
    return verify(args)


if __name__ == "__main__":
    sys.exit(main())
