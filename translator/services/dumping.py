"""`dump`: a config document serialised in a format's own style (the library's, beside translate)."""

from __future__ import annotations

from typing import Any, Mapping

from ..core.errors import UsageError
from ..formats.spec import WriteContext, WriteResult
from ..io.documents import plain_copy
from ..knowledge.registry import get_format


def dump(config: Mapping[str, Any], fmt: str, meta: Mapping[str, Any] | None = None) -> str:
    """Serialise a config document in a format's own style, with its header comment. `meta` may give
    the header's facts: `from` (source file names), `layout`, `model_family`, `output`. What no config
    file can hold (an object, a set, a cycle; NaN or infinity in JSON) is an InputError naming the key."""
    spec = get_format(fmt)
    if not isinstance(config, Mapping):
        raise UsageError(f"dump() takes a mapping (a config document), not {type(config).__name__}")
    if meta is not None and not isinstance(meta, Mapping):
        raise UsageError(f"meta must be a mapping, not {type(meta).__name__}")
    document = plain_copy(dict(config), what="the document")
    facts = dict(meta or {})
    ctx = WriteContext(
        layout=facts.get("layout"),
        model_family=facts.get("model_family"),
        sources=str(facts.get("from") or ""),
        output=facts.get("output"),
    )
    writer = spec.load_writer()
    return writer.dump(WriteResult(document, writer.header(document, ctx)))
