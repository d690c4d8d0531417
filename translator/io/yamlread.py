"""YAML to plain data in one bounded pass over the parser's events.

Same values as `yaml.safe_load` (the same implicit resolvers and scalar constructors), but built
here from libyaml's event stream instead of by PyYAML's composer and constructor, because:
- the C composer recurses once per nesting level and crashes the interpreter on a document
  nested ~100,000 deep; the event parser keeps its own stack, so depth is checked as we go;
- alias bombs (billion laughs), aliases into their own block, duplicate keys, tags that build
  objects and non-setting top-level keys are refused before anything large is built;
- one pass is faster than a checking pass plus compose plus construct (a batch reads thousands).
"""

from __future__ import annotations

import re
from typing import Any, Callable, NamedTuple

import yaml
from yaml.events import (
    AliasEvent,
    DocumentStartEvent,
    MappingEndEvent,
    MappingStartEvent,
    ScalarEvent,
    SequenceEndEvent,
    SequenceStartEvent,
    StreamEndEvent,
)

from ..core.ir import keep
from ..core.errors import InputError

_Parser: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

MAX_NODES = 100_000  # values in a document once every alias is expanded
MAX_DEPTH = 100  # nesting levels; real configs use fewer than ten

TAG = "tag:yaml.org,2002:"
_STR, _MERGE, _VALUE = TAG + "str", TAG + "merge", TAG + "value"
_INT, _FLOAT = TAG + "int", TAG + "float"
_PLAIN_FLOAT = re.compile(r"[-+]?[0-9]+\.[0-9]*(?:[eE][-+][0-9]+)?\Z")  # no `_`, `:`, inf or nan
_MAP, _SEQ = TAG + "map", TAG + "seq"
_REFUSED_TAGS = {"binary": "binary data", "set": "a set", "omap": "a list of pairs", "pairs": "a list of pairs"}
RESOLVERS: dict[str, list[tuple[str, Any]]] = {k: list(v) for k, v in _Parser.yaml_implicit_resolvers.items()}


def _scalar_constructors() -> dict[str, Callable[[Any, yaml.ScalarNode], Any]]:
    table: dict[str, Callable[[Any, yaml.ScalarNode], Any]] = {}
    for name in ("null", "bool", "int", "float"):
        table[TAG + name] = _Parser.yaml_constructors[TAG + name]
    # a date in a config is a run name or a path piece: keep the text (JSON has no dates)
    table[TAG + "timestamp"] = lambda loader, node: node.value
    return table


_SCALARS = _scalar_constructors()
_NO_VALUE = object()  # a mapping frame waiting for its next key


class Duplicate(NamedTuple):
    """A key given twice in one mapping, read as PyYAML reads it: the last value wins."""

    path: tuple[str, ...]  # keys from the root (a list item is its index, as text)
    first_line: int
    line: int
    shadowed: Any  # the first value, which the reader (and the framework) does not use


class _Frame:
    """A collection being built: a mapping (keys, values, merges) or a sequence (items)."""

    __slots__ = (
        "is_map",
        "anchor",
        "items",
        "key",
        "key_text",
        "lines",
        "merges",
        "size",
        "top",
        "path",
        "settings",
        "start",
    )

    def __init__(
        self,
        is_map: bool,
        anchor: str | None,
        top: bool,
        path: tuple[str, ...] | None = None,
        settings: bool = False,
        start: int = 0,
    ) -> None:
        self.is_map = is_map
        self.anchor = anchor
        self.items: Any = {} if is_map else []
        self.key: Any = _NO_VALUE
        self.key_text = ""  # the pending key as written (for key_lines)
        self.path = path  # keys from the root to this mapping, when key lines are recorded
        self.lines: dict[Any, Any] = {}  # key -> where it starts (a mark), for duplicate messages
        self.merges: list[Any] = []
        self.size = 1
        self.top = top
        self.settings = settings  # a config's mapping: every key must be text
        self.start = start  # where its opening ends in the text (for _refuse_deep)


def load(
    text: str,
    *,
    settings: bool = False,
    key_lines: dict[tuple[str, ...], int] | None = None,
    duplicates: list[Duplicate] | None = None,
) -> Any:
    """The one document in `text` as plain data (None when there is none).

    settings=True: the document is a config, so a key that YAML reads as something other than text
    (12:, ~:, true:, 1.5:) is an error at any depth rather than a silent non-setting (or a key
    rewritten as text).
    key_lines: filled with the line of every mapping key as written, by its path of written keys
    (mappings inside lists are not descended), for readers that report lines per setting.
    duplicates: a key given twice in one mapping is an error, unless this list is given: then the
    last value wins, as in the frameworks' own PyYAML loaders, and each repeat is listed here.
    Raises InputError (with a line) for what is refused, yaml.YAMLError for plain syntax errors.
    """
    parser = _Parser(text)
    frames: list[_Frame] = []
    try:
        return _build(parser, frames, settings, key_lines, duplicates)
    except yaml.MarkedYAMLError as exc:
        _refuse_deep(text, frames, exc)
        raise
    finally:
        parser.dispose()


