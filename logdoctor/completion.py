"""`logdoctor completion bash|zsh|fish`: shell completion scripts, generated from the argparse parser.

Generated, not hand-written, so a new command or option is completed the moment it exists. What a script
knows: the commands (with their help), each command's options (with the global ones, which work before
and after the command), the values of an option with choices (`--format text|json`), files for an option
whose value is a path (metavar FILE, DIR, YAML), the choices of a positional (`completion bash`), and for
`explain` the rule ids, asked of `logdoctor patterns` when the user presses Tab."""

from __future__ import annotations

import argparse
import re
from dataclasses import dataclass, field

PATH_METAVARS = frozenset({"FILE", "DIR", "YAML"})
# `explain ID`: the ids of the library as `logdoctor patterns` lists them (first column, summary line
# dropped), plus the rule every unknown error gets.
_IDS_COMMAND = "logdoctor patterns 2>/dev/null | sed '$d' | cut -d' ' -f1; echo unrecognized"
_IDS = "_logdoctor_ids"  # the shell function each script defines around it


@dataclass
class Option:
    names: list[str]
    help: str
    takes_value: bool
    choices: tuple[str, ...] = ()
    path: bool = False  # its value is a file or a folder
    repeatable: bool = False


@dataclass
class Command:
    name: str  # "" for the top level (the pipe)
    help: str
    options: list[Option] = field(default_factory=list)
    words: tuple[str, ...] = ()  # the choices of its positionals
    files: bool = False  # its positionals are paths (or a command line: files are the best guess)
    ids: bool = False  # its positional is a rule id (explain)


def _short(text: str | None) -> str:
    """A help text cut to its first clause, without characters the shells' syntax would trip on."""
    text = re.sub(r" ?\([^)]*\)", "", text or "").split(";")[0].split(": ")[0].strip()
    return re.sub(r"[^\w ,./=+|<>-]", "", text)


def _command(name: str, help_text: str, parser: argparse.ArgumentParser) -> Command:
    command = Command(name, _short(help_text))
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            continue
        if action.option_strings:
            if action.help == argparse.SUPPRESS:
                continue
            command.options.append(
                Option(
                    names=list(action.option_strings),
                    help=_short(action.help),
                    takes_value=action.nargs != 0,
                    choices=tuple(str(c) for c in action.choices or ()),
                    path=action.metavar in PATH_METAVARS,
                    repeatable=isinstance(action, argparse._AppendAction),
                )
            )
        elif action.choices:
            command.words += tuple(str(c) for c in action.choices)
        elif action.dest == "pattern_id":
            command.ids = True
        else:
            command.files = True
    return command


