"""Config documents in and out: YAML/JSON with line numbers, dotted keys, plain copies, dumps.

Only `yaml.safe_load` semantics are used (read by yamlread.py from the C parser's events when
libyaml is available); no tag ever constructs Python objects. Duplicate keys inside one mapping are
an error, because PyYAML would silently keep the last one and the user would lose a value without
knowing.

Reading input files: each opened once, without waiting on a FIFO, and read only when it is a
regular file (a device, a FIFO or a folder is refused with one line); a batch's sources only inside
SRC_DIR and never through a link swapped in after the walk (inputs_inside). UTF-8 text, bounded.
"""

from __future__ import annotations

import bisect
import errno
import json
import math
import os
import re
import stat
import sys
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Iterable, Iterator

import yaml

from ..core.errors import InputError, NeoconvError
from .yamlread import MAX_DEPTH, TAG, Duplicate
from .yamlread import load as load_yaml
from .yamlwrite import WIDTH
from .yamlwrite import dump as write_yaml

MAX_BYTES = 16 * 1024 * 1024  # configs are kilobytes; anything this large is not a config


def read_text(path: str | Path) -> str:
    """Read a config file as UTF-8 text, turning every OS failure into one clear InputError. The file
    is opened once and read from that descriptor, and only a regular file is read: a FIFO would block
    the run for ever and a device (/dev/zero, /dev/stdin) is no config ("-" reads standard input)."""
    name = str(path)
    if name == "-":
        data = sys.stdin.buffer.read(MAX_BYTES + 1)
    else:
        data = _read_regular(name)
    if len(data) > MAX_BYTES:
        raise InputError(f"larger than {MAX_BYTES // (1024 * 1024)} MiB; not a config file", file=name)
    if data[:4] in (b"\xff\xfe\x00\x00", b"\x00\x00\xfe\xff"):
        raise InputError("UTF-32 text; save it as UTF-8", file=name)
    if data[:2] in (b"\xff\xfe", b"\xfe\xff"):
        raise InputError("UTF-16 text; save it as UTF-8", file=name)
    if b"\0" in data:
        line = data[: data.index(b"\0")].count(b"\n") + 1
        raise InputError("binary file (contains NUL bytes); expected YAML or JSON text", file=name, line=line)
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{data[exc.start]:02x} at offset {exc.start}); save it as UTF-8",
            file=name,
            line=line,
        ) from None


# A batch reads its sources only inside SRC_DIR and never through a link (a file swapped for one after
# the walk): (the folder, files outside it the user named: --with); set by inputs_inside()
_INSIDE: ContextVar[tuple[Any, frozenset[str]] | None] = ContextVar("neoconv_inputs_inside", default=None)


@contextmanager
def inputs_inside(root: str | Path, named: Iterable[str] = ()) -> Iterator[None]:
    """Within the block, read_text() opens a file under `root` one folder at a time without following
    a link (files in `named` are read as given)."""
    from .confined import Confined

    token = _INSIDE.set((Confined(root), frozenset(os.path.abspath(n) for n in named)))
    try:
        yield
    finally:
        _INSIDE.reset(token)


