#!/bin/sh
# Writes a man page (gzipped) from its scdoc source in docs/man/, with the
# version in its footer. Given the built binary, the source's @SUBCOMMANDS@
# line becomes a subsection per subcommand holding its --help as runner
# prints it, so that the options listed cannot drift from the binary's.
# Usage: man_page.sh SOURCE.scd VERSION OUTPUT.gz [RUNNER_BINARY]
set -eu
source=$1
version=$2
output=$3
runner=${4:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

: >"$work/subcommands.scd"
if [ -n "$runner" ]; then
  for subcommand in $("$runner" --help | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\).*/\1/p'); do
    {
      printf '## runner %s\n\n```\n' "$subcommand"
      # scdoc reads a backslash as an escape, in literal blocks too.
      "$runner" "$subcommand" --help | sed 's/\\/\\\\/g'
      printf '```\n\n'
    } >>"$work/subcommands.scd"
  done
fi

sed -e "s/@VERSION@/$version/" -e "/^@SUBCOMMANDS@\$/{r $work/subcommands.scd
d;}" "$source" | scdoc >"$work/page"
gzip -9n <"$work/page" >"$output"
