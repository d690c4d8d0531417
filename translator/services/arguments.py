"""What the library and the CLI accept, checked before any file is read: file names, --set values
(against the catalogue) and translate()'s options."""

from __future__ import annotations

import os
import re
from typing import Any, Iterable, Mapping

import yaml

from ..knowledge.catalogue import catalogue
from ..core.errors import InputError, NeoconvError, UsageError, printable
from ..io.documents import parse_value, plain_copy
from ..knowledge.versions import resolve
from ..knowledge.registry import get_format


def path_arg(value: Any, what: str) -> str:
    """One file name given to the library, as a string; refused with a clear message otherwise."""
    if isinstance(value, bytes):
        raise UsageError(f"{what} is bytes: give a path (str or Path), or parse the text and give the mapping")
    if not isinstance(value, (str, os.PathLike)):
        raise UsageError(f"{what} must be a path (str or Path), not {type(value).__name__}")
    name = os.fspath(value)
    if not isinstance(name, str):
        raise UsageError(f"{what} must be a text path, not bytes")
    if not name:
        raise UsageError(f"{what} is an empty file name")
    if "\0" in name:
        raise UsageError(f"{what} {name!r} contains a NUL byte: no file has such a name")
    return name


def path_args(config: Any) -> list[str]:
    """The file names of a config given as a path or a list of paths."""
    if isinstance(config, (str, bytes, os.PathLike)):
        return [path_arg(config, "config")]
    if not isinstance(config, (list, tuple)):
        raise UsageError(f"config must be a path, a list of paths or a mapping of settings, not {type(config).__name__}")
    if not config:
        raise UsageError("no input file given")
    return [path_arg(item, f"config[{i}]") for i, item in enumerate(config)]


