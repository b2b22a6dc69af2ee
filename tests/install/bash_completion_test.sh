#!/usr/bin/env bash
# The bash completion (completions/runner.bash) with the built runner on
# PATH: what COMPREPLY holds for command lines ending in a TAB.
# Usage: bash_completion_test.sh RUNNER_BINARY COMPLETION_FILE
set -uo pipefail
runner=$(realpath "$1")
completion=$(realpath "$2")
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/bin"
ln -s "$runner" "$dir/bin/runner"
PATH=$dir/bin:$PATH
cd "$dir"
# shellcheck source=/dev/null
source "$completion"

failures=0
# expect LINE WANTED: the completions of LINE (a trailing space starts a new
# word), space-separated, must be WANTED.
expect() {
  local line=$1 wanted=$2
  read -ra COMP_WORDS <<<"$line"
  [[ $line == *" " ]] && COMP_WORDS+=("")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _runner 2>/dev/null
  local got="${COMPREPLY[*]}"
  if [ "$got" = "$wanted" ]; then
    echo "ok: '$line' -> '$got'"
  else
    echo "FAILED: '$line' -> '$got', wanted '$wanted'"
    failures=$((failures + 1))
  fi
}

expect "runner q" "queue"
expect "runner --v" "--version"
expect "runner queue --ho" "--hosts-file"
expect "runner q --ho" "--hosts-file"
expect "runner log --st" "--state-dir"
expect "runner queue --no-a" "--no-agent"
expect "runner broadcast --color al" "always"

touch hosts.yaml other.txt
expect "runner queue --hosts-file ho" "hosts.yaml"
expect "runner add -f oth" "other.txt"
expect "runner log -f " ""

mkdir -p queue.runner/logs nightly.runner/logs
touch queue.runner/logs/{3,12,1}.log nightly.runner/logs/7.log
expect "runner log " "1 3 12"
expect "runner log 1" "1 12"
expect "runner log -Q nightly.yaml " "7"
expect "runner log --state-dir nightly.runner " "7"
expect "runner log -Q missing.yaml " ""
RUNNER_QUEUE_FILE=nightly.yaml expect "runner log " "7"

[ "$failures" -eq 0 ] || { echo "$failures completion(s) wrong"; exit 1; }