def _refuse_deep(text: str, frames: list[_Frame], exc: yaml.MarkedYAMLError) -> None:
    """Depth is ours to check, whatever the parser's own limit: a libyaml that scans a flow
    collection ahead stops at its nesting limit before the events reach MAX_DEPTH, so on a syntax
    error the flow brackets still open between the last collection read and the error count too."""
    mark = exc.problem_mark or exc.context_mark
    if mark is None:
        return
    start = frames[-1].start if frames else 0
    depth = len(frames) + _flow_depth(text, start, mark.index)
    if depth > MAX_DEPTH:
        raise InputError(f"nested more than {MAX_DEPTH} levels deep; not a config", line=mark.line + 1) from None


def _flow_depth(text: str, start: int, end: int) -> int:
    """The deepest `[`/`{` nesting in text[start:end], outside quotes and comments."""
    depth = deepest = 0
    quote = ""
    i, end = start, min(end + 1, len(text))
    while i < end:
        char = text[i]
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth = max(0, depth - 1)
        elif char == "#" and (i == 0 or text[i - 1] in " \t\n"):
            newline = text.find("\n", i, end)
            i = end if newline < 0 else newline
        i += 1
    return deepest


def _build(
    parser: Any,
    frames: list[_Frame],
    settings: bool,
    key_lines: dict[tuple[str, ...], int] | None,
    duplicates: list[Duplicate] | None,
) -> Any:
    anchors: dict[str, tuple[Any, int]] = {}  # anchor -> (value, values it stands for)
    open_anchors: set[str] = set()
    aliased = False
    documents = 0
    root: Any = None
    get_event = parser.get_event
    while True:
        event = get_event()
        kind = type(event)
        if kind is ScalarEvent:
            # quoted text needs no resolver: the common case in JSON-style configs
            value = event.value if event.tag is None and not event.implicit[0] else _scalar(parser, event)
            size = 1
            if event.anchor:
                _fresh(event, anchors, open_anchors)
                anchors[event.anchor] = (value, 1)
        elif kind is MappingStartEvent or kind is SequenceStartEvent:
            if len(frames) >= MAX_DEPTH:
                raise InputError(f"nested more than {MAX_DEPTH} levels deep; not a config", line=_line(event))
            is_map = kind is MappingStartEvent
            _check_collection_tag(event, is_map)
            path: tuple[str, ...] | None = None
            if key_lines is not None and is_map:
                if not frames:
                    path = ()
                elif frames[-1].is_map and frames[-1].path is not None and frames[-1].key is not _NO_VALUE:
                    path = frames[-1].path + (frames[-1].key_text,)
            frames.append(_Frame(is_map, event.anchor, settings and not frames, path, settings, event.end_mark.index))
            if event.anchor:
                _fresh(event, anchors, open_anchors)
                open_anchors.add(event.anchor)
            continue
        elif kind is MappingEndEvent or kind is SequenceEndEvent:
            frame = frames.pop()
            value = _finish(frame) if frame.is_map else frame.items
            size = frame.size
            if frame.anchor:
                anchors[frame.anchor] = (value, size)
                open_anchors.discard(frame.anchor)
        elif kind is AliasEvent:
            if event.anchor in open_anchors:
                raise InputError(
                    f"alias *{event.anchor} points into its own block; a config cannot be recursive", line=_line(event)
                )
            if event.anchor not in anchors:
                raise InputError(f"invalid YAML: found undefined alias {event.anchor!r}", line=_line(event))
            value, size = anchors[event.anchor]
            aliased = True
        elif kind is DocumentStartEvent:
            documents += 1
            if documents > 1:
                raise InputError(
                    "a config is one YAML document; a second one (---) starts here: split the file", line=_line(event)
                )
            continue
        elif kind is StreamEndEvent:
            return root
        else:  # stream start, document end
            continue
        if not frames:
            _no_marker(value, event)
            root = value
            continue
        parent = frames[-1]
        parent.size += size
        if parent.size > MAX_NODES:
            how = " once aliases are expanded (an alias bomb?)" if aliased else ""
            raise InputError(f"more than {MAX_NODES} values{how}; not a config", line=_line(event))
        if not parent.is_map:
            _no_marker(value, event)
            parent.items.append(value)
        elif parent.key is _NO_VALUE:
            # a new text key needs no further checks (a top-level key that could be a date does)
            if (
                type(value) is str
                and value not in parent.lines
                and not (parent.top and value[:1].isdigit())
                and parent.path is None
            ):
                parent.lines[value] = event.start_mark
                parent.key = value
            else:
                _key(frames, event, value, key_lines, duplicates)
        elif parent.key is _MERGE_SLOT or type(value) is _Special:
            _take_value(parent, event, value)
        else:
            parent.items[parent.key] = value
            parent.key = _NO_VALUE


