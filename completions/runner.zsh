#compdef runner
# zsh completion for runner (installed as _runner): subcommands and flags
# (read from runner's own --help, so they follow the installed binary),
# files for the options that name files, and for `runner log` the ids of the
# jobs that have a log in the campaign's state directory.

local runner=$words[1] subcommand="" queue=${RUNNER_QUEUE_FILE:-queue.yaml} state="" i
for (( i = 2; i < CURRENT; i++ )); do
  case $words[i] in
    -Q|--queue-file) queue=$words[i+1] ;;
    --state-dir) state=$words[i+1] ;;
    -*) ;;
    *) [[ -z $subcommand ]] && subcommand=$words[i] ;;
  esac
done

if [[ -z $subcommand ]]; then
  compadd -- ${(f)"$($runner --help 2>/dev/null | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\).*/\1/p')"} \
    --help --version
  return
fi

case $words[CURRENT-1] in
  -H|--hosts-file|-Q|--queue-file|--file|--ssh-config|--known-hosts|--identity|-o|--output)
    _files; return ;;
  -f) [[ $subcommand == add ]] && { _files; return } ;;  # log's -f is --follow
  --state-dir) _files -/; return ;;
  --color) compadd auto always never; return ;;
esac

if [[ $PREFIX == -* ]]; then
  compadd -- ${(f)"$($runner $subcommand --help 2>/dev/null | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' | sed 's/{.*//')"}
elif [[ $subcommand == log ]]; then
  # The state directory runner would use: beside the queue file, queue.yaml -> queue.runner.
  [[ -z $state ]] && state=${queue%.(#i)y(a|)ml}.runner
  compadd -- ${(on)${${(f)"$(cd $state/logs 2>/dev/null && ls -- *.log 2>/dev/null)"}%.log}}
fi
