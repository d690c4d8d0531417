"""The certificate: what both frameworks said of a source and its translation, as a table on the
terminal or JSON for CI, and the exit code: 0 every row equal or its difference named by the
translation's report, 1 otherwise, 2 when a side could not be run (with why)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..services.policy import EXIT_ERROR, EXIT_FAILED, EXIT_OK
from .compare import DIFFERENT, EQUAL, Row
from .runner import ProbeAnswer


@dataclass
class Side:
    file: str
    format: str
    answer: ProbeAnswer

    def to_json(self) -> dict[str, Any]:
        return {"file": self.file, "format": self.format, **self.answer.to_json()}


@dataclass
class Certificate:
    a: Side
    b: Side
    world_size: int | None
    rows: list[Row] = field(default_factory=list)
    report_file: str | None = None  # the translation's report the differences were checked against

    @property
    def could_not_run(self) -> list[str]:
        return [
            f"{name} ({s.format}, {s.file}): {s.answer.problem}"
            for name, s in (("A", self.a), ("B", self.b))
            if s.answer.problem
        ]

    @property
    def differences(self) -> list[Row]:
        return [r for r in self.rows if r.status == DIFFERENT]

    @property
    def unnamed(self) -> list[Row]:
        return [r for r in self.differences if not r.named]

    @property
    def code(self) -> int:
        if self.could_not_run:
            return EXIT_ERROR
        return EXIT_FAILED if self.unnamed else EXIT_OK

    @property
    def verdict(self) -> str:
        if self.could_not_run:
            return "not proven: " + "; ".join(self.could_not_run)
        source = self.a.answer.result or {}
        if source.get("accepted") is False:
            return f"not proven: A, the source, is refused by its own framework ({source.get('message')}): nothing to compare"
        if source.get("refused"):
            keys = ", ".join(source.get("without") or ())
            said = (
                f"A, the source, is refused by its release for {keys}, which the translation's report names unknown: "
            )
            said += "compared without them; "
        else:
            said = ""
        if not self.differences:
            return "proven: both frameworks accept the files and every figure is equal"
        if not self.unnamed:
            return f"proven: {said}{len(self.differences)} difference(s), each named by the translation's report"
        names = ", ".join(r.name for r in self.unnamed)
        why = "not named by the translation's report" if self.report_file else "no translation report given (--report)"
        return f"not proven: {said}{len(self.unnamed)} difference(s) {why}: {names}"

    def to_json(self) -> dict[str, Any]:
        return {
            "a": self.a.to_json(),
            "b": self.b.to_json(),
            "world_size": self.world_size,
            "report": self.report_file,
            "rows": [r.to_json() for r in self.rows],
            "differences": len(self.differences),
            "unnamed": len(self.unnamed),
            "verdict": self.verdict,
            "exit_code": self.code,
        }

    def summary(self) -> dict[str, Any]:
        """What a batch's per-file report keeps of it."""
        return {
            "certificate": self.verdict,
            "exit_code": self.code,
            "differences": [r.to_json() for r in self.differences],
            "could_not_run": self.could_not_run,
        }

    def render(self, *, verbose: bool = False) -> str:
        lines = [
            f"A: {self.a.file} ({self.a.format}) {_framework(self.a)}",
            f"B: {self.b.file} ({self.b.format}) {_framework(self.b)}",
        ]
        if self.world_size:
            lines.append(f"world size {self.world_size}")
        shown = [r for r in self.rows if r.core or r.status == DIFFERENT or verbose]
        width = max([len(r.name) for r in shown] + [10])
        for row in shown:
            mark = {EQUAL: "equal", DIFFERENT: "DIFFERENT"}.get(row.status, "n/a")
            if row.status == DIFFERENT and row.report is not None:
                mark += f" [report: {', '.join(row.report)}]" if row.named else " [not named by the report]"
            lines.append(f"{row.name:<{width}}  {_shown(row, 'a'):<28} {_shown(row, 'b'):<28} {mark}")
            for text in _notes(row):
                lines.append(f"{'':<{width}}  {text}")
        for name, side in (("A", self.a), ("B", self.b)):
            result = side.answer.result or {}
            ran = [s["name"] for s in result.get("stubs", ()) if s.get("calls")]
            if ran:
                lines.append(f"stand-ins {name}: {'; '.join(ran)}")
            if result.get("filled"):
                filled = ", ".join(f"{key}={item['value']!r}" for key, item in result["filled"].items())
                lines.append(
                    f'"auto" filled {name} as transformers fills it (TrainingArguments implied or default): {filled}'
                )
            for note in result.get("notes", ()) if verbose else ():
                lines.append(f"note {name}: {note}")
        lines.append(self.verdict)
        return "\n".join(lines) + "\n"


def _framework(side: Side) -> str:
    result = side.answer.result
    if not result:
        return "- not run"
    fw = result.get("framework") or {}
    version = fw.get("version") or (f"source {fw['source']}" if fw.get("source") else "version unknown")
    return f"- {fw.get('name', side.format)} {version}"


def _number(value: Any) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        return f"{value:.6g}"
    return "-" if value is None else str(value)


def _shown(row: Row, side: str) -> str:
    value = getattr(row, side)
    if row.name == "learning rate" and isinstance(value, dict):
        return f"peak {value['peak']:.4g}, {value['steps']} steps"
    if row.name == "parameters" and isinstance(row.detail.get(side), dict):
        count = row.detail[side]
        if count.get("total") is None:
            return f"{count['without_vocab']:,} + {count['per_vocab_row']:,}/row"
    return _number(value)


def _notes(row: Row) -> list[str]:
    out = []
    if row.name == "learning rate" and row.detail:
        d = row.detail
        out.append(
            f"{d['compared_steps']} steps compared: largest difference {d['max_difference_of_peak']:.3g} of the peak "
            f"at step {d['max_difference_step']} ({d['a_at_step']:.6g} vs {d['b_at_step']:.6g}); "
            f"largest relative {d['max_relative']:.3g} at step {d['max_relative_step']}"
        )
    if row.note:
        out.append(row.note)
    if row.exceeds:
        out.append(row.exceeds)
    return out
