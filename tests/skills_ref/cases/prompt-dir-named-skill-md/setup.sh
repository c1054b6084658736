#!/bin/sh
# Run with cwd = the copied tree/.
set -eu
mkdir x/SKILL.md
