"""The words Megatron's argparse would get from a file, in three syntaxes:

* an argument file (`*.args`): options and values (`--num-layers 24`), comments, backslash
  continuations;
* a launcher script in bash (script.py reads it statically: assignments, arrays, `if`/`case`, loops,
  functions, `eval`; nothing is run, the environment is never read): the command that launches the
  training script (launch.py: through `torchrun`, `deepspeed`, `python -m torch.distributed.run`,
  inside `srun ...`, `bash -c '...'`, a pipeline) gives the arguments and the launcher's words; a
  script without one is read as its arrays of arguments, in file order;
* Megatron-LM's CI YAML (`MODEL_ARGS:` mapping `--flag: value`, `true` = a bare flag), turned into
  words as its `_run_training.sh` does.

A value the script does not give (`$1`, a variable it does not set, `$(...)`) stays unresolved and says
why; what the reading assumed or did not run is said in `notes` (the report's source note).
"""

from __future__ import annotations

import re
import shlex
from typing import Any

from ...core.errors import InputError
from ...io.documents import key_line, parse_yaml
from .bash.expand import Expander
from .bash.launch import Launch, Written
from .bash.lexer import Token, tokenize
from .bash.values import Chunk, State, split_at_blanks
from .options import dest_of
from .words import Arg, Words

_YAML_KEY = re.compile(r"^(--?[\w.-]+|[A-Za-z_][\w.-]*):(\s|$)")
SHELL_SUFFIXES = (".sh", ".bash", ".slurm", ".sbatch", ".zsh", ".ksh")
NO_LAUNCH = (
    "write the launch line (torchrun ... pretrain_gpt.py --flag value ...), or the arguments as an args "
    "file (--flag value per line)"
)


def syntax_of(text: str, name: str = "") -> str:
    """args, bash or yaml: a shell file by its name or its `#!` line, else by its first line that is
    not a comment (`--flag value` words, a YAML `key:`, or shell)."""
    if name.lower().endswith(SHELL_SUFFIXES) or (text.startswith("#!") and "sh" in text.split("\n", 1)[0]):
        return "bash"
    for line in text.split("\n"):  # (not splitlines: a \r, \v or \x85 in a comment ends no line for bash)
        stripped = line.strip(" \t\r")
        if not stripped or stripped.startswith("#"):
            continue
        if _YAML_KEY.match(stripped) or stripped.startswith(("---", "{")):
            return "yaml"
        if stripped.startswith("-"):
            return "args"
        return "bash"
    return "args"


def words_of(text: str, name: str, given: dict[str, str] | None = None) -> Words:
    """`given`: the other files of the command line (path -> text), which a bash script may source."""
    kind = syntax_of(text, name)
    if kind == "yaml":
        return _yaml_words(text, name)
    if kind == "args":
        return _args_words(tokenize(text, name), name)
    return _bash_words(text, name, given)


# ---- argument files -------------------------------------------------------------------------


def _args_words(tokens: list[Token], name: str) -> Words:
    out = Words("args")
    expander = Expander(State(name))
    for tok in tokens:
        if tok.kind == "newline":
            continue
        if tok.kind != "word":
            what = f"`{tok.text}(`" if tok.kind == "array" else f"an unquoted `{tok.text or '(('}`"
            raise InputError(
                f"{what} is shell syntax; an args file holds options and values only: quote the value, or "
                "write the launch line as a bash script",
                file=name,
                line=tok.line,
            )
        assert tok.word is not None
        for chunks in expander.fields(tok.word, split=False) or [[]]:
            out.args.append(to_arg(chunks, tok.word.raw, name, tok.line))
    return out


def to_arg(chunks: list[Chunk], raw: str, name: str, line: int, group: int = -1) -> Arg:
    """An argparse word from a value's pieces (its notes: where the script's values came from)."""
    text = "".join(c.text for c in chunks)
    resolved = all(c.known for c in chunks)
    notes = list(dict.fromkeys(c.note for c in chunks if c.note))
    if resolved and ("'" in text or '"' in text):
        notes.append(f"from {raw or text}: bash passes the quote characters of {text} to Megatron literally")
    why = "; ".join(dict.fromkeys(c.why for c in chunks if not c.known and c.why))
    arg = Arg(
        text,
        raw or shell_text(chunks),
        resolved,
        name,
        chunks[0].line if chunks else line,
        "; ".join(notes),
        why,
        group,
    )
    for chunk in chunks if not resolved else ():
        if not chunk.known:
            break
        arg.literal += len(chunk.text)
    return arg


