#!/bin/sh
# Run with cwd = the copied tree/.
set -eu
ln -s ../store/minimal.md minimal/SKILL.md
