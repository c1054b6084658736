#!/usr/bin/env python3
"""Benchmark: what checking who published an image costs: cold `skillfold prepare` of a signed
image with `verify: { cosign_key }` against the same image without `verify`, in one run.

Usage: python3 benches/prepare_signed.py [ROUNDS]   (default 15)
Environment: SKILLFOLD_BIN (a binary built beforehand; else the release build of this tree),
REGISTRY_PORT (default 18181, as benches/prepare_oci_vs_git.py), BENCH_TMPDIR (where the corpora go).

1. Pushes the bundled example skills (the five bundles of examples/skills, pinned by `skillfold
   hash`) with `skillfold push --to` to Debian's `docker-registry` on 127.0.0.1:$REGISTRY_PORT.
2. Signs the pushed digest in the cosign v2 layout with a P-256 key made by `openssl`: the
   simple-signing payload signed by `openssl dgst -sha256 -sign`, attached as a manifest at the
   tag `sha256-<hex>.sig` over the registry's HTTP API (what `cosign sign --key` writes).
3. Two untimed warm-up rounds, then ROUNDS interleaved rounds (the order alternates), each into a
   fresh corpus: (a) `prepare` of the `oci:` source without `verify`; (b) the same source with
   `verify: { cosign_key: … }`. Wall time from spawn to reap; every signed round must report the
   key's fingerprint as the publisher.

The figure: the signed prepare's median over the unsigned one's (the cost of the signature
manifest's fetch and the check), and the difference in milliseconds.
"""

import base64
import hashlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare_vs_git import ROOT, release_binary, run_measured  # noqa: E402
from prepare_oci_vs_git import REGISTRY_PORT, start_registry  # noqa: E402

REGISTRY = f"127.0.0.1:{REGISTRY_PORT}"


def put_blob(repository, data):
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    start = urllib.request.Request(f"http://{REGISTRY}/v2/{repository}/blobs/uploads/",
                                   method="POST")
    with urllib.request.urlopen(start) as answer:
        location = answer.headers["Location"]
    if location.startswith("/"):
        location = f"http://{REGISTRY}{location}"
    sep = "&" if "?" in location else "?"
    put = urllib.request.Request(f"{location}{sep}digest={digest}", data=data, method="PUT",
                                 headers={"Content-Type": "application/octet-stream"})
    urllib.request.urlopen(put).close()
    return digest