def shell_text(chunks: list[Chunk]) -> str:
    """Pieces of text as one shell word: what is known quoted where the shell would split or expand it
    (`'<some'`), an expression not known here as written (`${PFX}`)."""
    return "".join(c.text if not c.known else shlex.quote(c.text) for c in chunks if c.text or not c.known)


def written_arg(word: Written, name: str, line: int) -> Arg:
    arg = to_arg(word.chunks, word.shown, name, line, word.group)
    arg.word = word.raw
    if not word.whole:
        arg.raw = shell_text(word.chunks)  # a piece of a word (an array's element): its own text, as a shell word
    return arg


# ---- bash launcher scripts ------------------------------------------------------------------


def _bash_words(text: str, name: str, given: dict[str, str] | None = None) -> Words:
    from .bash.script import Script

    reading = Script(name, given).read(text)
    out = Words("bash", included=list(dict.fromkeys(reading.included)))
    launch = _the_launch(reading.launches, name, dest_of)
    if launch is None:  # the arguments the file's arrays and strings of options hold, in the order it sets them
        held: list[str] = []
        for var, elements in reading.variables.items():
            args = [a for element in elements for a in _array_element(element, name)]
            if (
                args
                and args[0].resolved
                and args[0].text.startswith("-")
                and any(a.resolved and dest_of(a.text.partition("=")[0]) for a in args)
            ):
                out.args.extend(args)
                held.append(var)
        if held:
            out.notes.append(
                f"no command launches a training script: read the arguments of {', '.join(held)}, "
                "in the order the file sets them"
            )
        if not out.args:
            stop = (
                f"the script stops at line {reading.exited} (exit) before any launch line; " if reading.exited else ""
            )
            ran = (
                (
                    f"; it runs {', '.join(reading.scripts[:3])}, not given: translate the script that holds the launch "
                    "line (what this one exports for it: --set)"
                )
                if reading.scripts
                else ""
            )
            raise InputError(
                f"no Megatron arguments: {stop}no command launches a Python training script (torchrun, "
                f"deepspeed, python ... *.py) and the file has no arrays of arguments{ran}; {NO_LAUNCH}",
                file=name,
            )
    else:
        out.launcher = [written_arg(word, name, launch.line) for word in launch.launcher]
        out.args = [written_arg(word, name, launch.line) for word in launch.args]
        if launch.through:  # the wrapper script expands its arguments unquoted: split again at blanks
            out.launcher = []
            out.args = [
                to_arg(list(piece), "", name, launch.line)
                for word in launch.args
                for piece in split_at_blanks(word.chunks)
            ]
            out.notes.append(
                f"the launch (line {launch.line}) goes through {launch.through}, which is not given: "
                f"read as it running {launch.script_name} with the words after it, split at blanks"
            )
        _name_repeats(out, launch, [x for x in reading.launches if x.line == launch.line])
        script = launch.words[launch.script_at]
        if not all(c.known for c in script.chunks):
            why = "; ".join(dict.fromkeys(c.why for c in script.chunks if not c.known and c.why))
            out.notes.append(
                f"the launch (line {launch.line}) runs {script.shown}, a script not known here ({why}): "
                "read as the training script, as the options after it say"
            )
        if launch.wrapper:
            shown = " ".join(word.shown for word in launch.wrapper)
            out.notes.append(
                f"the launch (line {launch.line}) runs inside `{_cut(shown)}`: its settings are not Megatron's"
            )
        others = [x for x in reading.launches if x.line != launch.line]  # its own runs again are said above
        if others:
            shown = ", ".join(f"{x.script_name} (line {x.line})" for x in others[:4])
            out.notes.append(f"other commands not run as the training: {shown}")
    out.notes.extend(reading.choices)
    out.notes.extend(f"{what} is not read: what it sets is not known here" for what in reading.sourced)
    if reading.not_run:
        shown = ", ".join(f"{cmd} ({_lines(lines)})" for cmd, lines in list(reading.not_run.items())[:12])
        more = f" and {len(reading.not_run) - 12} more" if len(reading.not_run) > 12 else ""
        out.notes.append(f"commands neoconv does not run (it reads the script only): {shown}{more}")
    return out


