#!/bin/sh
# Run with cwd = the copied tree/.
set -eu
ln -s ../nowhere.md minimal/SKILL.md
