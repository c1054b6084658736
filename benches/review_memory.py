#!/usr/bin/env python3
"""Benchmark: peak resident memory of `skillfold outdated` and `update` against `prepare` of the
same image, as the image grows by layers the source does not approve (issue 33 §2).

Usage: python3 benches/review_memory.py [LAYERS ...]   (default: 1 4 8)
Environment: SKILLFOLD_BIN (a binary to measure instead of building the release one),
CARGO_TARGET_DIR, BENCH_TMPDIR (as benches/prepare_vs_git.py).

For each LAYERS count: two images of one repository are served on 127.0.0.1 by a small
registry in this script (manifests by digest, blobs, and a `HEAD` of the tag `stable`, the way
Debian's docker-registry answers them): the pinned image and the head, each with one layer
holding the approved bundle `pdf` (annotated `pdf`; 63 files of 16 KiB, changed at the head)
and LAYERS more layers of 16 bundles x 63 files each (annotated with the name of their first
bundle, the shape of an image holding many teams' bundles). Measured with GNU time's maximum
resident set size, each the best of three runs:
- `prepare` of a descriptor pinning the head (cold: a fresh corpus each run);
- `outdated` and `update` (no `--write`) of a descriptor pinning the first image, tracking `stable`.

Target (issue 33): peak RSS of outdated/update within prepare's + 16 MiB, whatever LAYERS.
Before this round the review kept every bundle of every layer in memory.
"""

import gzip
import hashlib
import http.server
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare_vs_git import release_binary  # noqa: E402

FILES = 63
FILE_BYTES = 16 * 1000
BUNDLES_PER_LAYER = 16


def sha256(data):
    return "sha256:" + hashlib.sha256(data).hexdigest()


def bundle_files(name, seed):
    rnd = random.Random(seed)
    files = {"SKILL.md": f"---\nname: {name}\ndescription: The {name} skill.\n---\n# {name}\n".encode()}
    for i in range(FILES - 1):
        text = "".join(rnd.choice("abcdefghij klmnop\n") for _ in range(FILE_BYTES))
        files[f"references/part-{i:02}.md"] = text.encode()
    return files


def chamvi_digest(files):
    h = hashlib.sha256(b"chamvi-skill-bundle-v1\n")
    for path in sorted(files):
        data = files[path]
        h.update(f"{len(path.encode())}:{path}{len(data)}:".encode() + data)
    return h.hexdigest()


def layer(bundles):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        for name, files in sorted(bundles.items()):
            for path, data in sorted(files.items()):
                info = tarfile.TarInfo(f"{name}/{path}")
                info.size = len(data)
                info.mode = 0o644
                tar.addfile(info, io.BytesIO(data))
    return gzip.compress(raw.getvalue(), mtime=0)


class Store:
    def __init__(self):
        self.blobs = {}
        self.manifests = {}
        self.tags = {}

    def image(self, layers):
        listed = []
        for annotation, bundles in layers:
            data = layer(bundles)
            digest = sha256(data)
            self.blobs[digest] = data
            listed.append({"mediaType": "application/vnd.oci.image.layer.v1.tar+gzip",
                           "digest": digest, "size": len(data),
                           "annotations": {"io.skillfold.bundle.name": annotation}})
        config = b'{"architecture":"amd64","os":"linux","config":{},"rootfs":{"type":"layers","diff_ids":[]}}'
        self.blobs[sha256(config)] = config
        manifest = json.dumps({
            "schemaVersion": 2, "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {"mediaType": "application/vnd.oci.image.config.v1+json",
                       "digest": sha256(config), "size": len(config)},
            "layers": listed}).encode()
        digest = sha256(manifest)
        self.manifests[digest] = manifest
        return digest


