"""The Source of a VeOmni config: its leaves come from several files (YAML, option files, config.json)."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...knowledge.source import Source


@dataclass
class VeomniSource(Source):
    """A Source whose leaves come from several files (YAML, option files, config.json)."""

    origins: dict[str, tuple[str, int | None]] = field(default_factory=dict)  # view leaf -> (file, line)
    # block -> the origin of its first leaf, and how many origins that was built from (the engine
    # asks once per rule; origins grow while the reader attaches config.json)
    _blocks: tuple[int, dict[str, tuple[str, int | None]]] = field(default=(-1, {}), repr=False)

    def _origin(self, leaf: str) -> tuple[str, int | None] | None:
        if leaf in self.origins:
            return self.origins[leaf]
        if self._blocks[0] != len(self.origins):
            blocks: dict[str, tuple[str, int | None]] = {}
            for key, origin in self.origins.items():
                parts = key.split(".")
                for i in range(1, len(parts)):
                    blocks.setdefault(".".join(parts[:i]), origin)
            self._blocks = (len(self.origins), blocks)
        return self._blocks[1].get(leaf)

    def file_of(self, leaf: str) -> str | None:
        origin = self._origin(leaf)
        return origin[0] if origin else super().file_of(leaf)

    def line_of(self, leaf: str) -> int | None:
        origin = self._origin(leaf)
        return origin[1] if origin else None