def split_set(assignments: Iterable[str], dst: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """`--set` strings -> (canonical values, values of keys only the target has: `DST:KEY=VALUE`)."""
    from ..knowledge.registry import FORMATS

    canonical: list[str] = []
    target: dict[str, Any] = {}
    for item in assignments:
        head, colon, rest = item.partition(":")
        if not colon or head not in FORMATS or "=" in head:
            canonical.append(item)
            continue
        if head != dst:
            raise UsageError(f"--set {item!r}: this translation writes {dst}: give {dst}:KEY=VALUE, or a canonical field")
        key, sep, text = rest.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--set {item!r}: expected {dst}:KEY=VALUE, e.g. --set {dst}:train_input.data_dir=./data")
        target[key.strip()] = _value(item, key.strip(), text)
    return parse_set(canonical), target


def _value(item: str, name: str, text: str) -> Any:
    if not text.strip():
        raise UsageError(f"--set {item!r}: no value after '='; give KEY=VALUE, e.g. --set {name}=VALUE")
    if not text.isprintable():  # a newline would start a line of settings (or swallow a comment) in the output
        raise UsageError(f"--set {printable(item)}: the value holds a control character; a value is one line of text")
    if _COMMENT.search(text):  # YAML would drop what follows ' #': a value on the command line holds no comment
        return text.strip()
    try:
        value = parse_value(text)  # bounded: a value can be an alias bomb too
    except yaml.YAMLError:
        value = text
    except NeoconvError as exc:
        raise UsageError(f"--set {name}: {exc.message}") from None
    if value is None:
        raise UsageError(f"--set {item!r}: {text.strip()} is no value; --set gives a value (leave it out to keep "
                         "what the source says)")  # fmt: skip
    return value


_COMMENT = re.compile(r"(?:^|\s)#")


def parse_set(assignments: Iterable[str]) -> dict[str, Any]:
    """`FIELD=VALUE` strings -> canonical values, checked against the catalogue."""
    values: dict[str, Any] = {}
    for item in assignments:
        name, sep, text = item.partition("=")
        name = name.strip()
        if not sep or not name:
            raise UsageError(f"--set {item!r}: expected FIELD=VALUE, e.g. --set model.vocab_size=50304")
        check_set(name, None)  # the field first: its name is the likelier mistake
        value = _value(item, name, text)
        values[name] = check_set(name, value)
    return values


def check_set(name: Any, value: Any, label: str = "--set") -> Any:
    """One canonical field's value, as --set or the library's set_values give it, checked against
    the catalogue (type, bounds, items): the checked value, or a UsageError naming the field."""
    known = catalogue()
    if not isinstance(name, str):
        raise UsageError(f"{label}: field names are strings, not {type(name).__name__} {name!r}")
    if name not in known:
        import difflib  # only for this message

        close = difflib.get_close_matches(name, list(known), n=1)
        hint = f"; did you mean {close[0]}?" if close else "; `neoconv explain --list` lists the fields"
        raise UsageError(f"{label} {name}: not a canonical field{hint}")
    try:
        if isinstance(value, (dict, list, tuple)):
            value = plain_copy({"v": value})["v"]  # bounded and plain, as a value typed on the command line is
        checked, _ = known[name].check(value)
    except InputError as exc:
        raise UsageError(f"{label} {name}: {exc.message}") from None
    except ValueError as exc:
        raise UsageError(f"{label} {name}: {exc}") from None
    return checked


# translate()'s options; source_layout and exact_format are for neoconv's own commands
OPTIONS = ("set_values", "world_size", "layout", "source_version", "target_version", "with_files", "model_config",
           "output", "verify", "target_values")  # fmt: skip
_INTERNAL = ("source_layout", "exact_format")


def check_options(src: Any, dst: Any, options: Mapping[str, Any]) -> dict[str, Any]:
    """translate()'s options checked before any file is read (the CLI's batch checks them once for
    a whole tree): the same options with set_values and world_size checked. Raises UsageError."""
    get_format(src)
    dst_spec = get_format(dst)
    unknown = [k for k in options if k not in OPTIONS and k not in _INTERNAL]
    if unknown:
        raise UsageError(f"unknown option{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}; "
                         f"translate() takes {', '.join(OPTIONS)}")  # fmt: skip
    out = dict(options)
    given = options.get("set_values")
    if given is not None:
        if not isinstance(given, Mapping):
            raise UsageError(f"set_values must be a mapping of canonical field -> value, not {type(given).__name__}"
                             " (parse 'FIELD=VALUE' strings with parse_set)")  # fmt: skip
        for name, value in given.items():
            if value is None:  # as `--set FIELD=null`: leaving the field out keeps what the source says
                check_set(name, None, "set_values")
                raise UsageError(f"set_values {name}: None is no value; leave the field out to keep what the source says")
        out["set_values"] = {name: check_set(name, value, "set_values") for name, value in given.items()}
    targets = options.get("target_values")
    if targets is not None:
        if not isinstance(targets, Mapping):
            raise UsageError(f"target_values must be a mapping of target key -> value, not {type(targets).__name__}")
        from .target_values import check_target_values

        out["target_values"] = check_target_values(dst, options.get("layout"), plain_copy(dict(targets)))
    if options.get("world_size") is not None:
        size = options["world_size"]
        if isinstance(size, bool) or not isinstance(size, int):
            raise UsageError(f"world_size must be a whole number of GPUs, not {type(size).__name__} {size!r}")
        out["world_size"] = check_set("parallel.world_size", size, "world_size")
    layout = options.get("layout")
    if layout is not None and (not isinstance(layout, str) or layout not in dst_spec.layouts):
        raise UsageError(f"--layout {layout}: {dst} layouts are {', '.join(dst_spec.layouts) or 'none'}")
    for key, fmt in (("source_version", src), ("target_version", dst)):
        if options.get(key) is not None:  # a release label or a name for one; the report shows the name given
            resolve(fmt, options[key], "--from-version" if key == "source_version" else "--to-version")
    companions = options.get("with_files")
    if companions is not None:
        if isinstance(companions, (str, bytes)) or not isinstance(companions, (list, tuple)):
            raise UsageError("with_files must be a list of (path, format) pairs")
        pairs = []
        for item in companions:
            if not (isinstance(item, (list, tuple)) and len(item) == 2):
                raise UsageError(f"with_files item {item!r} is not a (path, format) pair")
            get_format(item[1])
            pairs.append((path_arg(item[0], "with_files path"), item[1]))
        out["with_files"] = pairs
    for key in ("model_config", "output"):
        if options.get(key) is not None:
            out[key] = path_arg(options[key], key)
    if "verify" in options and not isinstance(options["verify"], bool):  # 'no' is a true value
        raise UsageError(f"verify must be True or False, not {type(options['verify']).__name__} {options['verify']!r}")
    return out
