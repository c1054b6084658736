#!/bin/sh
# Run with cwd = the copied tree/.
set -eu
mv nfd-dir "$(printf 'cafe\314\201')"
