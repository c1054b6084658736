#!/bin/sh
# Run with cwd = the copied tree/.
set -eu
printf -- '---\nname: both\ndescription: lower\n---\n' > both/skill.md
