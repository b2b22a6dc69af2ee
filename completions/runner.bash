# bash completion for runner: subcommands and flags (read from runner's own
# --help, so they follow the installed binary), files for the options that
# name files, and for `runner log` the ids of the jobs that have a log in
# the campaign's state directory.

# The state directory the command line names: --state-dir, or the one
# beside --queue-file or $RUNNER_QUEUE_FILE (queue.yaml -> queue.runner), as
# runner finds it.
_runner_state_dir() {
  local queue=${RUNNER_QUEUE_FILE:-queue.yaml} state="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -Q | --queue-file) queue=${COMP_WORDS[i + 1]} ;;
      --state-dir) state=${COMP_WORDS[i + 1]} ;;
    esac
  done
  if [ -z "$state" ]; then
    case ${queue,,} in
      *?.yaml) queue=${queue:0:${#queue}-5} ;;
      *?.yml) queue=${queue:0:${#queue}-4} ;;
    esac
    state=$queue.runner
  fi
  printf '%s\n' "$state"
}

_runner() {
  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD - 1]}
  local runner=${COMP_WORDS[0]} subcommand="" i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case ${COMP_WORDS[i]} in
      -*) ;;
      *) subcommand=${COMP_WORDS[i]}; break ;;
    esac
  done
  COMPREPLY=()

  if [ -z "$subcommand" ]; then
    local subcommands
    subcommands=$("$runner" --help 2>/dev/null | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\).*/\1/p')
    COMPREPLY=($(compgen -W "$subcommands --help --version" -- "$cur"))
    return
  fi

  # What the previous flag takes, if it names something to complete.
  local value=""
  case $prev in
    -H | --hosts-file | -Q | --queue-file | --file | --ssh-config | --known-hosts | --identity | -o | --output)
      value=file ;;
    -f) [ "$subcommand" = add ] && value=file ;;  # log's -f is --follow
    --state-dir) value=directory ;;
    --color) value=color ;;
  esac
  case $value in
    file) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur")); return ;;
    directory) compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -d -- "$cur")); return ;;
    color) COMPREPLY=($(compgen -W "auto always never" -- "$cur")); return ;;
  esac

  if [[ $cur == -* ]]; then
    local flags
    flags=$("$runner" "$subcommand" --help 2>/dev/null | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' | sed 's/{.*//')
    COMPREPLY=($(compgen -W "$flags" -- "$cur"))
  elif [ "$subcommand" = log ]; then
    local logs ids
    logs=$(_runner_state_dir)/logs
    ids=$(cd "$logs" 2>/dev/null && ls -- *.log 2>/dev/null | sed 's/\.log$//' | sort -n)
    COMPREPLY=($(compgen -W "$ids" -- "$cur"))
  fi
}

complete -F _runner runner
