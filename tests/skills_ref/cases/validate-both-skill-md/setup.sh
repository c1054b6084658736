#!/bin/sh
# Run with cwd = the copied tree/.
set -eu
printf -- '---\nname: WRONG\n---\n' > both/skill.md
