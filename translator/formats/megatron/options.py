"""Megatron-LM's options as its argparse parser defines them (schemas/megatron.schema.json, generated
from the parsers of every release), and the parse of a word list into argparse's namespace.

The namespace is keyed by `dest`, as Megatron's is: `--disable-bias-linear` sets `add_bias_linear`
to False, `--norm-epsilon` and the older `--layernorm-epsilon` set `layernorm_epsilon`. Every
spelling any release parsed is accepted (an old file means what its option meant: the mapping
table reads old dests under their old meaning); one no release ever parsed is unknown, its values
the words up to the next option. As argparse does (CPython 3.11): `--flag=value` splits at the
first `=`; a word starting with `-` is a value only when it looks like a negative number
(`-1`, `-.5`; not `-1e-5`); a repeated option overwrites the earlier one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from ...core.errors import InputError
from .words import Arg

_NEGATIVE = re.compile(r"^-\d+$|^-\d*\.\d+$")


@dataclass(frozen=True)
class Option:
    name: str  # --norm-epsilon
    dest: str
    action: str  # store | store_true | store_false | boolean_optional
    arity: str  # 0, 1, 3, 0+, 1+
    argtype: str  # int | float | str | bool | enum-name | tuple_type | moe_freq_type | ...
    first: str
    last: str
    absent: tuple[str, ...] = ()
    older_types: tuple[tuple[str, str], ...] = ()  # (tag, argparse type it had there)

    def flag_value(self) -> bool:
        if self.action == "store_false":
            return False
        if self.action == "boolean_optional":
            return not self.name.startswith("--no-")
        return True


@dataclass(frozen=True)
class OptionTable:
    options: dict[str, Option]
    dests: dict[str, dict[str, Any]]  # dest -> its schema node
    tags: tuple[str, ...]
    versions: dict[str, tuple[str, str]]  # label -> (first tag, last tag)

    def parses(self, option: Option, version: str) -> bool:
        """The option exists at every release of a version label."""
        first, last = self.versions.get(version, self.versions["current"])
        lo, hi = self.tags.index(first), self.tags.index(last)
        if self.tags.index(option.first) > lo or self.tags.index(option.last) < hi:
            return False
        return not any(lo <= self.tags.index(t) <= hi for t in option.absent)

    def spellings(self, dest: str) -> list[Option]:
        """The options that set a dest: newest first, then the one more releases parse."""
        found = [self.options[name] for name in self.dests.get(dest, {}).get("x-options", {})]
        return sorted(found, key=lambda o: (-self.tags.index(o.last), self.tags.index(o.first), o.name))

    def default(self, dest: str) -> Any:
        return self.dests.get(dest, {}).get("default")


@lru_cache(maxsize=None)
def table() -> OptionTable:
    from ...knowledge.schema import load_schema

    schema = load_schema("megatron")
    options: dict[str, Option] = {}
    for dest, node in schema["properties"].items():
        for name, spec in node.get("x-options", {}).items():
            options[name] = Option(
                name,
                dest,
                spec["action"],
                spec["arity"],
                spec["argtype"],
                spec["first"],
                spec["last"],
                tuple(spec.get("absent", ())),
                tuple(spec.get("older_types", {}).items()),
            )
    versions = {label: (first, last) for label, first, last in schema["x-versions"]}  # newest first
    return OptionTable(options, schema["properties"], tuple(schema["x-tags"]), versions)


def dest_of(option: str) -> str | None:
    found = table().options.get(option.partition("=")[0])
    return found.dest if found is not None else None


def unknown_dest(option: str) -> str:
    """The namespace key of an option no release parsed, as argparse would name its dest."""
    return option.lstrip("-").replace("-", "_") or "-"


def looks_like_option(word: Arg) -> bool:
    """argparse's test (CPython 3.11 _parse_optional): starts with '-', is not a lone '-', not a
    negative number, and has no blank. An unresolved word is a value (its text is unknown)."""
    text = word.text
    if not word.resolved:
        return option_with_unknown_value(word)
    if not text.startswith("-") or len(text) < 2:
        return False
    if text.partition("=")[0] in table().options:
        return True
    return not _NEGATIVE.match(text) and " " not in text


_OPTION_EQ = re.compile(r"--?[A-Za-z][\w.-]*=")


def option_with_unknown_value(word: Arg) -> bool:
    """`--lr=$LR`: an option the file writes as it is, with a value not known here."""
    return not word.resolved and _OPTION_EQ.match(word.text[: word.literal]) is not None


@dataclass
class Namespace:
    """What the words set: dest -> value, and for each dest where and how it was written."""

    values: dict[str, Any] = field(default_factory=dict)
    written: dict[str, str] = field(default_factory=dict)  # dest -> the option as written
    origins: dict[str, tuple[str, int]] = field(default_factory=dict)  # dest -> (file, line)
    notes: dict[str, str] = field(default_factory=dict)
    unresolved: dict[str, str] = field(default_factory=dict)  # dest -> why its value is unknown
    words: dict[str, list[str]] = field(default_factory=dict)  # dest -> its value words as written
    unknown: set[str] = field(default_factory=set)  # dests of options no release parsed
    loose: list[Arg] = field(default_factory=list)  # words not known here where an option is expected
    foreign: dict[str, str] = field(default_factory=dict)  # dest -> its value no release takes (a fork's?)


def parse(args: list[Arg]) -> Namespace:
    out = Namespace()
    known = table().options
    i = 0
    last: tuple[Option, str] | None = None  # the known option read last, and its spelling
    while i < len(args):
        word = args[i]
        i += 1
        if not word.resolved and not option_with_unknown_value(word):  # its words (options or values): named, not read
            out.loose.append(word)
            continue
        if not looks_like_option(word):
            if last is None:
                raise InputError(
                    f"{word.raw}: a value no option takes where an option is expected (argparse: unrecognized arguments)",
                    file=word.file,
                    line=word.line,
                )
            i = _more_values(out, last, word, args, i)
            continue
        name, eq, attached = word.text.partition("=")
        written = word.raw.partition("=")[2] if not word.resolved and word.raw.startswith(name + "=") else attached
        option = known.get(name)
        if option is None and "_" in name and known.get(name.replace("_", "-")) is not None:
            option = known[name.replace("_", "-")]  # a fork's spelling of the same option (Megatron-LLM's --seq_length)
            word.note = _join(word.note, f"{name} is a fork's spelling (Megatron-LLM's) of {option.name}: read as it")
        if option is None:
            values = [Arg(attached, written, word.resolved, word.file, word.line, why=word.why)] if eq else []
            # a word not known here is its value only if it has none yet: after one (`--fork-opt X
            # $EXTRA_ARGS`) it is the script's words, which may be options (named where loose ones are)
            while i < len(args) and not looks_like_option(args[i]) and (args[i].resolved or not values):
                values.append(args[i])
                i += 1
            dest = unknown_dest(name)
            if dest in table().dests:  # --lr_x-y: no option, but its argparse name is a known dest's
                dest = name
            out.unknown.add(dest)
            shown = [v.text if v.resolved else v.raw for v in values]  # a word not known here: as the file writes it
            value: Any = True if not values else shown[0] if len(values) == 1 else shown
            _store(out, dest, name, value, values, word)
            continue
        values, i = _take(option, word, eq, attached, written, args, i)
        last = (option, name)
        if option.arity == "0":
            _store(out, option.dest, name, option.flag_value(), [], word)
            continue
        split = _split_value(option, values, args, i)
        if split:  # one shell word bash splits into words argparse refuses: the value meant is not known
            i += len(split)
            whole = " ".join(v.text for v in values + split)
            _store(out, option.dest, name, whole, values + split, word)
            source = f" (from {values[0].word})" if values[0].word and values[0].word != whole else ""
            out.unresolved[option.dest] = (
                f"{name} {whole!r}{source}: a value with blanks, which bash passes as {len(split) + 1} words and "
                "Megatron's argparse refuses: a placeholder to fill in?"
            )
            continue
        typed = [_typed(option, v) for v in values]
        single = option.arity == "1"
        _store(out, option.dest, name, typed[0] if single else typed, values, word)
        out.foreign.pop(option.dest, None)
        strange = [v for v, w in zip(typed, values) if w.resolved and not _a_choice(option, v)]
        if strange:
            choices = _choices(option)
            out.foreign[option.dest] = (
                f"{name} {strange[0]}: not a choice of any Megatron-LM release "
                f"({', '.join(map(str, choices))}): a fork's value?"
            )
        if option.last != "HEAD":
            out.notes[option.dest] = _join(out.notes.get(option.dest, ""), _removed(option))
    return out


def _more_values(out: Namespace, last: tuple[Option, str], word: Arg, args: list[Arg], i: int) -> int:
    """Words after an option's values that no option takes (Megatron-DeepSpeed's `--num-experts 64 64
    128`): upstream's argparse refuses them, a fork reads them as the option's: kept with it, named."""
    option, name = last
    extra = [word]
    while i < len(args) and args[i].resolved and not looks_like_option(args[i]):
        extra.append(args[i])
        i += 1
    before = out.words.get(option.dest, [])
    words = [*before, *(w.text for w in extra)]
    takes = {"0": "no value", "1": "one value", "3": "three values"}.get(option.arity, "values")
    out.values[option.dest] = words
    out.words[option.dest] = [*before, *(w.raw for w in extra)]
    out.foreign[option.dest] = (
        f"{name} {' '.join(words)}: Megatron-LM's {name} takes {takes}, its argparse refuses "
        f"{' '.join(w.text for w in extra)}: a fork's?"
    )
    return i


def _split_value(option: Option, values: list[Arg], args: list[Arg], i: int) -> list[Arg]:
    """The words after a one-word value that came from the same shell word (`--save $DIR` with DIR="your
    checkpoint path"): bash passes them as words of their own."""
    if option.arity != "1" or not values or values[0].group < 0 or not values[0].resolved:
        return []
    out: list[Arg] = []
    while i < len(args) and args[i].group == values[0].group and args[i].resolved and not looks_like_option(args[i]):
        out.append(args[i])
        i += 1
    return out


def _take(
    option: Option, word: Arg, eq: str, attached: str, written: str, args: list[Arg], i: int
) -> tuple[list[Arg], int]:
    """The value words an option consumes (argparse's nargs); `written`: the attached value as the file writes it."""
    file, line = word.file, word.line
    if option.arity == "0":
        if eq:
            raise InputError(
                f"argument {option.name}: ignored explicit argument {attached!r} (a flag takes no value)",
                file=file,
                line=line,
            )
        return [], i
    values = [Arg(attached, written, word.resolved, word.file, word.line, word.note, word.why)] if eq else []
    need = {"1": 1, "3": 3}.get(option.arity)
    while i < len(args) and not looks_like_option(args[i]) and (need is None or len(values) < need):
        values.append(args[i])
        i += 1
    if need is not None and len(values) < need:
        wanted = "one argument" if need == 1 else f"{need} arguments"
        raise InputError(f"argument {option.name}: expected {wanted}", file=file, line=line)
    if option.arity == "1+" and not values:
        raise InputError(f"argument {option.name}: expected at least one argument", file=file, line=line)
    return values, i


def _typed(option: Option, word: Arg) -> Any:
    """A value word as the option's argparse type makes it (an unresolved word stays its source text);
    a word only an older release's type takes (v1.0's --warmup 0.01) is read as that release did."""
    if not word.resolved:
        return word.raw
    try:
        return _converted(option, word, option.argtype)
    except InputError:
        for tag, kind in option.older_types:
            try:
                value = _converted(option, word, kind)
            except InputError:
                continue
            word.note = _join(word.note, f"read as {kind} as Megatron-LM {tag} did (later releases refuse it)")
            return value
        raise


def _converted(option: Option, word: Arg, kind: str) -> Any:
    text = word.text
    try:
        if kind == "int":
            value: Any = int(text)
        elif kind == "float":
            value = float(text)
        elif kind == "bool":
            value = bool(text)  # argparse's type=bool: any non-empty text is True
        elif kind in ("moe_freq_type", "la_freq_type", "no_rope_freq_type") and "[" not in text:
            value = int(text)
        elif kind == "tuple_type":
            tuple(int(x) for x in text.strip("()").split(","))
            value = text
        else:
            value = text
    except ValueError:
        shown = {"int": "int", "float": "float"}.get(kind, kind)
        raise InputError(
            f"argument {option.name}: invalid {shown} value: {text!r}", file=word.file, line=word.line
        ) from None
    return value


def _choices(option: Option) -> list[Any]:
    node = table().dests.get(option.dest, {})
    return list(node.get("enum") or node.get("items", {}).get("enum") or ())


def _a_choice(option: Option, value: Any) -> bool:
    """A value some release's argparse takes (`choices`); any value of an option without choices."""
    choices = _choices(option)
    return not choices or value in choices  # argparse checks the converted value: 7 against range(0, 3)


def _store(out: Namespace, dest: str, name: str, value: Any, values: list[Arg], word: Arg) -> None:
    if dest in out.values:
        before = " ".join([out.written[dest], *out.words.get(dest, [])])
        out.notes[dest] = f"also given at line {out.origins[dest][1]} ({before}); argparse keeps the last"
        out.unresolved.pop(dest, None)
    out.values[dest] = value
    out.written[dest] = name
    out.origins[dest] = (word.file, word.line)
    out.words[dest] = [v.raw for v in values]
    notes = [v.note for v in (word, *values) if v.note]
    if notes:
        out.notes[dest] = _join(out.notes.get(dest, ""), *dict.fromkeys(notes))
    hidden = [v for v in values if not v.resolved]
    if hidden:
        out.unresolved[dest] = _unresolved(name, hidden)


def _unresolved(name: str, words: list[Arg]) -> str:
    shown = " ".join(w.raw for w in words)
    why = "; ".join(dict.fromkeys(w.why for w in words if w.why))
    return f"{name} {shown}: " + (f"not known here ({why})" if why else "a shell expression, unknown here")


def _removed(option: Option) -> str:
    tags = table().tags
    after = tags[tags.index(option.last) + 1]
    return (
        f"{option.name} is an option of Megatron-LM {option.first} to {option.last} only ({after} and later refuse it)"
    )


def _join(*parts: str) -> str:
    return "; ".join(p for p in parts if p)


def since(version: str, label: str) -> bool:
    """A version label is `label` or newer (the schema lists its labels newest first)."""
    labels = list(table().versions)
    return labels.index(version if version in labels else labels[0]) <= labels.index(label)
