"""Format-preserving rewrites: a migrated config keeps the source's comments and formatting.

    >>> from translator import translate
    >>> from translator.preserve import moves_from_report, preserve
    >>> t = translate(path, "veomni", "veomni", layout="nested")
    >>> rewrite = preserve(source_text, t.config, moves_from_report(t.report), "yaml", plain=t.dump)

`rewrite.text` loads (yaml.safe_load / json.loads) to exactly `t.config`; `rewrite.preserved` is
False, and `rewrite.note` says why, when the plain dump (`plain`) had to be written instead;
`rewrite.dropped_comments` are the comments that went with removed keys.

How: the source is read with PyYAML's positions into a tree of entries, each owning its lines
(yamlsource); a plan says which source entry each target entry comes from (plan: the report's
moves, then mappings by vote, then same paths); the output copies the lines of every entry whose
value is unchanged, shifted as a block when it moved, edits changed values on their own line and
writes only new things fresh (yamlrender; JSON: jsonedit). The result is loaded again and compared
with the target; any difference means the plain dump.

Not ruamel.yaml's round-trip dump: on the shared corpus it changes 75 of 98 legacy files with no
edit at all (True -> true, `key :` -> `key:`, trailing spaces, mixed list indents, anchors), so
every diff would touch unchanged lines; editing the source's own lines keeps every unchanged byte.
"""

from __future__ import annotations

from .rewrite import Rewrite, moves_from_report, preserve

__all__ = ["Rewrite", "moves_from_report", "preserve"]
