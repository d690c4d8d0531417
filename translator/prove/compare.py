"""Two probes' answers side by side: accepted or refused, the learning rate at every step both
recorded, the global batch and tokens per step, the run's steps, the parameter count, and the
rest of the resolved run; each difference marked as named by the translation's report or not.

A number is equal within `rtol`; two learning rate curves are equal when no step differs by more
than `rtol` of the larger peak (Model Zoo computes rates in float32: ~1e-7 of the peak).
"""

from __future__ import annotations

import fnmatch
import math
from dataclasses import dataclass, field
from typing import Any

from ..core.ir import DEFAULT_RTOL

EQUAL, DIFFERENT, NOT_COMPARED = "equal", "different", "n/a"
# report statuses that name a difference: something lost, or a value the user gave (--set)
NAMING = frozenset({"lossy", "dropped", "missing", "unknown", "set"})

LOSSES = NAMING - {"set"}
DP = ("parallel.world_size", "parallel.data_parallel_size")
# row -> (probe section, key, its own canonical fields, fields it follows from). A difference is named
# by an entry of its own fields that says lossy, dropped, missing, unknown or --set, or by an entry of
# a field it follows from that says it was lost. A global batch a translation must keep is named by
# its own entries only (a data-parallel size dropped for a target without GPUs names no batch change).
RUN_ROWS: tuple[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("global batch", "run", "global_batch", ("batch.global",), ()),
    ("tokens per step", "run", "tokens_per_step", ("batch.global", "model.seq_length"), ()),
    ("steps", "run", "steps", ("train.steps", "train.epochs"), ()),
)
DETAIL_ROWS: tuple[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], ...] = (
    ("micro batch", "run", "micro_batch", ("batch.micro",), ()),
    ("accumulation", "run", "accumulation", ("batch.grad_accum",), ("batch.micro", "batch.global")),
    (
        "data-parallel size",
        "run",
        "data_parallel",
        DP,
        ("parallel.tensor_size", "parallel.pipeline_size", "parallel.sequence_size"),
    ),
    ("sequence length", "run", "seq_length", ("model.seq_length",), ()),
    ("precision", "run", "precision", ("precision.dtype",), ()),
    ("ZeRO stage", "run", "zero_stage", ("parallel.zero_stage",), ()),
    ("tensor parallel", "run", "tensor_parallel", ("parallel.tensor_size",), ()),
    ("pipeline parallel", "run", "pipeline_parallel", ("parallel.pipeline_size",), ()),
    ("layers", "model", "num_layers", ("model.num_layers",), ()),
    ("hidden size", "model", "hidden_size", ("model.hidden_size",), ()),
    ("attention heads", "model", "num_heads", ("model.num_heads",), ()),
    ("key/value heads", "model", "num_kv_heads", ("model.num_kv_heads",), ("model.attention_kind",)),
    ("MLP width", "model", "ffn_hidden_size", ("model.ffn_hidden_size",), ("model.activation",)),
    ("vocabulary", "model", "vocab_size", ("model.vocab_size",), ()),
    ("max positions", "model", "max_position_embeddings", ("model.max_position_embeddings",), ()),
)
LR_FIELDS = ("optim.lr", "schedule.*")
LR_FOLLOWS = ("train.steps", "batch.warmup_ratio")
PARAMETER_FIELDS = (
    "model.family",
    "model.num_layers",
    "model.hidden_size",
    "model.num_heads",
    "model.num_kv_heads",
    "model.head_dim",
    "model.ffn_hidden_size",
    "model.vocab_size",
    "model.max_position_embeddings",
    "model.position_embedding",
    "model.tie_embeddings",
    "model.norm",
    "model.activation",
    "model.*bias",
    "model.parallel_residual",
    "model.parallel_shared_norm",
    "model.*_norm",
    "model.qk_norm*",
    "model.attention_kind",
    "model.mla_*",
    "model.moe_*",
)


@dataclass
class Row:
    name: str
    a: Any
    b: Any
    status: str  # equal | different | n/a
    note: str = ""  # why not compared, or what differs
    fields: tuple[str, ...] = ()  # its own canonical fields (patterns)
    report: tuple[str, ...] | None = None  # what the report says of them and of what it follows from (None: no report)
    follows: tuple[str, ...] = ()  # the fields it follows from, whose losses name a difference too
    detail: dict[str, Any] = field(default_factory=dict)
    core: bool = True  # one of the figures of the certificate (the others: the rest of the resolved run)

    @property
    def named(self) -> bool:
        return bool(self.report and NAMING & set(self.report))

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "a": self.a, "b": self.b, "status": self.status}
        if self.note:
            out["note"] = self.note
        if self.status == DIFFERENT:
            out["named"] = self.named
            out["report"] = list(self.report) if self.report is not None else None
        if self.detail:
            out["detail"] = self.detail
        return out