def _open_input(name: str) -> int:
    # O_NONBLOCK: opening a FIFO must not wait for a writer; fstat then tells what was opened
    confined = _INSIDE.get()
    if confined is None or os.path.abspath(name) in confined[1]:
        return os.open(name, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    tree = confined[0]
    try:
        return int(tree.open_file(name))
    except NeoconvError:
        raise InputError(
            f"is outside {tree.root} or reached through a symbolic link (it changed while the batch ran?): not read",
            file=name,
        ) from None
    except OSError as exc:
        if exc.errno != errno.ELOOP:
            raise
    # a link: read the file it points to when that lies inside the tree, opened itself without a link
    real, top = os.path.realpath(name), os.path.realpath(tree.root)
    if os.path.commonpath([real, top]) != top:
        raise InputError(
            f"is a symbolic link to a file outside {tree.root} (it changed while the batch ran?): not read", file=name
        )
    try:
        return int(type(tree)(top).open_file(real))
    except NeoconvError:
        raise InputError("is reached through a symbolic link: not read", file=name) from None


def starts_with_bom(path: str) -> bool:
    """Whether a regular file starts with the UTF-8 byte order mark (read_text drops it from the text;
    an edit of the file keeps it)."""
    try:
        fd = _open_input(path)
    except (OSError, NeoconvError):
        return False
    with os.fdopen(fd, "rb") as fh:
        return stat.S_ISREG(os.fstat(fd).st_mode) and fh.read(3) == b"\xef\xbb\xbf"


def _read_regular(name: str) -> bytes:
    try:
        fd = _open_input(name)
    except IsADirectoryError:
        raise InputError("is a folder, not a config file; give the file inside it", file=name) from None
    except FileNotFoundError:
        raise InputError("no such file", file=name) from None
    except PermissionError:
        raise InputError("permission denied; check the file's permissions", file=name) from None
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read: {getattr(exc, 'strerror', None) or exc}", file=name) from None
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        os.close(fd)
        if stat.S_ISDIR(mode):
            raise InputError("is a folder, not a config file; give the file inside it", file=name)
        kind = (
            "a FIFO"
            if stat.S_ISFIFO(mode)
            else "a device"
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode)
            else "not a regular file"
        )
        raise InputError(f"is {kind}, not a config file; give a file (or - to read standard input)", file=name)
    with os.fdopen(fd, "rb") as fh:
        try:
            return fh.read(MAX_BYTES + 1)  # never more: a file growing while read stays bounded
        except OSError as exc:
            raise InputError(f"cannot read: {exc.strerror or exc}", file=name) from None


_BaseLoader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_BaseDumper: type = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

MAX_LEAVES = 100_000  # bounds alias bombs: aliases are shared, flattening would expand them


