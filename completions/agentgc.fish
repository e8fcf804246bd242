# fish completion for agentgc.
#
# Commands, options (global ones before or after the command, and each command's own, as
# --opt=VALUE or --opt VALUE), agents, option values, directories, and for show, in-use,
# purge and stop the session ids that 'agentgc ls --agent AGENT --ids' prints (in the home
# given with --home on the line, if any).
#
# The lists below mirror 'agentgc help' and 'agentgc help COMMAND':
# tests/e2e/t3400-completions.bats fails when they differ.

# The line before the word being completed, read as agentgc reads it: prints "cmd=NAME",
# "home=DIR" (the last --home given) and one "pos=WORD" per argument after the command.
function __agentgc_line
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l cmd
    set -l home
    set -l pos
    set -l endopts 0
    set -l value ''
    for t in $tokens
        if test -n "$value"
            test "$value" = --home; and set home $t
            set value ''
        else if test $endopts = 1; or test "$t" = -; or not string match -q -- '-*' $t
            if test -z "$cmd"
                set cmd $t
            else
                set -a pos $t
            end
        else if test "$t" = --
            set endopts 1
        else if string match -q -- '--home=*' $t
            set home (string replace -- '--home=' '' $t)
        else if contains -- $t (__agentgc_value_options $cmd)
            set value $t
        end
    end
    printf 'cmd=%s\n' $cmd
    printf 'home=%s\n' $home
    for p in $pos
        printf 'pos=%s\n' $p
    end
end

# The long options of command $argv[1] that take a value (the global ones too).
function __agentgc_value_options
    printf '%s\n' --home --color
    switch "$argv[1]"
        case ls
            printf '%s\n' --agent --project --older-than --newer-than --grep --sort --limit
        case prune
            printf '%s\n' --agent --older-than --keep --project --settle --budget
        case compact
            printf '%s\n' --agent
        case du
            printf '%s\n' --agent --by
        case ps
            printf '%s\n' --agent
        case stop
            printf '%s\n' --grace
    end
end

function __agentgc_cmd
    string replace -r -- '^cmd=' '' (__agentgc_line)[1]
end

# True when no command is on the line yet.
function __agentgc_needs_command
    test -z (__agentgc_cmd)
end

# True when the command is one of $argv.
function __agentgc_using
    contains -- (__agentgc_cmd) $argv
end

# True when the command is one of $argv[2..] and $argv[1] arguments follow it.
function __agentgc_at
    set -l s (__agentgc_line)
    contains -- (string replace -r -- '^cmd=' '' $s[1]) $argv[2..-1]
    and test (count (string match -r -- '^pos=.*' $s)) -eq $argv[1]
end

# True when the word being completed is a session id: the second argument of show, in-use and
# stop, any after the first of purge.
function __agentgc_wants_id
    set -l s (__agentgc_line)
    set -l cmd (string replace -r -- '^cmd=' '' $s[1])
    set -l n (count (string match -r -- '^pos=.*' $s))
    switch "$cmd"
        case show in-use stop
            test $n -eq 1
        case purge
            test $n -ge 1
        case '*'
            return 1
    end
end

# The session ids of the agent named on the line, from 'agentgc [--home H] ls --agent A --ids';
# for purge, those already on the line are not offered again.
function __agentgc_ids
    set -l s (__agentgc_line)
    set -l home (string replace -r -- '^home=' '' $s[2])
    set -l pos (string replace -r -- '^pos=' '' (string match -r -- '^pos=.*' $s))
    set -l prog (commandline -opc)[1]
    set -l args
    # a leading ~ expanded; nothing else on the line is ever run or expanded
    set home (string replace -r -- '^~(?=/|$)' $HOME $home)
    set prog (string replace -r -- '^~(?=/|$)' $HOME $prog)
    test -n "$home"; and set args --home $home
    set -a args ls
    switch "$pos[1]"
        case auto
        case '' '-*'
            return
        case '*'
            set -a args --agent $pos[1]
    end
    for id in ($prog $args --ids 2>/dev/null </dev/null)
        contains -- $id $pos[2..-1]; or echo $id
    end
end

complete -c agentgc -f

# commands that work today (the planned ones are not offered)
complete -c agentgc -n __agentgc_needs_command -a roots -d "where each agent's history is looked for, and whether it exists"
complete -c agentgc -n __agentgc_needs_command -a ls -d 'list sessions, newest first'
complete -c agentgc -n __agentgc_needs_command -a show -d "a session's metadata, every artifact with its size, children, holders"
complete -c agentgc -n __agentgc_needs_command -a in-use -d 'whether a session is live (exit 0 free, 4 in use, 5 not found)'
complete -c agentgc -n __agentgc_needs_command -a purge -d 'remove sessions completely, or say what was left and why'
complete -c agentgc -n __agentgc_needs_command -a prune -d 'purge the sessions an age, a keep list or a project selects'
complete -c agentgc -n __agentgc_needs_command -a compact -d "rebuild the agents' shared databases: no deleted row left in them"
complete -c agentgc -n __agentgc_needs_command -a du -d "bytes used, and what compact and prune would free"
complete -c agentgc -n __agentgc_needs_command -a ps -d 'running agent processes, the sessions they hold, busy or idle'
complete -c agentgc -n __agentgc_needs_command -a stop -d 'end the agent processes that hold a session, never anything else'
complete -c agentgc -n __agentgc_needs_command -a help -d 'this list, or the help of one command'
complete -c agentgc -n '__agentgc_at 0 help' -a 'roots ls show in-use purge prune compact du ps stop help' -d command