def serve(store):
    class Handler(http.server.BaseHTTPRequestHandler):
        def log_message(self, *args):
            pass

        def answer(self, body, headers):
            self.send_response(200)
            for k, v in headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(body)

        def do_GET(self):
            parts = self.path.split("/")
            if self.path == "/v2/":
                return self.answer(b"{}", {})
            if len(parts) == 5 and parts[3] == "manifests":
                ref = store.tags.get(parts[4], parts[4])
                if ref in store.manifests:
                    return self.answer(store.manifests[ref], {
                        "Content-Type": "application/vnd.oci.image.manifest.v1+json",
                        "Docker-Content-Digest": ref})
            if len(parts) == 5 and parts[3] == "blobs" and parts[4] in store.blobs:
                return self.answer(store.blobs[parts[4]], {})
            self.send_response(404)
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_HEAD = do_GET

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def peak_rss_kib(binary, args, cwd):
    best = None
    for _ in range(3):
        proc = subprocess.run(["/usr/bin/time", "-f", "%M", binary] + args, cwd=cwd,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"{args[0]} exited {proc.returncode}: {proc.stderr[-2000:]}")
        kib = int(proc.stderr.strip().splitlines()[-1])
        best = kib if best is None else min(best, kib)
    return best


def descriptor(host, digest, pdf_hash, corpus):
    return (f"skills:\n  - oci:\n      reference: {host}/r@{digest}\n      directory: {corpus}\n"
            f"      plain_http: true\n      track: stable\n      approved:\n"
            f"        - {{ name: pdf, version: '1.0', hash: {pdf_hash} }}\n")


def main():
    counts = [int(a) for a in sys.argv[1:]] or [1, 4, 8]
    binary = os.environ.get("SKILLFOLD_BIN") or release_binary()
    store = Store()
    server = serve(store)
    host = f"127.0.0.1:{server.server_address[1]}"
    pdf_v1, pdf_v2 = bundle_files("pdf", 1), bundle_files("pdf", 2)
    print(f"{'layers':>6} {'prepare':>10} {'outdated':>10} {'update':>10} {'max over prepare':>17}")
    worst = 0.0
    with tempfile.TemporaryDirectory(dir=os.environ.get("BENCH_TMPDIR")) as tmp:
        for count in counts:
            extra = []
            for n in range(count):
                bundles = {f"team{n:02}-skill{b:02}": bundle_files(f"team{n:02}-skill{b:02}", 100 * n + b)
                           for b in range(BUNDLES_PER_LAYER)}
                extra.append((f"team{n:02}-skill00", bundles))
            pinned = store.image([("pdf", {"pdf": pdf_v1})] + extra)
            head = store.image([("pdf", {"pdf": pdf_v2})] + extra)
            store.tags["stable"] = head
            work = os.path.join(tmp, f"layers-{count}")
            os.makedirs(work)
            config = os.path.join(work, "skillfold.yaml")

            def prepare_rss():
                runs = []
                for i in range(3):
                    with open(config, "w") as f:
                        f.write(descriptor(host, head, chamvi_digest(pdf_v2), f"corpus-{i}"))
                    runs.append(peak_rss_kib(binary, ["prepare", "-c", config], work))
                return min(runs)

            prepare = prepare_rss()
            with open(config, "w") as f:
                f.write(descriptor(host, pinned, chamvi_digest(pdf_v1), "corpus"))
            outdated = peak_rss_kib(binary, ["outdated", "-c", config], work)
            update = peak_rss_kib(binary, ["update", "-c", config], work)
            over = (max(outdated, update) - prepare) / 1024
            worst = max(worst, over)
            print(f"{count:>6} {prepare / 1024:>8.1f}Mi {outdated / 1024:>8.1f}Mi "
                  f"{update / 1024:>8.1f}Mi {over:>+15.1f}Mi")
    server.shutdown()
    verdict = "met" if worst <= 16 else "MISSED"
    print(f"review over prepare, worst: {worst:+.1f} MiB (target <= +16 MiB: {verdict})")


if __name__ == "__main__":
    main()
