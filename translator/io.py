"""Safe reading and writing: YAML/JSON with line numbers, dotted keys, atomic output files.

Only `yaml.safe_load` semantics are used (the C loader when available); no tag ever constructs
Python objects. Duplicate keys inside one mapping are an error, because PyYAML would silently
keep the last one and the user would lose a value without knowing.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import yaml

from .errors import InputError, OutputError

_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

MAX_BYTES = 16 * 1024 * 1024  # configs are kilobytes; anything this large is not a config
MAX_LEAVES = 100_000  # bounds alias bombs: aliases are shared, flattening would expand them


class _StrictLoader(_BaseLoader):  # type: ignore[misc, valid-type]
    """Safe loader that refuses duplicate keys in a mapping."""


def _construct_mapping(loader: Any, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
    loader.flatten_mapping(node)
    seen: dict[Any, int] = {}
    result: dict[Any, Any] = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if not isinstance(key, (str, int, float, bool)) and key is not None:
            raise InputError(
                "a mapping key must be a plain scalar", line=key_node.start_mark.line + 1
            )
        if key in seen:
            raise InputError(
                f"duplicate key {key!r} (first at line {seen[key]}); YAML would silently keep "
                "the last value: keep one",
                line=key_node.start_mark.line + 1,
            )
        seen[key] = key_node.start_mark.line + 1
        result[key] = loader.construct_object(value_node, deep=deep)
    return result


_StrictLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_text(path: str | Path) -> str:
    """Read a config file as UTF-8 text, turning every OS failure into one clear InputError."""
    name = str(path)
    if name == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        p = Path(path)
        if p.is_dir():
            raise InputError("is a folder, not a config file", file=name)
        try:
            with open(p, "rb") as fh:
                data = fh.read(MAX_BYTES + 1)
        except FileNotFoundError:
            raise InputError("no such file", file=name) from None
        except PermissionError:
            raise InputError("permission denied", file=name) from None
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=name) from None
    if len(data) > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB; not a config file", file=name)
    if b"\0" in data:
        raise InputError("binary file (contains NUL bytes); expected YAML or JSON text", file=name)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"not UTF-8 text (bad byte at offset {exc.start}); save it as UTF-8", file=name
        ) from None


def parse_yaml(text: str, name: str) -> dict[str, Any]:
    """Parse YAML (JSON is a subset) into a mapping, with file:line in every error."""
    if not text.strip():
        raise InputError("empty file; expected a YAML mapping of settings", file=name)
    try:
        data = yaml.load(text, Loader=_StrictLoader)  # noqa: S506 - a SafeLoader subclass
    except InputError as exc:
        exc.file = name
        raise
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        problem = exc.problem or exc.context or "invalid YAML"
        if "could not determine a constructor" in str(exc):
            problem = "YAML tag that constructs objects is not allowed; remove the tag"
        raise InputError(f"invalid YAML: {problem}", file=name, line=line) from None
    except yaml.YAMLError as exc:
        raise InputError(f"invalid YAML: {exc}", file=name) from None
    except RecursionError:
        raise InputError("nested too deeply to be a config", file=name) from None
    if data is None:
        raise InputError("empty document; expected a YAML mapping of settings", file=name)
    if not isinstance(data, dict):
        kind = type(data).__name__
        raise InputError(f"top level is a {kind}, expected a mapping of settings", file=name, line=1)
    return data


def parse_json(text: str, name: str) -> dict[str, Any]:
    """Parse strict JSON, refusing duplicate keys, with file:line in every error."""

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise InputError(f"duplicate key {key!r}; keep one", file=name, line=key_line(text, key))
            result[key] = value
        return result

    if not text.strip():
        raise InputError("empty file; expected a JSON object", file=name)
    try:
        data = json.loads(text, object_pairs_hook=no_duplicates)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=name, line=exc.lineno) from None
    except RecursionError:
        raise InputError("nested too deeply to be a config", file=name) from None
    if not isinstance(data, dict):
        raise InputError(f"top level is a {type(data).__name__}, expected an object", file=name, line=1)
    return data


def key_line(text: str, key: str) -> int | None:
    """Best-effort line number of a (dotted) key in YAML/JSON text, for error messages."""
    line_no = 0
    lines = text.splitlines()
    for part in key.split("."):
        pattern = re.compile(r"^\s*(?:-\s*)?[\"']?" + re.escape(part) + r"[\"']?\s*:")
        for i in range(line_no, len(lines)):
            if pattern.search(lines[i]):
                line_no = i
                break
        else:
            return line_no + 1 if line_no else None
    return line_no + 1


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted leaves of a nested mapping. A list is one leaf; so is an empty mapping."""
    out: dict[str, Any] = {}
    stack: list[tuple[str, dict[str, Any]]] = [(prefix, tree)]
    while stack:
        base, node = stack.pop()
        for key, value in node.items():
            path = f"{base}{key}"
            if isinstance(value, dict) and value:
                stack.append((path + ".", value))
            else:
                out[path] = value
                if len(out) > MAX_LEAVES:
                    raise InputError(f"more than {MAX_LEAVES} settings; not a config (alias bomb?)")
    # restore document order (the stack visits nested blocks last)
    order = {k: i for i, k in enumerate(_walk_order(tree, prefix))}
    return dict(sorted(out.items(), key=lambda kv: order.get(kv[0], 0)))


def _walk_order(tree: dict[str, Any], prefix: str) -> Iterator[str]:
    for key, value in tree.items():
        path = f"{prefix}{key}"
        if isinstance(value, dict) and value:
            yield from _walk_order(value, path + ".")
        else:
            yield path


def unflatten(leaves: dict[str, Any]) -> dict[str, Any]:
    """Nested mapping from dotted leaves, keeping first-seen order."""
    root: dict[str, Any] = {}
    for path, value in leaves.items():
        node = root
        parts = path.split(".")
        for part in parts[:-1]:
            child = node.setdefault(part, {})
            if not isinstance(child, dict):
                raise ValueError(f"{path}: parent {part!r} is already a value")
            node = child
        node[parts[-1]] = value
    return root


class _PlainDumper(_BaseDumper):  # type: ignore[misc, valid-type]
    """Never writes anchors/aliases: every value is spelled out where it is used."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def dump_yaml(data: dict[str, Any]) -> str:
    """Stable YAML text: document key order kept, block style, same output with C or pure dumper."""
    return yaml.dump(
        data, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=100
    )


def dump_json(data: dict[str, Any]) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def write_atomic(path: str | Path, text: str, *, inputs: list[str] | tuple[str, ...] = ()) -> None:
    """Write via a temp file in the same folder and rename, so no reader ever sees half a file."""
    target = Path(path)
    for src in inputs:
        if src != "-" and Path(src).exists() and target.exists() and os.path.samefile(src, target):
            raise OutputError("refusing to overwrite the input file; choose another -o", file=str(path))
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.is_dir():
        raise OutputError("output folder does not exist; create it first", file=str(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise OutputError(f"cannot write here: {exc.strerror or exc}", file=str(path)) from None
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