def _close(a: Any, b: Any, rtol: float) -> bool:
    if isinstance(a, bool) or isinstance(b, bool) or not isinstance(a, (int, float)) or not isinstance(b, (int, float)):
        return bool(a == b)
    return math.isclose(a, b, rel_tol=rtol, abs_tol=0.0)


def value_row(
    name: str,
    a: Any,
    b: Any,
    fields: tuple[str, ...],
    follows: tuple[str, ...],
    rtol: float,
    *,
    core: bool = True,
    why_a: str = "",
    why_b: str = "",
) -> Row:
    if a is None and b is None:
        return Row(name, a, b, NOT_COMPARED, "neither side gives a value", fields, follows=follows, core=core)
    if a is None or b is None:
        why = (why_a or "A has no value") if a is None else (why_b or "B has no value")
        return Row(name, a, b, NOT_COMPARED, why, fields, follows=follows, core=core)
    return Row(name, a, b, EQUAL if _close(a, b, rtol) else DIFFERENT, "", fields, follows=follows, core=core)


def lr_row(a: dict[str, Any] | None, b: dict[str, Any] | None, rtol: float) -> Row:
    """The learning rates both probes recorded, step by step."""
    if not a or not b:
        side = "A" if not a else "B"
        return Row(
            "learning rate",
            _lr_summary(a),
            _lr_summary(b),
            NOT_COMPARED,
            f"{side} has no learning rate curve",
            LR_FIELDS,
            follows=LR_FOLLOWS,
        )
    if a.get("relative") != b.get("relative"):
        side = "A" if a.get("relative") else "B"
        return Row(
            "learning rate",
            _lr_summary(a),
            _lr_summary(b),
            NOT_COMPARED,
            f"{side}'s rates are factors of a learning rate the file does not hold",
            LR_FIELDS,
            follows=LR_FOLLOWS,
        )
    va = dict(zip(a["steps"], a["values"]))
    vb = dict(zip(b["steps"], b["values"]))
    common = sorted(va.keys() & vb.keys())
    if not common:
        return Row(
            "learning rate",
            _lr_summary(a),
            _lr_summary(b),
            NOT_COMPARED,
            "no step recorded on both sides",
            LR_FIELDS,
            follows=LR_FOLLOWS,
        )
    peak = max(max((abs(v) for v in va.values()), default=0.0), max((abs(v) for v in vb.values()), default=0.0))
    worst, worst_step, rel, rel_step = 0.0, common[0], 0.0, common[0]
    for step in common:
        gap = abs(va[step] - vb[step])
        if gap > worst:
            worst, worst_step = gap, step
        scale = max(abs(va[step]), abs(vb[step]))
        if scale > 0 and gap / scale > rel:
            rel, rel_step = gap / scale, step
    detail = {
        "compared_steps": len(common),
        "peak": peak,
        "max_difference": worst,
        "max_difference_step": worst_step,
        "max_difference_of_peak": worst / peak if peak else 0.0,
        "max_relative": rel,
        "max_relative_step": rel_step,
        "a_at_step": va[worst_step],
        "b_at_step": vb[worst_step],
    }
    equal = worst <= rtol * peak
    note = ""
    if a.get("total_steps") != b.get("total_steps"):
        note = f"A's curve has {a.get('total_steps')} steps, B's {b.get('total_steps')}: compared where both have one"
    return Row(
        "learning rate",
        _lr_summary(a),
        _lr_summary(b),
        EQUAL if equal else DIFFERENT,
        note,
        LR_FIELDS,
        detail=detail,
        follows=LR_FOLLOWS,
    )


def _lr_summary(curve: dict[str, Any] | None) -> Any:
    if not curve:
        return None
    values = curve.get("values") or [0.0]
    return {
        "scheduler": curve.get("scheduler"),
        "steps": curve.get("total_steps"),
        "peak": max(values),
        "recorded": len(curve.get("steps") or ()),
        "relative": curve.get("relative", False),
    }