def _fresh(event: Any, anchors: dict[str, Any], open_anchors: set[str]) -> None:
    """An anchor is defined once: PyYAML refuses a second `&name`, other readers take the later one."""
    if event.anchor in anchors or event.anchor in open_anchors:
        raise InputError(
            f"anchor &{event.anchor} is defined twice; rename one (YAML readers differ on which an alias means)",
            line=_line(event),
        )


def _key(
    frames: list[_Frame],
    event: Any,
    value: Any,
    key_lines: dict[tuple[str, ...], int] | None,
    duplicates: list[Duplicate] | None,
) -> None:
    """`value` is the next key of the innermost mapping."""
    parent = frames[-1]
    # a new text key needs no further checks (a top-level key that could be a date does)
    if type(value) is str and value not in parent.lines and not (parent.top and value[:1].isdigit()):
        parent.lines[value] = event.start_mark
        parent.key = value
    else:
        if duplicates is not None and type(value) in (str, int, float, bool) and value in parent.lines:
            duplicates.append(_repeat(frames, event, value))
            del parent.lines[value]  # read on: the last value wins, as in PyYAML
        _take_key(parent, event, value)
    if parent.path is not None and key_lines is not None:
        parent.key_text = event.value if type(event) is ScalarEvent else str(value)
        key_lines.setdefault(parent.path + (parent.key_text,), event.start_mark.line + 1)


_RESOLVED: dict[str, str] = {}  # plain text -> its tag: the same keys and words recur in every file


def _tag_of(event: ScalarEvent) -> str:
    """The tag YAML 1.1 gives a scalar: its own, or the first implicit resolver that matches."""
    tag = event.tag
    if tag is not None and tag != "!":
        return tag  # type: ignore[no-any-return]
    if event.implicit[0]:  # no tag, or the non-specific `! 64`: resolved as yaml.safe_load resolves it (64)
        value = event.value
        known = _RESOLVED.get(value)
        if known is not None:
            return known
        resolved = _STR
        for candidate, pattern in RESOLVERS.get(value[:1], ()):
            if pattern.match(value):
                resolved = candidate
                break
        if len(value) <= 64:  # bounded: short words only, at most 10,000 of them
            keep(_RESOLVED, value, resolved, 1_000)
        return resolved
    return _STR


def _scalar(parser: Any, event: ScalarEvent) -> Any:
    value: str = event.value
    if event.tag is None and not event.implicit[0]:
        return value  # quoted: text (the common case, decided without a resolver)
    tag = _tag_of(event)
    if tag == _STR:
        return value
    if tag in (_MERGE, _VALUE):  # meaningful only as a key; see _take_key
        return _Special(tag, value)
    construct = _SCALARS.get(tag)
    if construct is None:
        raise _tag_error(tag, event)
    try:
        # the shapes configs are full of, read as SafeConstructor reads them, without building a node
        if tag == _INT and value.isdigit() and (value[0] != "0" or value == "0"):
            return int(value)
        if tag == _FLOAT and _PLAIN_FLOAT.match(value):
            return float(value)
        return construct(parser, yaml.ScalarNode(tag, value, None, None, event.style))  # marks: only for errors
    except (ValueError, OverflowError, KeyError, IndexError) as exc:  # 5000 digits; `!!bool maybe`; `!!float` alone
        why = (
            "not a YAML boolean"
            if isinstance(exc, KeyError)
            else "no value"
            if not value.strip()
            else str(exc).split(";")[0]  # the reason, not Python's advice after it
        )
        raise InputError(
            f"cannot read {_short(value)} as {tag.replace(TAG, '')}: {why}; quote it to keep it as text",
            line=_line(event),
        ) from None


class _Special(str):
    """`<<` (merge) or `=` (value) as YAML resolves them: a plain key everywhere but a mapping key."""

    tag: str

    def __new__(cls, tag: str, text: str) -> "_Special":
        made = super().__new__(cls, text)
        made.tag = tag
        return made


def _check_collection_tag(event: Any, is_map: bool) -> None:
    tag = event.tag
    if tag is None or tag == "!" or tag == (_MAP if is_map else _SEQ):
        return
    if tag in (_MAP, _SEQ):  # !!seq on a mapping, !!map on a list
        shape = "a mapping" if is_map else "a list"
        raise InputError(
            f"the YAML tag !!{tag.replace(TAG, '')} does not fit {shape}; remove the tag", line=_line(event)
        )
    raise _tag_error(tag, event)