def commands_of(parser: argparse.ArgumentParser) -> list[Command]:
    """The top level, then each command, in the parser's order."""
    found = [_command("", "", parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help for choice in action._choices_actions}
            found += [_command(name, helps.get(name) or "", sub) for name, sub in action.choices.items()]
    return found


def script(parser: argparse.ArgumentParser, shell: str) -> str:
    return {"bash": bash, "zsh": zsh, "fish": fish}[shell](commands_of(parser))


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"


def bash(commands: list[Command]) -> str:
    subs = commands[1:]
    names = " ".join(c.name for c in subs)
    value_cases: list[str] = []
    option_cases: list[str] = []
    for command in commands:
        key = command.name or "''"
        for option in command.options:
            if not option.takes_value:
                continue
            pattern = "|".join(f"{key}:{name}" for name in option.names)
            if option.choices:
                reply = f'COMPREPLY=($(compgen -W {_quote(" ".join(option.choices))} -- "$cur"))'
            elif option.path:
                reply = 'COMPREPLY=($(compgen -f -- "$cur"))'
            else:
                reply = "COMPREPLY=()"
            value_cases.append(f"        {pattern}) {reply}; return ;;")
        flags = " ".join(name for option in command.options for name in option.names)
        if command.name:
            words = " ".join(command.words)
            if command.ids:
                positional = f'COMPREPLY=($(compgen -W "$({_IDS})" -- "$cur"))'
            elif command.words:
                positional = f'COMPREPLY=($(compgen -W {_quote(words)} -- "$cur"))'
                if command.files:
                    positional += '; COMPREPLY+=($(compgen -f -- "$cur"))'
            elif command.files:
                positional = 'COMPREPLY=($(compgen -f -- "$cur"))'
            else:
                positional = "COMPREPLY=()"
        else:
            positional = f'COMPREPLY=($(compgen -W {_quote(names)} -- "$cur"))'
        option_cases.append(
            f"        {key})\n"
            f'            if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W {_quote(flags)} -- "$cur"))\n'
            f"            else {positional}; fi ;;"
        )
    return (
        "# bash completion for logdoctor (generated by `logdoctor completion bash`)\n"
        f"{_IDS}() {{ {_IDS_COMMAND}; }}\n"
        "_logdoctor() {\n"
        '    local cur="${COMP_WORDS[COMP_CWORD]}" prev="${COMP_WORDS[COMP_CWORD-1]}" cmd="" i\n'
        "    for ((i = 1; i < COMP_CWORD; i++)); do\n"
        '        case "${COMP_WORDS[i]}" in\n'
        '            --) [[ -n $cmd ]] && { COMPREPLY=($(compgen -c -f -- "$cur")); return; } ;;\n'
        f'            {names.replace(" ", "|")}) [[ -z $cmd ]] && cmd="${{COMP_WORDS[i]}}" ;;\n'
        "        esac\n"
        "    done\n"
        '    case "$cmd:$prev" in\n' + "\n".join(value_cases) + "\n"
        "    esac\n"
        '    case "$cmd" in\n' + "\n".join(option_cases) + "\n"
        "    esac\n"
        "}\n"
        "complete -o filenames -F _logdoctor logdoctor\n"
    )


def _zsh_escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("'", "'\\''").replace("[", "\\[").replace("]", "\\]").replace(":", "\\:")


def _zsh_spec(option: Option) -> list[str]:
    specs = []
    for name in option.names:
        star = "*" if option.repeatable else ""
        spec = f"{star}{name}[{_zsh_escape(option.help)}]"
        if option.takes_value:
            if option.choices:
                spec += f":value:({' '.join(option.choices)})"
            elif option.path:
                spec += ":path:_files"
            else:
                spec += ":value: "
        specs.append(_quote(spec))
    return specs


def zsh(commands: list[Command]) -> str:
    top, subs = commands[0], commands[1:]
    described = "\n".join(f"        {_quote(c.name + ':' + _zsh_escape(c.help))}" for c in subs)
    top_specs = " \\\n        ".join(s for o in top.options for s in _zsh_spec(o))
    cases = []
    for command in subs:
        specs = [s for o in command.options for s in _zsh_spec(o)]
        if command.ids:
            specs.append(_quote(f"1:rule id:{{compadd -- $({_IDS})}}"))
        elif command.words:
            specs.append(_quote(f"1:value:({' '.join(command.words)})"))
            if command.files:
                specs.append(_quote("*:file:_files"))
        elif command.files:
            specs.append(_quote("*:file:_files"))
        body = " \\\n                ".join(specs) if specs else "''"
        cases.append(f"            {command.name}) _arguments -s \\\n                {body} ;;")
    return (
        "#compdef logdoctor\n"
        "# zsh completion for logdoctor (generated by `logdoctor completion zsh`)\n"
        f"{_IDS}() {{ {_IDS_COMMAND}; }}\n"
        "_logdoctor() {\n"
        "    local curcontext=$curcontext state line ret=1\n"
        "    typeset -A opt_args\n"
        "    local -a commands\n"
        "    commands=(\n" + described + "\n    )\n"
        "    _arguments -C \\\n        " + top_specs + " \\\n"
        "        '1: :->command' \\\n"
        "        '*:: :->args' && ret=0\n"
        "    case $state in\n"
        "        command) _describe -t commands 'logdoctor command' commands && ret=0 ;;\n"
        "        args)\n"
        "            case $words[1] in\n" + "\n".join(cases) + "\n"
        "            esac ;;\n"
        "    esac\n"
        "    return ret\n"
        "}\n"
        'if [[ $zsh_eval_context[-1] == loadautofunc ]]; then _logdoctor "$@"; else compdef _logdoctor logdoctor; fi\n'
    )


def _fish_option(condition: str, option: Option) -> str:
    parts = ["complete -c logdoctor", f"-n {_quote(condition)}"]
    for name in option.names:
        parts.append(f"-l {name[2:]}" if name.startswith("--") else f"-s {name[1:]}")
    if option.takes_value:
        if option.choices:
            parts.append(f"-x -a {_quote(' '.join(option.choices))}")
        elif option.path:
            parts.append("-r -F")
        else:
            parts.append("-x")
    if option.help:
        parts.append(f"-d {_quote(option.help)}")
    return " ".join(parts)


def fish(commands: list[Command]) -> str:
    top, subs = commands[0], commands[1:]
    names = " ".join(c.name for c in subs)
    none_yet = f"not __fish_seen_subcommand_from {names}"
    lines = [
        "# fish completion for logdoctor (generated by `logdoctor completion fish`)",
        f"function {_IDS}; {_IDS_COMMAND}; end",
        "complete -c logdoctor -f",
    ]
    lines += [f"complete -c logdoctor -n {_quote(none_yet)} -a {c.name} -d {_quote(c.help)}" for c in subs]
    lines += [_fish_option(none_yet, option) for option in top.options]
    for command in subs:
        seen = f"__fish_seen_subcommand_from {command.name}"
        lines += [_fish_option(seen, option) for option in command.options]
        if command.ids:
            lines.append(f"complete -c logdoctor -n {_quote(seen)} -a {_quote('(' + _IDS + ')')}")
        if command.words:
            lines.append(f"complete -c logdoctor -n {_quote(seen)} -a {_quote(' '.join(command.words))}")
        if command.files:
            lines.append(f"complete -c logdoctor -n {_quote(seen)} -F")
    return "\n".join(lines) + "\n"