def parameters_row(a: dict[str, Any] | None, b: dict[str, Any] | None, rtol: float) -> Row:
    """Totals when both probes know their vocabulary; else the count without the vocabulary-sized
    matrices and what each vocabulary row adds."""
    name = "parameters"
    for side, count in (("A", a), ("B", b)):
        if not count:
            return Row(name, a, b, NOT_COMPARED, f"{side} holds no architecture", PARAMETER_FIELDS)
        if count.get("error"):
            return Row(
                name, a, b, NOT_COMPARED, f"{side}'s model could not be built here: {count['error']}", PARAMETER_FIELDS
            )
    assert a is not None and b is not None
    if a.get("total") is not None and b.get("total") is not None:
        return Row(
            name,
            a["total"],
            b["total"],
            EQUAL if _close(a["total"], b["total"], rtol) else DIFFERENT,
            "",
            PARAMETER_FIELDS,
            detail={"a": a, "b": b},
        )
    same = _close(a.get("without_vocab"), b.get("without_vocab"), rtol) and a.get("per_vocab_row") == b.get(
        "per_vocab_row"
    )
    side = "A" if a.get("total") is None else "B"
    shown = [f"{c.get('without_vocab')} + {c.get('per_vocab_row')}/row" for c in (a, b)]
    note = f"{side} does not know its vocabulary: compared without the vocabulary-sized matrices ({shown[0]} vs {shown[1]})"
    return Row(
        name,
        a.get("total") or a.get("without_vocab"),
        b.get("total") or b.get("without_vocab"),
        EQUAL if same else DIFFERENT,
        note,
        PARAMETER_FIELDS,
        detail={"a": a, "b": b},
    )


def accepted_row(a: dict[str, Any], b: dict[str, Any]) -> Row:
    verdict_a, verdict_b = bool(a.get("accepted")), bool(b.get("accepted"))
    if verdict_a and verdict_b:
        return Row("accepted", True, True, EQUAL)
    refused = [f"{side}: {r.get('message')}" for side, r in (("A", a), ("B", b)) if not r.get("accepted")]
    return Row("accepted", verdict_a, verdict_b, DIFFERENT, " | ".join(refused), ("*",))


def rows(a: dict[str, Any], b: dict[str, Any], rtol: float = DEFAULT_RTOL) -> list[Row]:
    """Every row of the certificate for two probes' answers (both ran)."""
    out = [accepted_row(a, b)]
    if not (a.get("accepted") and b.get("accepted")):
        return out  # a refused file has no run to compare
    out.append(lr_row(a.get("lr"), b.get("lr"), rtol))
    why = {side: f"{_name(r)} gives no value for it" for side, r in (("a", a), ("b", b))}
    for name, section, key, fields, follows in RUN_ROWS:
        out.append(
            value_row(
                name, a[section].get(key), b[section].get(key), fields, follows, rtol, why_a=why["a"], why_b=why["b"]
            )
        )
    out.append(parameters_row(a.get("parameters"), b.get("parameters"), rtol))
    for name, section, key, fields, follows in DETAIL_ROWS:
        out.append(
            value_row(
                name,
                a[section].get(key),
                b[section].get(key),
                fields,
                follows,
                rtol,
                core=False,
                why_a=why["a"],
                why_b=why["b"],
            )
        )
    return out


def _name(result: dict[str, Any]) -> str:
    return str((result.get("framework") or {}).get("name") or result.get("probe") or "the framework")


def statuses_by_field(report: dict[str, Any]) -> dict[str, list[str]]:
    """Each canonical field's statuses in a translation's JSON report (`set` for a value the user
    gave with --set, whatever its status), as `neoconv diff --report` reads them."""
    out: dict[str, list[str]] = {}
    for entry in report.get("entries") or ():
        if isinstance(entry, dict):
            status = "set" if entry.get("kind") == "set_written" else str(entry.get("status"))
            for name in entry.get("fields") or ():
                out.setdefault(str(name), []).append(status)
    return out


def annotate(found: list[Row], report: dict[str, Any]) -> None:
    """What the report says of each difference's fields; a refused output is named when the report
    lists a value the target needs that the source could not give (`missing`)."""
    by_field = statuses_by_field(report)
    missing = [
        str(e.get("status"))
        for e in report.get("entries") or ()
        if isinstance(e, dict) and e.get("status") == "missing"
    ]
    for row in found:
        if row.status != DIFFERENT:
            continue
        if row.name == "accepted":  # the source refused by its own framework: nothing a translation names
            row.report = tuple(dict.fromkeys(missing)) if row.a else ()
            continue
        said = [s for name, statuses in by_field.items() if _matches(name, row.fields) for s in statuses]
        lost = [
            s for name, statuses in by_field.items() if _matches(name, row.follows) for s in statuses if s in LOSSES
        ]
        row.report = tuple(dict.fromkeys(said + lost))


def _matches(name: str, patterns: tuple[str, ...]) -> bool:
    return any(fnmatch.fnmatchcase(name, p) for p in patterns)