def _short(text: Any, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"


def _yaml_error(exc: yaml.YAMLError, text: str) -> InputError:
    """One line (with line and column) for anything the YAML scanner, parser or composer refused."""
    if isinstance(exc, yaml.reader.ReaderError):
        position = exc.position
        if _BaseLoader is not yaml.SafeLoader:  # libyaml counts bytes, the pure reader characters
            position = len(text.encode("utf-8")[: exc.position].decode("utf-8", "ignore"))
        line = text.count("\n", 0, position) + 1
        column = position - (text.rfind("\n", 0, position) + 1) + 1
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return InputError(
            f"invalid YAML: character U+{char:04X} is not allowed ({exc.reason})", line=line, column=column
        )
    if isinstance(exc, yaml.MarkedYAMLError):
        mark = exc.problem_mark or exc.context_mark
        problem = (exc.problem or exc.context or "invalid YAML").strip()
        found = re.search(r"constructor for the tag '([^']*)'", str(exc))
        if found:
            tag = found.group(1).replace(TAG, "!!")
            return InputError(
                f"the YAML tag {tag} is not allowed: neoconv never builds objects from tags; remove the tag",
                line=mark.line + 1 if mark else None,
            )
        if problem.startswith("but found another document"):
            return InputError(
                "a config is one YAML document; a second one (---) starts here: split the file",
                line=mark.line + 1 if mark else None,
            )
        context = ""
        if exc.context and exc.problem and exc.context_mark and mark and exc.context_mark.line != mark.line:
            context = f" ({exc.context} at line {exc.context_mark.line + 1})"
        hint = " (indent with spaces: YAML does not allow tabs)" if mark and _char_at(text, mark) == "\t" else ""
        return InputError(
            f"invalid YAML: {problem}{context}{hint}",
            line=mark.line + 1 if mark else None,
            column=mark.column + 1 if mark else None,
        )
    return InputError(f"invalid YAML: {str(exc).splitlines()[0] if str(exc) else type(exc).__name__}")


def parse_value(text: str) -> Any:
    """One YAML value as typed on a command line (--set), under the same bounds as a file.

    Raises InputError for what a file would be refused for (alias bombs, deep nesting, tags) and
    yaml.YAMLError for plain syntax errors (the caller may then take the text as it is).
    """
    return load_yaml(text)


def _char_at(text: str, mark: Any) -> str:
    lines = text.splitlines()
    line = lines[mark.line] if 0 <= mark.line < len(lines) else ""
    return line[mark.column] if 0 <= mark.column < len(line) else ""


def parse_yaml(
    text: str,
    name: str,
    key_lines: dict[tuple[str, ...], int] | None = None,
    duplicates: list[Duplicate] | None = None,
) -> dict[str, Any]:
    """Parse YAML (JSON is a subset) into a mapping of named settings, with file:line in every error.

    Bounded as it is built (see yamlread), so a hostile file costs at most one pass. A duplicate key
    is an error unless `duplicates` is given (see yamlread.load).
    """
    if not text.strip():
        raise InputError("empty file; expected a YAML mapping of settings", file=name)
    try:
        data = load_yaml(text, settings=True, key_lines=key_lines, duplicates=duplicates)
    except InputError as exc:
        exc.file = name
        raise
    except yaml.YAMLError as exc:
        error = _yaml_error(exc, text)
        if name.lower().endswith(".json"):  # read as YAML (as the frameworks do), reported as what it claims to be
            error.message = error.message.replace("invalid YAML", "invalid JSON", 1)
        error.file = name
        raise error from None
    except RecursionError:
        raise InputError(f"nested too deeply to be a config (limit {MAX_DEPTH} levels)", file=name) from None
    except UnicodeError:  # text handed in by a library caller, with lone surrogates: not real Unicode
        raise InputError("text is not valid Unicode (lone surrogate characters)", file=name) from None
    if data is None:
        raise InputError("empty document (only comments); expected a YAML mapping of settings", file=name)
    if not isinstance(data, dict):
        raise InputError(
            f"top level is {_kind(data)}, expected a mapping of settings (key: value lines)",
            file=name,
            line=_first_content_line(text),
        )
    return data


def _first_content_line(text: str) -> int:
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped and not stripped.startswith(("#", "%")) and stripped != "---":
            return number
    return 1


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    return {list: "a list", str: "a string", int: "a number", float: "a number"}.get(type(value), type(value).__name__)


def parse_json(text: str, name: str) -> dict[str, Any]:
    """Parse strict JSON, refusing duplicate keys and NaN/Infinity, with file:line:column in every error."""

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        result: dict[str, Any] = {}
        for key, value in pairs:
            if key in result:
                raise InputError(
                    f"duplicate key {key!r}; JSON readers keep only one: keep one", file=name, line=key_line(text, key)
                )
            result[key] = value
        return result

    def no_constant(word: str) -> None:
        raise InputError(
            f"{word} is not JSON (Python writes it, JSON readers refuse it); write a number",
            file=name,
            line=key_line(text, word) or _word_line(text, word),
        )

    def finite(word: str) -> float:
        value = float(word)
        if not math.isfinite(value):  # 1e999: Python reads infinity, and would write Infinity back
            raise InputError(
                f"the number {_short(word)} is past the float range (about 1.8e308); write a smaller one",
                file=name,
                line=_word_line(text, word),
            )
        return value

    if not text.strip():
        raise InputError("empty file; expected a JSON object", file=name)
    try:
        data = json.loads(text, object_pairs_hook=no_duplicates, parse_constant=no_constant, parse_float=finite)
    except json.JSONDecodeError as exc:
        raise InputError(f"invalid JSON: {exc.msg}", file=name, line=exc.lineno, column=exc.colno) from None
    except RecursionError:
        raise InputError(f"nested too deeply to be a config (limit {MAX_DEPTH} levels)", file=name) from None
    except ValueError as exc:  # an integer with more digits than Python converts
        raise InputError(f"invalid JSON: {str(exc).split(';')[0]}", file=name) from None
    try:  # "\ud800" is valid JSON syntax but no writer can encode the lone surrogate it makes
        json.dumps(data, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        raise InputError("invalid JSON: a \\u escape makes a lone surrogate, which is not text", file=name) from None
    if not isinstance(data, dict):
        raise InputError(f"top level is {_kind(data)}, expected an object of settings", file=name, line=1)
    return data


def _word_line(text: str, word: str) -> int | None:
    index = text.find(word)
    return text.count("\n", 0, index) + 1 if index >= 0 else None


def key_line(text: str, key: str) -> int | None:
    """Best-effort line number of a (dotted) key in YAML/JSON text, for error messages: each part
    of the key at or after its parent's line, a key starting a line first, then one inside a flow
    mapping ({type: Adam, params: ...}); the closest parent found when a part is not there."""
    starting, flowing = _key_lines(text)
    line_no, matched = 0, False
    for part in key.split("."):
        for index in (starting, flowing):
            lines = index.get(part)
            at = bisect.bisect_left(lines, line_no) if lines else 0
            if lines and at < len(lines):
                line_no, matched = lines[at], True
                break
        else:
            return line_no + 1 if matched else None
    return line_no + 1


# the key a line starts with ("a": / - a: / 'a' :), and the keys after a { or , on it ({a: 1, b: 2})
_STARTING_KEY = re.compile(r"""^\s*["']?(.+?)["']?\s*:""")
_FLOWING_KEY = re.compile(r"""[{,]\s*["']?([^{},:]+?)["']?\s*:""")
_KEY_LINES: dict[str, tuple[dict[str, list[int]], dict[str, list[int]]]] = {}


def _key_lines(text: str) -> tuple[dict[str, list[int]], dict[str, list[int]]]:
    """Where each key is written in a text, in one pass (key_line is asked about every key of a
    file with thousands of them); the last few texts are kept."""
    found = _KEY_LINES.get(text)
    if found is None:
        starting: dict[str, list[int]] = {}
        flowing: dict[str, list[int]] = {}
        for number, line in enumerate(text.splitlines()):
            if ":" not in line:
                continue
            head = _STARTING_KEY.match(line)
            if head:
                key = head.group(1)
                starting.setdefault(key, []).append(number)
                if key.startswith("-"):  # a list item's key (- a: 1), or a key that starts with a dash (--lr: 1)
                    item = key[1:].lstrip().lstrip("\"'")
                    if item:
                        starting.setdefault(item, []).append(number)
            if "{" in line or "," in line:
                for part in _FLOWING_KEY.findall(line):
                    flowing.setdefault(part, []).append(number)
        if len(_KEY_LINES) >= 4:
            _KEY_LINES.clear()
        found = _KEY_LINES[text] = (starting, flowing)
    return found


def flatten(tree: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Dotted leaves of a nested mapping. A list is one leaf; so is an empty mapping.

    Bounded like parsing (MAX_LEAVES, MAX_DEPTH), also for mappings built in Python (which can be
    self-referencing); a leaf spelled both as `a.b:` and as `a: {b:}` is an error, not a silent loss.
    """
    out: dict[str, Any] = {}
    dotted = False  # only a key with a dot in it can collide with a nested spelling
    stack: list[tuple[str, Iterator[tuple[Any, Any]]]] = [(prefix, iter(tree.items()))]
    while stack:  # depth first, in document order, without recursion
        base, items = stack[-1]
        for key, value in items:
            if type(key) is not str or not key or "." in key:
                name = str(key)
                if "" in name.split("."):  # '', '.x', 'x.', 'a..b': no dotted path can name it
                    raise InputError(
                        f"key {key!r} has an empty name part; name the setting", key=base.rstrip(".") or None
                    )
                dotted = dotted or "." in name
                path = base + name
            else:
                path = base + key
            if isinstance(value, dict) and value:
                if len(stack) >= MAX_DEPTH:
                    raise InputError(f"nested more than {MAX_DEPTH} levels deep; not a config", key=path)
                stack.append((path + ".", iter(value.items())))
                break
            if path in out:
                raise InputError("written both as one dotted key and as nested keys; keep one", key=path)
            out[path] = value
            if len(out) > MAX_LEAVES:
                raise InputError(f"more than {MAX_LEAVES} settings; not a config (alias bomb?)")
        else:
            stack.pop()
    if dotted:
        for path in out:  # `a.b: 1` beside `a: {b: {c: 2}}`: a.b would be both a value and a block
            parts = path.split(".")
            for i in range(1, len(parts)):
                head = ".".join(parts[:i])
                if head in out:
                    raise InputError(f"is both a value and a block (it also has {path}); keep one", key=head)
    return out


def at_path(tree: dict[str, Any], path: str) -> Any:
    """The value at a dotted path of a tree, or None where the path does not lead."""
    node: Any = tree
    for part in path.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node


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
    """Stable YAML text: document key order kept, block style, same output with C or pure dumper
    (and with yamlwrite's direct writer, which handles the common shapes faster)."""
    fast = write_yaml(data)
    if fast is not None:
        return fast
    return yaml.dump(
        data, Dumper=_PlainDumper, sort_keys=False, default_flow_style=False, allow_unicode=True, width=WIDTH
    )


def dump_json(data: dict[str, Any]) -> str:
    """JSON text; a NaN or infinity (which JSON cannot hold: Python would write NaN/Infinity, which
    JSON readers refuse) is an error naming its key, never written."""
    try:
        return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
    except ValueError:
        key, value = _non_finite(data)
        raise InputError(
            f"{value} cannot be written as JSON (JSON has no NaN or infinity): give a finite number", key=key or None
        ) from None


def _non_finite(data: Any) -> tuple[str, Any]:
    stack: list[tuple[str, Any]] = [("", data)]
    while stack:
        path, node = stack.pop()
        if isinstance(node, float) and not math.isfinite(node):
            return path, node
        if isinstance(node, dict):
            stack.extend((f"{path}.{k}" if path else str(k), v) for k, v in node.items())
        elif isinstance(node, (list, tuple)):
            stack.extend((f"{path}[{i}]", v) for i, v in enumerate(node))
    return "", "a non-finite number"


_PLAIN = (str, int, float, bool, type(None))


def plain_copy(tree: Any, *, what: str = "config") -> Any:
    """A copy of a mapping built in Python, as plain data a config file could hold (tuples become
    lists), bounded like a parsed file (depth, number of values, so cycles and shared blocks too).
    Anything else is an InputError naming the key: an object, a set, a non-string key."""
    if not isinstance(tree, dict):
        raise InputError(f"{what} must be a mapping of settings, not {_kind(tree)}")
    root: dict[str, Any] = {}
    stack: list[tuple[Any, Any, str, int]] = [(tree, root, "", 1)]
    count = 0
    while stack:
        node, copy, path, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise InputError(f"nested more than {MAX_DEPTH} levels deep (a cycle?); not a config", key=path or None)
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, value in items:
            count += 1
            if count > MAX_LEAVES:
                raise InputError(f"more than {MAX_LEAVES} values; not a config", key=path or None)
            if isinstance(node, dict) and type(key) is not str:
                raise InputError(
                    f"key {_short(key)} is {_kind(key)}, not a setting name: keys are strings", key=path or None
                )
            here = (f"{path}.{key}" if path else str(key)) if isinstance(node, dict) else f"{path}[{key}]"
            if isinstance(value, dict):
                child: Any = {}
            elif isinstance(value, (list, tuple)):
                child = [None] * len(value)
            elif isinstance(value, _PLAIN):
                child = value
            else:
                raise InputError(
                    f"{type(value).__name__} {_short(value)} is not a config value (text, numbers, "
                    "true/false, null, lists and mappings are)",
                    key=here,
                )
            copy[key] = child
            if child is not value:
                stack.append((value, child, here, depth + 1))
    return root
