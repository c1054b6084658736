#!/usr/bin/env python3
"""Benchmark: `skillfold prepare` against a Git server that streams an endless pack (Hardening IV
§1): the peak resident memory of the run, the bytes the server wrote, and the time from the
moment the server had written the bytes that cross the bound to the moment `prepare` exited.

Usage: python3 benches/endless_pack.py [SECONDS]   (the fetch deadline, default 30)
Environment: SKILLFOLD_BIN (a binary to measure instead of building the release one),
CARGO_TARGET_DIR (as benches/prepare_vs_git.py).

A raw HTTP server on 127.0.0.1 answers the handshake with protocol v2's capabilities (with
`filter`, so the first request is for the commit and its trees; or without it, so it is for the
whole commit), then the fetch with a `packfile` section whose pack announces one object, a blob
declaring 1 KiB, followed by stored deflate blocks of 65,000 bytes for as long as the client
reads (`trees`, `whole`); and, for the byte bound of the pack itself, a pack of as many
well-formed blobs of 65,000 bytes as the trees' pack may announce, streamed until the client
stops reading (`many`: the bound is the 165,222,688 bytes of that pack). Each case runs once,
under GNU time (peak RSS).

Target: RSS under 64 MiB, refused within 1 s of the bound, with `pack_too_large`. Before the bound
gix held every byte until the deadline: 150 MiB sent, 163 MiB of RSS; 1,000 MiB, 1,015 MiB in 14 s.
"""

import os
import socket
import zlib
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from prepare_vs_git import release_binary  # noqa: E402

DECLARED = 1024
# What the fetcher lets the entry's compressed stream take: declared + declared / 64 + 64.
ENTRY_BOUND = DECLARED + DECLARED // 64 + 64
BLOCK = 65_000
# The bytes the pack of a commit and its trees may take (src/source/git/pack.rs).
TREES_PACK_BYTES = 165_222_688
# What a pkt-line of side-band data holds at most, besides its band byte.
LINE = 65_515


def pkt(payload):
    return b"%04x" % (len(payload) + 4) + payload


def capabilities(fetch):
    return b"".join([pkt(b"version 2\n"), pkt(b"agent=git/2.43.0\n"), pkt(b"ls-refs\n"),
                     pkt(b"fetch=" + fetch + b"\n"), pkt(b"object-format=sha1\n")]) + b"0000"


def head(kind):
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/x-git-upload-pack-" + kind +
            b"\r\nConnection: close\r\n\r\n")


class Server:
    """Answers its first connection with `advertisement` and every later one with the endless
    pack; records the bytes written and when those that cross the entry's bound were."""

    def __init__(self, advertisement, many=False):
        self.advertisement = advertisement
        self.many = many
        self.bound = TREES_PACK_BYTES if many else ENTRY_BOUND
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.port = self.sock.getsockname()[1]
        self.sent = 0
        self.crossed = None
        self.connections = 0
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self.answer, args=(conn, self.connections), daemon=True).start()

    def answer(self, conn, n):
        with conn:
            data = b""
            while b"\r\n\r\n" not in data:
                more = conn.recv(65536)
                if not more:
                    return
                data += more
            try:
                if n == 1:
                    conn.sendall(head(b"advertisement") + self.advertisement)
                    return
                if self.many:
                    self.stream_many(conn)
                    return
                first = (pkt(b"packfile\n") + pkt(b"\x01" + b"PACK" + struct.pack(">II", 2, 1) +
                         bytes([0x80 | (3 << 4) | (DECLARED & 0x0F), DECLARED >> 4]) + b"\x78\x01"))
                block = pkt(b"\x01" + bytes([0]) + struct.pack("<HH", BLOCK, BLOCK ^ 0xFFFF) +
                            b"a" * BLOCK)
                conn.sendall(head(b"result") + first)
                pack = 0
                while True:
                    conn.sendall(block)
                    self.sent += len(block)
                    pack += BLOCK
                    if self.crossed is None and pack > self.bound:
                        self.crossed = time.perf_counter()
            except OSError:
                return

    def stream_many(self, conn):
        """A pack announcing 1,000,002 objects (as many as a commit's trees may have), each a
        well-formed blob of 65,000 bytes, until the client stops reading: only the pack's own
        byte bound stops it."""
        size = BLOCK
        size_head = bytes([0x80 | (3 << 4) | (size & 0x0F)])
        rest = size >> 4
        while rest:
            size_head += bytes([(rest & 0x7F) | (0x80 if rest >> 7 else 0)])
            rest >>= 7
        conn.sendall(head(b"result") + pkt(b"packfile\n"))
        pending = b"PACK" + struct.pack(">II", 2, 1_000_002)
        pack, n = 0, 0
        while True:
            while len(pending) < LINE:
                data = n.to_bytes(8, "big") + b"a" * (size - 8)
                pending += size_head + zlib.compress(data, 0)
                n += 1
            line = pkt(b"\x01" + pending[:LINE])
            pending = pending[LINE:]
            conn.sendall(line)
            self.sent += len(line)
            pack += LINE
            if self.crossed is None and pack > self.bound:
                self.crossed = time.perf_counter()

    def close(self):
        self.sock.close()


def run(label, advertisement, binary, deadline, many=False):
    server = Server(advertisement, many)
    with tempfile.TemporaryDirectory() as tmp:
        url = f"http://127.0.0.1:{server.port}/git/remote.git"
        with open(os.path.join(tmp, "skillfold.yaml"), "w") as f:
            f.write("skills:\n  - git:\n      source: %s\n      revision: %s\n"
                    "      directory: corpus\n      root: skills\n      approved:\n"
                    "        - { name: alpha, version: '1.0.0', hash: %s }\n"
                    % (url, "1" * 40, "2" * 64))
        argv = [binary, "prepare", "-c", "skillfold.yaml", "--fetch-timeout", str(deadline)]
        env = dict(os.environ)
        env.pop("SKILLFOLD_CONFIG", None)
        # GNU time's peak RSS (`%M`): the run fails, so prepare_vs_git's run_measured (which
        # wants a success) is not used.
        rss = os.path.join(tmp, "rss")
        started = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-q", "-f", "%M", "-o", rss, *argv], env=env,
                              cwd=tmp, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        ended = time.perf_counter()
        wall = ended - started
        with open(rss) as f:
            rss_kib = int(f.read().split()[-1])
    server.close()
    err = proc.stderr.decode(errors="replace")
    code = next((c for c in ("pack_too_large", "fetch_deadline", "fetch_invalid")
                 if f"[{c}]" in err), "?")
    if code == "?":
        print(err, file=sys.stderr)
    since = "n/a" if server.crossed is None else f"{(ended - server.crossed) * 1000:.0f} ms"
    print(f"{label:<6} [{code}] wall {wall:.2f} s, peak RSS {rss_kib / 1024:.1f} MiB, "
          f"server wrote {server.sent / 2**20:.1f} MiB, bound to refusal {since}")
    return rss_kib, code


def main():
    deadline = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    binary = os.path.abspath(release_binary())
    print(f"skillfold: {binary}; fetch deadline {deadline} s; entry bound {ENTRY_BOUND} bytes, "
          f"trees' pack bound {TREES_PACK_BYTES} bytes")
    ok = True
    for label, fetch, many in [("trees", b"shallow filter", False), ("whole", b"shallow", False),
                               ("many", b"shallow filter", True)]:
        rss_kib, code = run(label, capabilities(fetch), binary, deadline, many)
        ok &= rss_kib < 64 * 1024 and code == "pack_too_large"
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