def _tag_error(tag: str, event: Any) -> InputError:
    kind = tag.replace(TAG, "")
    if tag.startswith(TAG) and kind in _REFUSED_TAGS:
        return InputError(
            f"the YAML tag !!{kind} makes {_REFUSED_TAGS[kind]}, which no config setting takes; remove the tag",
            line=_line(event),
        )
    shown = "!!" + kind if tag.startswith(TAG) else tag
    return InputError(
        f"the YAML tag {shown} is not allowed: neoconv never builds objects from tags; remove the tag",
        line=_line(event),
    )


def _take_key(frame: _Frame, event: Any, key: Any) -> None:
    line = _line(event)
    if isinstance(key, _Special):
        if key.tag == _MERGE:
            if frame.merges:  # YAML 1.1's merge spec does not say which of two `<<` wins
                raise InputError(
                    "merge key << given twice in one mapping; YAML does not say which wins: merge both in one "
                    "list (<<: [*first, *second], the first wins)",
                    line=line,
                )
            frame.key = _MERGE_SLOT
            return
        key = str(key)  # `=` is a plain key like any other
    if frame.top:
        tag = _tag_of(event) if isinstance(event, ScalarEvent) else None
        if isinstance(key, (dict, list)):
            raise InputError("a top-level key must be a setting name, not a list or mapping", line=line)
        if not isinstance(key, str) or (tag is not None and tag != _STR):
            raise InputError(
                f"top-level key {event.value if isinstance(event, ScalarEvent) and event.value else '(empty)'} "
                f"is read as {(tag or _type_name(key)).replace(TAG, '')}, not a setting name; quote it or fix it",
                line=line,
            )
    if not isinstance(key, (str, int, float, bool)) and key is not None:
        raise InputError("a mapping key must be a plain scalar, not a list or mapping", line=line)
    if frame.settings and not isinstance(key, str):
        # a nested `1.5:` or `null:` would be written back as the text '1.5' (and split at its dot)
        raise InputError(
            f"key {event.value if isinstance(event, ScalarEvent) and event.value else '(empty)'} is read as "
            f"{_type_name(key)}, not a setting name; quote it ('{event.value if isinstance(event, ScalarEvent) else ''}':) "
            "if it is meant as text",
            line=line,
        )
    if key in frame.lines:
        raise InputError(
            f"duplicate key {key!r} (first at line {frame.lines[key].line + 1}); YAML would silently keep the last "
            "value: keep one",
            line=line,
        )
    frame.lines[key] = event.start_mark
    frame.key = key


_MERGE_SLOT = object()  # the pending key is `<<`: its value is merged, not stored


def _take_value(frame: _Frame, event: Any, value: Any) -> None:
    _no_marker(value, event)
    key, frame.key = frame.key, _NO_VALUE
    if key is not _MERGE_SLOT:
        frame.items[key] = value
        return
    # `<<: *base` or `<<: [*a, *b]`: earlier mappings in the list win, keys written here win over all
    merged = value if isinstance(value, list) else [value]
    if not all(isinstance(m, dict) for m in merged):
        raise InputError("invalid YAML: a merge (<<) takes a mapping or a list of mappings", line=_line(event))
    frame.merges.append(merged)


def _no_marker(value: Any, event: Any) -> None:
    if isinstance(value, _Special):  # yaml.safe_load refuses these as values too
        raise InputError(
            f"{value} here is YAML's {value.tag.replace(TAG, '')} marker, not a value; quote it", line=_line(event)
        )


def _repeat(frames: list[_Frame], event: Any, key: Any) -> Duplicate:
    """The repeat of `key` in the innermost mapping; ancestors' pending keys give its path."""
    path = [str(f.key) if f.is_map else str(len(f.items)) for f in frames[:-1]]
    frame = frames[-1]
    return Duplicate((*path, str(key)), frame.lines[key].line + 1, event.start_mark.line + 1, frame.items.get(key))


def _finish(frame: _Frame) -> dict[Any, Any]:
    """A mapping with its merge applied, by YAML 1.1's merge spec: a key written in the mapping wins
    over a merged one, and in `<<: [*a, *b]` a mapping earlier in the list wins over a later one.
    Order (not part of the spec; neoconv's own): merged keys first, in the list's order, then the
    mapping's own keys."""
    if not frame.merges:
        return frame.items  # type: ignore[no-any-return]
    result: dict[Any, Any] = {}
    for mapping in frame.merges[0]:
        for key, value in mapping.items():
            result.setdefault(key, value)
    result.update(frame.items)
    return result


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "bool", int: "int", float: "float"}.get(type(value), type(value).__name__)


def _line(event: Any) -> int | None:
    return event.start_mark.line + 1 if event.start_mark is not None else None


def _short(text: Any, limit: int = 40) -> str:
    shown = repr(text)
    return shown if len(shown) <= limit else shown[: limit - 4] + "...'"