# global options, before or after the command
complete -c agentgc -l home -x -a '(__fish_complete_directories)' -d 'look in DIR instead of $HOME'
complete -c agentgc -l json -d 'JSON Lines on stdout, one object per session or id'
complete -c agentgc -l color -x -a 'auto always never' -d 'when to colour the output'
complete -c agentgc -s q -l quiet -d 'say less: one line per session, errors and residuals'
complete -c agentgc -s v -l verbose -d 'say more: every item removed'
complete -c agentgc -s h -l help -d 'print the help'
complete -c agentgc -l version -d 'print the version of agentgc'

# ls
complete -c agentgc -n '__agentgc_using ls' -l agent -x -a 'claude codex opencode cursor' -d 'only this agent (repeatable)'
complete -c agentgc -n '__agentgc_using ls' -l project -x -a '(__fish_complete_directories)' -d 'only sessions whose project is DIR or below it'
complete -c agentgc -n '__agentgc_using ls' -l project-gone -d 'only sessions whose project directory no longer exists'
complete -c agentgc -n '__agentgc_using ls' -l older-than -x -d 'last activity before now - DUR (90s, 15m, 24h, 30d)'
complete -c agentgc -n '__agentgc_using ls' -l newer-than -x -d 'last activity after now - DUR (90s, 15m, 24h, 30d)'
complete -c agentgc -n '__agentgc_using ls' -l grep -x -d 'only sessions whose title, first prompt or project contains TEXT'
complete -c agentgc -n '__agentgc_using ls' -l children -d 'also child and sub-agent sessions, under their parent'
complete -c agentgc -n '__agentgc_using ls' -l orphans -d 'also what is left of sessions whose record is gone'
complete -c agentgc -n '__agentgc_using ls' -l sort -x -a 'updated created size' -d 'the order: newest or largest first'
complete -c agentgc -n '__agentgc_using ls' -l limit -x -d 'at most N sessions'
complete -c agentgc -n '__agentgc_using ls' -l wide -d 'whole ids and untruncated columns'
complete -c agentgc -n '__agentgc_using ls' -l ids -d 'only whole ids, one per line'

# show, in-use, purge, stop: AGENT|auto, then ids
complete -c agentgc -n '__agentgc_at 0 show in-use purge stop' -a 'claude codex opencode cursor' -d agent
complete -c agentgc -n '__agentgc_at 0 show in-use purge stop' -a auto -d 'the agent whose id grammar the id has'
complete -c agentgc -n __agentgc_wants_id -a '(__agentgc_ids)' -d 'session id'
complete -c agentgc -n '__agentgc_using purge' -l dry-run -d 'change nothing: list what would go, and exit as the purge would'
complete -c agentgc -n '__agentgc_using purge' -l scrub -d 'then rebuild (VACUUM) every database rows were deleted from'
complete -c agentgc -n '__agentgc_using purge' -l with-forks -d "also purge the forks that read the session's history"

# prune
complete -c agentgc -n '__agentgc_using prune' -l agent -x -a 'claude codex opencode cursor' -d "only this agent's sessions (repeatable)"
complete -c agentgc -n '__agentgc_using prune' -l older-than -x -d 'sessions whose last activity is older than DUR (90s, 15m, 24h, 30d)'
complete -c agentgc -n '__agentgc_using prune' -l keep -x -a '(__fish_complete_path)' -d "sessions whose id is not in FILE ('-': standard input)"
complete -c agentgc -n '__agentgc_using prune' -l project -x -a '(__fish_complete_directories)' -d 'sessions whose project is DIR or below it'
complete -c agentgc -n '__agentgc_using prune' -l project-gone -d 'sessions whose project directory no longer exists'
complete -c agentgc -n '__agentgc_using prune' -l orphans -d 'only what is left of sessions whose record is gone'
complete -c agentgc -n '__agentgc_using prune' -l settle -x -d 'never touch a session active within DUR (default 24h)'
complete -c agentgc -n '__agentgc_using prune' -l budget -x -d 'stop after DUR (exit 75); the next run goes on'
complete -c agentgc -n '__agentgc_using prune' -l scrub -d 'then rebuild each database rows went from, once, at the end'
complete -c agentgc -n '__agentgc_using prune' -l dry-run -d 'change nothing: list what would go'
complete -c agentgc -n '__agentgc_using prune' -l yes -d 'do it without asking (needed off a terminal)'

# compact
complete -c agentgc -n '__agentgc_using compact' -l agent -x -a 'claude codex opencode cursor' -d "only this agent's databases (repeatable)"
complete -c agentgc -n '__agentgc_using compact' -l dry-run -d 'change nothing: say what would be done'

# du
complete -c agentgc -n '__agentgc_using du' -l agent -x -a 'claude codex opencode cursor' -d 'only this agent (repeatable)'
complete -c agentgc -n '__agentgc_using du' -l by -x -a 'agent project kind' -d 'one row per agent, per project of each agent, or per kind'

# ps
complete -c agentgc -n '__agentgc_using ps' -l agent -x -a 'claude codex opencode cursor' -d "only this agent's processes and the holders of its sessions (repeatable)"
complete -c agentgc -n '__agentgc_using ps' -l watch -d 'scan again every second, redrawn in place on a terminal, until interrupted'
complete -c agentgc -n '__agentgc_using ps' -l wide -d 'whole ids and commands, nothing cut'

# stop (AGENT|auto and the id: with show, in-use and purge above)
complete -c agentgc -n '__agentgc_using stop' -l grace -x -d 'from the first signal to SIGKILL (default 10s; at most 1h)'
complete -c agentgc -n '__agentgc_using stop' -l dry-run -d 'signal nothing: print the chain each holder would get'
