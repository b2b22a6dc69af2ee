#!/bin/sh
# Writes runner's man page (gzipped) from the binary's own help, so the two
# cannot drift: help2man turns `runner --help` and `--version` into the page,
# and every subcommand's --help, as runner prints it, becomes a section of
# SUBCOMMANDS.
# Usage: man_page.sh RUNNER_BINARY OUTPUT.1.gz
set -eu
runner=$1
output=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

{
  echo '[SUBCOMMANDS]'
  for subcommand in $("$runner" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\).*/\1/p'); do
    echo ".SS \"runner $subcommand\""
    echo '.nf'
    # Backslashes and lines starting with a roff control character print as written.
    "$runner" "$subcommand" --help | sed -e 's/\\/\\e/g' -e "s/^[.']/\\\\\\&&/"
    echo '.fi'
  done
  echo '[SEE ALSO]'
  echo 'README.md and its guides in docs/, installed in share/doc/runner beside share/man: a tour of'
  echo 'runner, and what to do when things go wrong.'
} >"$work/subcommands.h2m"

# --version's first line only: the libssh2 line names the build machine's library.
help2man --no-info --no-discard-stderr --section=1 --version-string="$("$runner" --version | head -n 1)" \
  --name="drain a queue of shell commands onto a fleet of GPU nodes over SSH" \
  --include="$work/subcommands.h2m" --output="$work/runner.1" "$runner"
gzip -9n <"$work/runner.1" >"$output"