def attach_signature(repository, digest, payload, signature):
    config = b"{}"
    manifest = {
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                   "digest": put_blob(repository, config), "size": len(config)},
        "layers": [{"mediaType": "application/vnd.dev.cosign.simplesigning.v1+json",
                    "digest": put_blob(repository, payload), "size": len(payload),
                    "annotations": {"dev.cosignproject.cosign/signature": signature}}],
    }
    tag = "sha256-" + digest.split(":", 1)[1] + ".sig"
    put = urllib.request.Request(
        f"http://{REGISTRY}/v2/{repository}/manifests/{tag}",
        data=json.dumps(manifest).encode(), method="PUT",
        headers={"Content-Type": "application/vnd.oci.image.manifest.v1+json"})
    urllib.request.urlopen(put).close()


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    exe = release_binary()
    env = dict(os.environ, DOCKER_CONFIG=os.devnull, no_proxy="127.0.0.1", NO_PROXY="127.0.0.1")
    env.pop("SKILLFOLD_REGISTRY_AUTH", None)
    base = tempfile.mkdtemp(prefix="prepare-signed-", dir=os.environ.get("BENCH_TMPDIR"))
    registry = None
    try:
        state = os.path.join(base, "server")
        os.makedirs(state)
        registry, _ = start_registry(state)
        skills = os.path.join(ROOT, "examples", "skills")
        hashed = subprocess.run([exe, "hash", *sorted(
            os.path.join(skills, d) for d in os.listdir(skills))],
            check=True, capture_output=True, text=True).stdout
        def version(folder):
            """The `metadata.version` the bundle's SKILL.md declares (pins must say the same)."""
            with open(os.path.join(folder, "SKILL.md")) as f:
                for line in f.read().split("\n---", 1)[0].splitlines():
                    if line.strip().startswith("version:"):
                        return line.split(":", 1)[1].strip().strip('"')
            return "1.0.0"

        pins = [(os.path.basename(d), h, version(d))
                for h, d in (l.split("  ", 1) for l in hashed.splitlines())]
        local = os.path.join(base, "local.yaml")
        with open(local, "w") as f:
            f.write("skills:\n" + "".join(
                f'  - local: {{ name: {n}, version: "{v}", directory: {skills}/{n}, hash: {h} }}\n'
                for n, h, v in pins))
        pushed = subprocess.run([exe, "push", "-c", local, "--plain-http", "--to",
                                 f"{REGISTRY}/bench/signed:v1"],
                                check=True, capture_output=True, text=True, env=env).stdout
        reference = pushed.strip().splitlines()[-1]
        name, digest = reference.rsplit("@", 1)
        repository = name.split("/", 1)[1]
        entries = "".join(f'        - {{ name: {n}, version: "{v}", hash: {h} }}\n'
                          for n, h, v in pins)

        key, pub = os.path.join(base, "release.pem"), os.path.join(base, "release.pub")
        subprocess.run(["openssl", "ecparam", "-name", "prime256v1", "-genkey", "-noout",
                        "-out", key], check=True)
        subprocess.run(["openssl", "pkey", "-in", key, "-pubout", "-out", pub], check=True)
        der = subprocess.run(["openssl", "pkey", "-pubin", "-outform", "DER", "-in", pub],
                             check=True, capture_output=True).stdout
        fingerprint = "sha256:" + hashlib.sha256(der).hexdigest()
        payload = json.dumps({"critical": {"identity": {"docker-reference": name},
                                           "image": {"docker-manifest-digest": digest},
                                           "type": "cosign container image signature"},
                              "optional": None}, separators=(",", ":")).encode()
        signed = subprocess.run(["openssl", "dgst", "-sha256", "-sign", key], input=payload,
                                check=True, capture_output=True).stdout
        attach_signature(repository, digest, payload, base64.b64encode(signed).decode())

        def yaml(corpus, verify):
            text = (f"skills:\n  - oci:\n      reference: {reference}\n      directory: {corpus}\n"
                    f"      plain_http: true\n")
            if verify:
                text += f"      verify: {{ cosign_key: {pub} }}\n"
            return text + "      approved:\n" + entries

        work = os.path.join(base, "rounds")
        os.makedirs(work)
        times = {"unsigned": [], "signed": []}
        for i in range(rounds + 2):
            order = ["unsigned", "signed"] if i % 2 == 0 else ["signed", "unsigned"]
            for kind in order:
                corpus = os.path.join(work, f"{i}-{kind}")
                config = corpus + ".yaml"
                with open(config, "w") as f:
                    f.write(yaml(corpus, kind == "signed"))
                wall, _, _, out, _ = run_measured([exe, "prepare", "-c", config, "--json"], env,
                                                  stdout=subprocess.PIPE)
                report = json.loads(out)
                if kind == "signed" and report["sources"][0].get("publisher") != {
                        "key": {"fingerprint": fingerprint}}:
                    raise RuntimeError(f"round {i}: the publisher is not the key: {report}")
                if i >= 2:
                    times[kind].append(wall)

        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"cold prepare of {reference}, {rounds} rounds (median / min / max, ms):")
        for kind in ("unsigned", "signed"):
            v = times[kind]
            print(f"  {kind:8}: {med[kind] * 1e3:8.1f} {min(v) * 1e3:8.1f} {max(v) * 1e3:8.1f}")
        ratio = med["signed"] / med["unsigned"]
        print(f"  signed / unsigned: {ratio:.2f}x, +{(med['signed'] - med['unsigned']) * 1e3:.1f} ms")
        print(json.dumps({"rounds": rounds, "unsigned_ms": med["unsigned"] * 1e3,
                          "signed_ms": med["signed"] * 1e3, "ratio": ratio}))
        return 0
    finally:
        if registry is not None:
            registry.terminate()
            registry.wait()
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
