"""Format-preserving rewrites: a migrated config keeps the source's comments and formatting.

    >>> from translator import translate
    >>> from translator.preserve import moves_from_report, preserve
    >>> t = translate(path, "veomni", "veomni", layout="nested")
    >>> text = open(path).read()
    >>> rewrite = preserve(text, t.config, moves_from_report(t.report), "yaml", plain=t.dump)

`rewrite.text` loads to exactly `t.config`; `rewrite.preserved` is False (and `rewrite.note` says
why) when the plain dump had to be used instead.
"""

from __future__ import annotations

from .rewrite import Rewrite, moves_from_report, preserve

__all__ = ["Rewrite", "moves_from_report", "preserve"]
