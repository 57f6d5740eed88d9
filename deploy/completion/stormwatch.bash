# bash completion for stormwatch (installed as
# share/bash-completion/completions/stormwatch). Everything is read from the
# binary itself, so it never drifts from it: commands from `stormwatch
# --help`, each command's options from `stormwatch COMMAND --help`, property
# names after -X from `stormwatch COMMAND -X list`.

_stormwatch_commands()
{
    "$1" --help 2>/dev/null | awk '/^Commands:/ { on = 1; next } on && /^  [a-z]/ { print $1 } on && /^$/ { on = 0 }'
}

_stormwatch_options()
{
    "$1" "$2" --help 2>/dev/null | grep -oE '^ +(-[A-Za-z], )?--?[A-Za-z][A-Za-z0-9-]*' | grep -oE -- '--?[A-Za-z][A-Za-z0-9-]*'
}

_stormwatch()
{
    local cur prev bin cmd i
    COMPREPLY=()
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD-1]}
    bin=${COMP_WORDS[0]}
    cmd=""
    for ((i = 1; i < COMP_CWORD; i++)); do
        case ${COMP_WORDS[i]} in
            -*) ;;
            *) cmd=${COMP_WORDS[i]}; break ;;
        esac
    done
    if [[ -z $cmd ]]; then
        COMPREPLY=($(compgen -W "$(_stormwatch_commands "$bin") --help --version" -- "$cur"))
        return 0
    fi
    case $prev in
        -X)
            local props
            props=$("$bin" "$cmd" -X list 2>/dev/null | awk 'NR > 1 && $1 ~ /^[a-z]/ { print $1 "=" }')
            COMPREPLY=($(compgen -W "$props list dump" -- "$cur"))
            [[ ${#COMPREPLY[@]} -eq 1 && ${COMPREPLY[0]} == *= ]] && compopt -o nospace 2>/dev/null
            return 0
            ;;
        -c | --config | -o | --output | --truth | --bootstrap-file | --checkpoint)
            COMPREPLY=($(compgen -f -- "$cur"))
            return 0
            ;;
        --format)
            COMPREPLY=($(compgen -W "json avro text" -- "$cur"))
            return 0
            ;;
    esac
    if [[ $cur == -* ]]; then
        COMPREPLY=($(compgen -W "$(_stormwatch_options "$bin" "$cmd")" -- "$cur"))
    else
        COMPREPLY=($(compgen -f -- "$cur"))
    fi
    return 0
}
complete -F _stormwatch stormwatch
