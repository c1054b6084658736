#!/bin/sh
# Run with cwd = the copied tree/.
set -eu
ln -s real minimal
