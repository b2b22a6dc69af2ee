#!/usr/bin/env bash
# No exception crosses an area: an area's public functions return Status or
# Result. Fails naming each `throw` in src/ outside the files listed below,
# and each listed file that throws no more (so that the list stays true).
# Usage: check_throws.sh SOURCE_DIR
set -uo pipefail
cd "${1:-.}" || exit 2

# Files that may throw, and why.
allowed=(
  # cli is the top: its ConfigError and StateError end the command in
  # run_cli (exit 2, the message with its place); nothing catches them below.
  src/cli/
  # The template parser unwinds its recursion with TemplateError, caught in
  # parse_template (template_parser.cpp), which returns it as a Status.
  src/config/template_parser.cpp
  src/config/template_tag.cpp
)

is_allowed() {
  local file=$1 entry
  for entry in "${allowed[@]}"; do
    [[ $file == "$entry" || ( $entry == */ && $file == "$entry"* ) ]] && return 0
  done
  return 1
}

# `throw` in code, not in a comment or a string.
throwing_files=$(grep -rlE '(^|[^_[:alnum:]"])throw([^_[:alnum:]]|$)' src \
  | while read -r file; do
      # Reads all of its input: an early exit would fail the pipe.
      sed -e 's://.*$::' -e 's/"[^"]*"//g' "$file" |
        grep -E '(^|[^_[:alnum:]])throw([^_[:alnum:]]|$)' >/dev/null && echo "$file"
    done | sort)

failures=0
for file in $throwing_files; do
  if ! is_allowed "$file"; then
    grep -nE '(^|[^_[:alnum:]])throw([^_[:alnum:]]|$)' "$file" | sed "s|^|$file:|"
    echo "FAILED: $file throws; return a Status or Result<T> instead (or, for a throw caught in the same file, add it to scripts/check_throws.sh with the reason)"
    failures=$((failures + 1))
  fi
done
for entry in "${allowed[@]}"; do
  [[ $entry == */ ]] && continue
  if ! grep -qxF "$entry" <<<"$throwing_files"; then
    echo "FAILED: $entry throws no more; remove it from scripts/check_throws.sh"
    failures=$((failures + 1))
  fi
done
[ "$failures" -eq 0 ] || exit 1
echo "no throw outside the listed files"