def _the_launch(launches: list[Launch], name: str, dest_of: Any) -> Launch | None:
    """The launch of the training: a training script by name and Megatron options in its words, before
    any other; several different runs of it are refused (one run per file)."""
    if not launches:
        return None

    def rank(launch: Launch) -> tuple[bool, int]:
        options = sum(1 for word in launch.args for c in word.chunks[:1] if c.known and dest_of(c.text))
        return (launch.trains and options > 0, options)

    best = max(rank(x) for x in launches)
    if best == (False, 0) and not any(x.trains or x.script_name.endswith(".py") for x in launches):
        return None  # python -m pip ...: a module that is no training script, with no Megatron option
    chosen = [x for x in launches if rank(x) == best]
    distinct = {tuple(tuple((c.text, c.known) for c in w.chunks) for w in x.args): x for x in chosen}
    runs = list(distinct.values())
    differ = _differing([_option_values(x) for x in runs])
    if len(runs) > 1 and len({x.line for x in runs}) == 1 and not any(dest_of(k) for k in differ):
        return chosen[0]  # one launch line run again (a loop over repeats, run names): its first run, named
    if len(runs) > 1:
        lines = ", ".join(str(x.line) for x in runs[:6])
        options = [k for k in differ if dest_of(k)] or differ
        what = f" ({', '.join(options[:4])} differ)" if options else ""
        raise InputError(
            f"the script launches {len(runs)} different training runs (lines {lines}){what}: neoconv "
            "reads one run per file; keep one launch line",
            file=name,
            line=chosen[0].line,
        )
    return chosen[0]


def _name_repeats(out: Words, launch: Launch, runs: list[Launch]) -> None:
    """One launch line run several times (a loop over clock rates, repeats): its first run is read; the
    options whose values differ between the runs are named on the values read."""
    values = [_option_values(run) for run in runs]
    differ = _differing(values)
    if not differ:
        return
    out.notes.append(
        f"the launch line (line {launch.line}) runs {len(runs)} times (a loop, or a function called "
        f"again): read its first run; {', '.join(differ[:6])} differ between the runs"
    )
    for arg in out.args:
        option = arg.text.partition("=")[0]
        if option in differ:
            given = list(dict.fromkeys(v.get(option, "(not given)") for v in values))
            shown = ", ".join(_cut(g) for g in given[:4]) + (f" and {len(given) - 4} more" if len(given) > 4 else "")
            arg.note = "; ".join(
                p for p in (arg.note, f"the {len(runs)} runs of line {launch.line} give {shown}: the first read") if p
            )


def _differing(runs: list[dict[str, str]]) -> list[str]:
    """The options whose values differ between runs (given in some only: differ too)."""
    return [k for k in dict.fromkeys(k for run in runs for k in run) if len({run.get(k) for run in runs}) > 1]


def _option_values(launch: Launch) -> dict[str, str]:
    """A run's options and the word after each (its value, as the reading expanded it)."""
    words = ["".join(c.text for c in w.chunks) for w in launch.args]
    found: dict[str, str] = {}
    for k, word in enumerate(words):
        if word.startswith("--"):
            option, eq, value = word.partition("=")
            after = words[k + 1] if k + 1 < len(words) and not words[k + 1].startswith("--") else ""
            found[option] = value if eq else after
    return found


