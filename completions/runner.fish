# fish completion for runner: subcommands and flags (read from runner's own
# --help, so they follow the installed binary), files for the options that
# name files, and for `runner log` the ids of the jobs that have a log in
# the campaign's state directory.

function __runner_subcommands
    runner --help 2>/dev/null | sed -n '/^Subcommands:/,/^$/s/^  \([a-z]*\).*/\1/p'
end

function __runner_flags
    set -l words (commandline -opc)
    runner $words[2] --help 2>/dev/null | sed -n 's/^  \(-[^ ]*\).*/\1/p' | tr ',' '\n' | sed 's/{.*//'
end

# The ids of the jobs with a log in the state directory the command line
# names: --state-dir, or the one beside --queue-file or $RUNNER_QUEUE_FILE
# (queue.yaml -> queue.runner).
function __runner_job_ids
    set -l words (commandline -opc)
    set -l queue queue.yaml
    set -q RUNNER_QUEUE_FILE; and set queue $RUNNER_QUEUE_FILE
    set -l state
    for i in (seq 2 (math (count $words) - 1))
        switch $words[$i]
            case -Q --queue-file
                set queue $words[(math $i + 1)]
            case --state-dir
                set state $words[(math $i + 1)]
        end
    end
    test -n "$state"; or set state (string replace -r -i '(?<=.)\.ya?ml$' '' -- $queue).runner
    for log in $state/logs/*.log
        basename $log .log
    end | sort -n
end

complete -c runner -f
complete -c runner -n __fish_use_subcommand -a '(__runner_subcommands)'
complete -c runner -n 'not __fish_use_subcommand; and string match -q -- "-*" (commandline -ct)' -a '(__runner_flags)'
complete -c runner -n 'not __fish_use_subcommand' -s H -l hosts-file -r -F
complete -c runner -n 'not __fish_use_subcommand' -s Q -l queue-file -r -F
complete -c runner -n '__fish_seen_subcommand_from add' -s f -l file -r -F
complete -c runner -n 'not __fish_use_subcommand' -l ssh-config -r -F
complete -c runner -n 'not __fish_use_subcommand' -l known-hosts -r -F
complete -c runner -n 'not __fish_use_subcommand' -l identity -r -F
complete -c runner -n 'not __fish_use_subcommand' -s o -l output -r -F
complete -c runner -n 'not __fish_use_subcommand' -l state-dir -r -a '(__fish_complete_directories)'
complete -c runner -n 'not __fish_use_subcommand' -l color -r -f -a 'auto always never'
complete -c runner -n '__fish_seen_subcommand_from log' -a '(__runner_job_ids)'
