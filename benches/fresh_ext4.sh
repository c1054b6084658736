#!/usr/bin/env bash
# A fresh ext4 file system without a journal (as on the benchmark VM), mounted at MOUNT (default
# /mnt/skillfold-bench) from a sparse image file IMAGE (default /tmp/skillfold-bench-ext4.img,
# 4 GiB), for the disk runs of prepare_vs_git.py:
#
#   benches/fresh_ext4.sh && BENCH_TMPDIR=/mnt/skillfold-bench python3 benches/prepare_vs_git.py ...
#   benches/fresh_ext4.sh --remove      unmounts it and removes the image
#
# Why: ext4 without a journal skips inodes deleted in the last minute (up to six when their
# inode table block is still dirty) when it allocates new ones, scanning past them one by one.
# A disk where a run has just removed its thousands of files makes the next run's file creation
# several times slower, for skillfold and git alike but not in the same measure, so the ratios
# of two runs in a row are not comparable. A new file system before each run puts every run in
# the state of a first one. One inode per 4 KiB (`-i 4096`, ~1 million): ext4's default of one per
# 16 KiB runs out after ~15 rounds of --agents 31 --skills 16 (~20,000 files and folders each).
# Needs root (mkfs.ext4, mount -o loop); the image lives on the disk
# that holds IMAGE, and the loop device writes through to it.
set -euo pipefail
mount_point="${MOUNT:-/mnt/skillfold-bench}"
image="${IMAGE:-/tmp/skillfold-bench-ext4.img}"
if mountpoint -q "$mount_point"; then
  umount "$mount_point"
fi
rm -f "$image"
if [ "${1:-}" = "--remove" ]; then
  exit 0
fi
truncate -s 4G "$image"
mkfs.ext4 -q -F -O ^has_journal -i 4096 "$image"
mkdir -p "$mount_point"
mount -o loop "$image" "$mount_point"
echo "benches/fresh_ext4.sh: a new ext4 (no journal) at $mount_point" >&2