def _array_element(element: list[Chunk], name: str) -> list[Arg]:
    """A variable's element (an array's, or a string's whole value) as the arguments it stands for:
    split at blanks as bash splits an unquoted expansion when it holds options; one value with blanks
    is kept whole, said so."""
    if not element:
        return []
    text = "".join(c.text for c in element)
    if text.lstrip().startswith("-"):
        return [to_arg(list(piece), "", name, element[0].line) for piece in split_at_blanks(element)]
    if all(c.known for c in element) and len(text.split()) > 1:
        note = (
            f"one value with blanks ({text!r}): bash expands the array unquoted and would pass "
            f"{len(text.split())} words; read as the one value meant"
        )
        return [Arg(text, text, True, name, element[0].line, note)]
    return [to_arg(element, "", name, element[0].line)]


def _lines(lines: list[int]) -> str:
    unique = sorted(set(lines))
    shown = ", ".join(map(str, unique[:4])) + (", ..." if len(unique) > 4 else "")
    return f"line{'s' if len(unique) > 1 else ''} {shown}"


def _cut(text: str, size: int = 70) -> str:
    text = " ".join(text.split())
    return text if len(text) <= size else text[: size - 3] + "..."


# ---- Megatron's CI YAML ------------------------------------------------------------------------


_KEY_LINE = re.compile(r"^\s*(['\"]?)(--?[\w.-]+|[A-Za-z_][\w.-]*)\1\s*:(?:\s|$)")


def _key_lines(text: str) -> dict[str, int]:
    """The line of each key (its first), in one pass (a file of thousands of options stays linear)."""
    lines: dict[str, int] = {}
    for number, line in enumerate(text.split("\n"), 1):
        found = _KEY_LINE.match(line)
        if found:
            lines.setdefault(found.group(2), number)
    return lines


def _line_of(lines: dict[str, int], text: str, key: str) -> int:
    return lines.get(key) or key_line(text, key) or 1


def _yaml_words(text: str, name: str) -> Words:
    tree = parse_yaml(text, name)
    lines = _key_lines(text)
    out = Words("yaml")
    if all(isinstance(k, str) and k.startswith("-") for k in tree):
        flags = tree
    elif isinstance(tree.get("MODEL_ARGS"), dict):
        flags = tree["MODEL_ARGS"]
        out.order = [str(k) for k in tree]
        for key, value in tree.items():
            if key != "MODEL_ARGS":
                out.extra[str(key)] = value
                out.extra_lines[str(key)] = _line_of(lines, text, str(key))
    else:
        first = next(iter(tree), None)
        raise InputError(
            "not Megatron arguments: no `--flag: value` keys and no MODEL_ARGS mapping of them "
            "(Megatron-LM's CI model_config.yaml)",
            file=name,
            line=key_line(text, str(first)) if first else None,
        )
    for key, value in flags.items():
        line = _line_of(lines, text, str(key))
        if not isinstance(key, str) or not key.startswith("-"):
            raise InputError(f"{key!r} is not an option (--flag)", file=name, line=line)
        out.args.append(Arg(key, key, True, name, line))
        if value is True:
            continue
        if value is False or value is None or isinstance(value, dict):
            what = "false" if value is False else "no value" if value is None else "a mapping"
            raise InputError(
                f"{key}: {what}: Megatron's CI script passes `{key} {str(value).lower()}` to argparse, which refuses "
                f"it; give a value, `true` for a flag, or remove the key",
                file=name,
                line=line,
            )
        items = value if isinstance(value, list) else [value]
        for item in items:
            out.args.extend(_yaml_value(item, name, line))
    return out


def _yaml_value(value: Any, name: str, line: int) -> list[Arg]:
    """A value as _run_training.sh passes it: unquoted, or in double quotes when it has blanks or
    parentheses (then `eval`)."""
    text = value if isinstance(value, str) else repr(value) if isinstance(value, float) else str(value)
    quoted = any(c in text for c in " |()")
    tokens = tokenize(f'"{text}"' if quoted else text, name)
    words = [t.word for t in tokens if t.kind == "word" and t.word is not None]
    out: list[Arg] = []
    expander = Expander(State(name))
    for word in words:
        for chunks in expander.fields(word, split=False) or [[]]:
            arg = to_arg(chunks, word.raw, name, line)
            arg.line = line
            out.append(arg)
    return out
