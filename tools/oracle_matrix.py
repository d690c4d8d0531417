"""The oracle matrix: every corpus config translated into every other format and layout, each output
loaded by the target framework's own config code, every source by its own framework's code.

    . /tmp/neoconv-oracle/oracle.env            # tools/oracle_setup.sh
    python tools/oracle_matrix.py --json matrix.json --markdown matrix.md [--world 8]
    python tools/oracle_matrix.py --write-known  # after a fix: rewrite tests/oracle_known_failures.yaml
    python tools/oracle_matrix.py --configs DIR --markdown sweep.md  # configs beyond the corpus

`--configs DIR`: a folder of configs laid out as the corpus (one subfolder per source kind: neox,
deepspeed, cerebras-legacy, cerebras-trainer, veomni, veomni-legacy), gathered from forks, downstream
repositories and each framework's own test and CI configs at several releases (never committed);
`DIR/origins.json` may give each file's `release` (its path under DIR -> {"release": "2.2.1", ...}), which
tells a Model Zoo file of an older release (drift) as the corpus's MANIFEST.md does.

For each translation the values the report lists as `missing` are supplied (tests/oracle_standins.yaml)
through the target's own override path. Each case ends as one of:

* `refused`: neoconv refused to translate (exit 2; the message is kept).
* `accepted`: the target's code accepted it; then two checks of meaning: `lr0` (the peak learning rate
  the target derives is 0 although the source's is not) and `batch` (the global batch the target
  derives at the world size differs from the one the source's own framework derives).
* `rejected`, with the framework's message and a category:
  (a) `source-fails`: the source fails its own framework's parser too;
  (c) `drift`: the source passes only an older release of its framework than the one here (the
      target code is newer than the source);
  (b) `reported`: the source passes its own parser and the report names the cause (a missing entry
      whose key the message names and that had no stand-in, or a lossy entry naming it that warns
      the target needs or refuses something);
  (d) `neoconv`: the source passes its own parser and nothing in the report names the cause.
  A rejection whose message names a key the report calls `exact` or `converted` is `claimed` too
  (`values.claimed`): issue #28's measure, an output the target refuses that the report says carried.
* `error`: the check program failed or neoconv crashed (never the framework's verdict).

The goal of issue #16 (tests/test_oracle_matrix.py): no `reported`/`neoconv` rejection, no `error`,
no `lr0`, no `batch`. `failures()` lists the cases that miss it; tests/oracle_known_failures.yaml is
that list as of the last run: the work queue.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT))

import oracle  # noqa: E402  (tests/oracle.py: the runner)

from neoconv import translate  # noqa: E402
from neoconv.core.errors import NeoconvError  # noqa: E402
from neoconv.core.report import Status  # noqa: E402

CORPUS = ROOT.parent / "shared" / "corpus"
STANDINS = ROOT / "tests" / "oracle_standins.yaml"
KNOWN = ROOT / "tests" / "oracle_known_failures.yaml"

# corpus folder -> (neoconv format, layout, kind = the target name of its own format and layout, glob)
SOURCES = {
    "neox": ("neox", None, "neox", "**/*.yml"),
    "deepspeed": ("deepspeed", None, "deepspeed", "**/*.json"),
    "cerebras-legacy": ("cerebras", "legacy", "cerebras-legacy", "**/*.yaml"),
    "cerebras-trainer": ("cerebras", "trainer", "cerebras-trainer", "**/*.yaml"),
    "veomni": ("veomni", "nested", "veomni-nested", "**/*.yaml"),
    "veomni-legacy": ("veomni", "flat", "veomni-flat", "**/*.yaml"),
}
# target -> (neoconv format, layout, oracle)
TARGETS = {
    "neox": ("neox", None, "neox"),
    "deepspeed": ("deepspeed", None, "deepspeed"),
    "cerebras-legacy": ("cerebras", "legacy", "cerebras"),
    "cerebras-trainer": ("cerebras", "trainer", "cerebras"),
    "veomni-nested": ("veomni", "nested", "veomni"),
    "veomni-flat": ("veomni", "flat", "veomni-flat"),
}
OWN_ORACLE = {
    "neox": "neox",
    "deepspeed": "deepspeed",
    "cerebras-legacy": "cerebras",
    "cerebras-trainer": "cerebras",
    "veomni-nested": "veomni",
    "veomni-flat": "veomni-flat",
}
OLDER = {"deepspeed": "deepspeed-old"}  # an older release of the same framework: tells drift apart
# the Model Zoo release tools/oracle_setup.sh exports; a corpus file taken from an earlier commit
# (MANIFEST.md) is from an older release
MODELZOO_RELEASE = "Release_2.10.0"
MODELZOO_GIT = ROOT.parent / ".mirror" / "Cerebras+modelzoo" / "repo"
GOAL_MISSES = {"reported", "neoconv", "error", "lr0", "batch"}


@dataclass
class Case:
    id: str  # "<corpus path> -> <target>"
    source: str
    target: str
    outcome: str  # refused | accepted | rejected | error | skipped
    category: str | None = None  # source-fails | drift | reported | neoconv | lr0 | batch
    message: str | None = None  # the framework's (or neoconv's) message
    supplied: list[str] = field(default_factory=list)  # missing keys given a stand-in value
    unsupplied: list[str] = field(default_factory=list)  # missing keys with no stand-in
    values: dict[str, Any] = field(default_factory=dict)

    @property
    def misses_goal(self) -> bool:
        return self.outcome == "error" or self.category in GOAL_MISSES


@dataclass
class Source:
    rel: str
    path: Path
    fmt: str
    layout: str | None
    kind: str
    own: str = ""  # the oracle of its own framework
    verdict: oracle.Verdict | None = None
    older: oracle.Verdict | None = None  # the same framework at an older release, where one is set up
    release: str | None = None  # the older release the file was published with (MANIFEST.md), if any

    @property
    def status(self) -> str:
        """passes | older (rejected by the release here, but from or accepted by an older one) | fails | unknown"""
        if self.verdict is None or self.verdict.verdict == "error":
            return "unknown"
        if self.verdict.accepted:
            return "passes"
        if (self.older is not None and self.older.accepted) or self.release:
            return "older"
        return "fails"


def sources(corpus: Path) -> list[Source]:
    out = []
    for folder, (fmt, layout, kind, pattern) in SOURCES.items():
        for path in sorted((corpus / folder).glob(pattern)):
            out.append(Source(str(path.relative_to(corpus)), path, fmt, layout, kind, OWN_ORACLE[kind]))
    return out


def _version(tag: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", tag))


def older_releases(corpus: Path) -> dict[str, str]:
    """Corpus path -> the Model Zoo release its commit first appears in, when older than the one here
    (a --configs folder: the releases its origins.json names)."""
    origins = corpus / "origins.json"
    if origins.exists():
        named = {rel: str(o["release"]) for rel, o in json.loads(origins.read_text()).items() if o.get("release")}
        return {
            rel: f"Release_{tag}"
            for rel, tag in named.items()
            if rel.startswith("cerebras") and _version(tag) < _version(MODELZOO_RELEASE)
        }
    manifest = corpus / "MANIFEST.md"
    git = Path(os.environ.get("MODELZOO_GIT") or MODELZOO_GIT)
    if not manifest.exists() or not git.exists():
        return {}
    rows = re.findall(r"^\| `([^`]+)` \| Cerebras/modelzoo \| `([0-9a-f]+)` \|", manifest.read_text(), re.M)
    first: dict[str, str | None] = {}
    for commit in {c for _, c in rows}:
        run = subprocess.run(["git", f"--git-dir={git}", "tag", "--contains", commit], capture_output=True, text=True)
        tags = sorted((t for t in run.stdout.split() if t.startswith("Release_")), key=_version)
        first[commit] = tags[0] if tags else None
    out = {}
    for path, commit in rows:
        tag = first[commit]
        if tag and _version(tag) < _version(MODELZOO_RELEASE):
            out[path] = tag
    return out


def cerebras_model_name(rel: str) -> str:
    """A legacy Model Zoo config's model is the folder whose run.py reads it (bert/fine_tuning/x: bert/x)."""
    parts = rel.split("/")[1:]
    if parts[0] == "bert" and len(parts) > 2 and parts[1] == "fine_tuning":
        return f"bert/{parts[2]}"
    return parts[0]


# ---- stand-in values for what a report lists as missing -------------------------------------------


class Standins:
    def __init__(self, work: Path) -> None:
        self.table = yaml.safe_load(STANDINS.read_text())
        self.data = work / "standin-data"
        self.data.mkdir(parents=True, exist_ok=True)
        self.config = work / "standin-config.json"
        config = {
            "model_type": "gpt2",
            "n_embd": 768,
            "n_layer": 12,
            "n_head": 12,
            "n_positions": 2048,
            "vocab_size": 50304,
        }
        self.config.write_text(json.dumps(config))

    def value(self, fmt: str, key: str, result: Any = None) -> Any:
        value = self.table.get(fmt, {}).get(key)
        if value == "{positions}":  # the run's own positions (a sequence length fits them)
            positions = result.ir.get("model.max_position_embeddings") if result is not None else None
            return positions if isinstance(positions, int) else 2048
        if isinstance(value, str):
            value = value.replace("{data}", str(self.data)).replace("{config}", str(self.config))
        return value

    def has(self, fmt: str, key: str) -> bool:
        return key in self.table.get(fmt, {})


def legacy_key(key: str) -> str:
    """A Cerebras trainer-layout key as the legacy key Model Zoo's converter places there
    (trainer.init.model.name -> model.name): the stand-ins are keyed in the legacy layout."""
    from neoconv.formats.cerebras.layout import layout

    if not key.startswith("trainer."):
        return key
    path = tuple(key.split(".")[1:])
    for place in layout().places:
        if place.cls is None and path[: len(place.trainer)] == place.trainer:
            rest = path[len(place.trainer) :]
            if not rest and not place.block:
                return place.legacy
            if rest and place.block:
                return ".".join((place.legacy, *rest))
    return key


def missing_keys(result: Any) -> list[str]:
    keys: list[str] = []
    for entry in result.report.entries:
        if entry.status is Status.MISSING and entry.target_key:
            keys += [k.strip() for k in entry.target_key.split(",") if k.strip()]
    return list(dict.fromkeys(keys))


# ---- building the jobs -------------------------------------------------------------------------


@dataclass
class Output:
    case: Case
    oracle: str
    job: dict[str, Any]
    result: Any  # the Translation
    config_json: Path | None = None


def _peak_steps(result: Any) -> int:
    warmup = result.ir.get("schedule.warmup_steps") or 0
    return min(int(warmup) + 3, 100_000)


def fitting_world(result: Any, world: int) -> int | None:
    """The world size the report's remedy names when the global batch does not split over `world`
    ("give --set batch.global=... or --world-size N of a run it splits over"): the largest N that
    divides both. None when the report names no such cause."""
    unsplit = any(e.status is Status.MISSING and "does not split over" in e.detail for e in result.report.entries)
    total = result.ir.get("batch.global")
    if not unsplit or not isinstance(total, int) or total < 1:
        return None
    fits = math.gcd(total, world)
    return fits if fits != world else None


def build_output(src: Source, target: str, world: int, folder: Path, standins: Standins) -> Output:
    fmt, layout, oracle_name = TARGETS[target]
    case = Case(f"{src.rel} -> {target}", src.rel, target, "pending")
    result = translate(src.path, src.fmt, fmt, layout=layout, world_size=world)
    fits = fitting_world(result, world)
    if fits is not None:  # the report's own remedy: a run the global batch splits over
        world = fits
        result = translate(src.path, src.fmt, fmt, layout=layout, world_size=world)
        case.values["world"] = world
    folder.mkdir(parents=True, exist_ok=True)
    suffix = {"neox": ".yml", "deepspeed": ".json"}.get(fmt, ".yaml")
    out = folder / f"out{suffix}"
    out.write_text(result.dump())
    side = {name: json.loads(text) for name, text in result.side_files.items() if name.endswith(".json")}
    settings: dict[str, Any] = {}
    legacy_settings: dict[str, Any] = {}
    for key in missing_keys(result):
        if key.startswith("config.json:"):
            leaf = key.split(":", 1)[1]
            if "config.json" in side and standins.has("hf", leaf):
                side["config.json"][leaf] = standins.value("hf", leaf)
                case.supplied.append(key)
            else:
                case.unsupplied.append(key)
            continue
        lookup = legacy_key(key) if target == "cerebras-trainer" else key
        if not standins.has(fmt, lookup):
            case.unsupplied.append(key)
            continue
        case.supplied.append(key)
        if target == "cerebras-trainer" and not lookup.startswith("trainer."):
            legacy_settings[lookup] = standins.value(
                fmt, lookup
            )  # a legacy-layout key: Model Zoo's converter places it
        else:
            settings[key] = standins.value(fmt, key, result)
    config_json = None
    for name, data in side.items():
        (folder / name).write_text(json.dumps(data, indent=2))
        if name == "config.json":
            config_json = folder / name
    job: dict[str, Any] = {"id": case.id, "files": [str(out)], "world": world, "set": settings}
    if legacy_settings:
        job["set_legacy"] = legacy_settings
    # a legacy output names its model itself (model.name, Model Zoo 2.4+), or the report says `missing
    # model.name` and the stand-in above supplies it: no name from outside the file
    if target == "deepspeed":
        tp = result.ir.get("parallel.tensor_size") or 1
        pp = max(result.ir.get("parallel.pipeline_size") or 1, 1)
        if tp * pp > 1 and world % (tp * pp) == 0:
            job["dp"] = world // (tp * pp)  # the JSON cannot state them; the training script's mpu does
        job["lr_steps"] = _peak_steps(result)
    return Output(case, oracle_name, job, result, config_json)


def source_jobs(src: Source, world: int, ir_hint: Any) -> list[tuple[str, dict[str, Any]]]:
    job: dict[str, Any] = {"id": src.rel, "files": [str(src.path)], "world": world}
    if src.kind == "cerebras-legacy":
        job["model_name"] = cerebras_model_name(src.rel)
    if src.own == "deepspeed":
        job["lr_steps"] = _peak_steps(ir_hint) if ir_hint is not None else 3
    jobs = [(src.own, job)]
    if src.own in OLDER:
        jobs.append((OLDER[src.own], dict(job)))
    return jobs


# ---- what the oracles said ---------------------------------------------------------------------------


def peak(values: dict[str, Any]) -> float | None:
    if values.get("lr_relative"):  # DeepSpeed without an optimizer block: the script's lr is unknown
        return None
    for key in ("lr_max", "lr"):
        if isinstance(values.get(key), (int, float)):
            return float(values[key])
    return None


def global_batch(values: dict[str, Any]) -> int | None:
    for key in ("train_batch_size", "global_batch_size", "batch_size"):
        if isinstance(values.get(key), int):
            return int(values[key])
    return None


BATCH_KEYS = ("batch_size", "global_batch_size", "train_batch_size")
_WORD = re.compile(r"[A-Za-z_][A-Za-z0-9_]{3,}")


_WARNS = re.compile(r"refus|reject|requir|needs|must|not valid in")


def named_in_report(message: str, result: Any, supplied: list[str]) -> str | None:
    """A missing entry of the report whose key the framework's message names, or a lossy entry that
    names it and warns that the target needs or refuses something. A missing key that was supplied
    does not count: if the framework still names it, the report named the wrong key."""
    words = set(_WORD.findall(message))
    for entry in result.report.entries:
        if entry.status is not Status.MISSING and not (entry.status is Status.LOSSY and _WARNS.search(entry.detail)):
            continue
        for key in (entry.target_key or "").split(","):
            if key.strip() in supplied:
                continue
            leaf = re.split(r"[.:]", key.strip())[-1]
            if len(leaf) >= 4 and leaf in words:
                return f"{entry.status.value} {key.strip()}"
    return None


CLAIMS = (Status.EXACT, Status.CONVERTED)


def claimed_in_report(message: str, result: Any) -> str | None:
    """An entry the report calls exact or converted whose key (or its last part) the framework's
    message names: the output is refused for a value the report says carried."""
    words = set(_WORD.findall(message))
    for entry in result.report.entries:
        if entry.status not in CLAIMS:
            continue
        for key in entry.targets:
            leaf = re.split(r"[.:]", key.strip())[-1].lstrip("-").replace("-", "_")
            if key in message or (len(leaf) >= 4 and leaf in words):
                return f"{entry.status.value} {key}"
    return None


def classify(case: Case, verdict: oracle.Verdict, src: Source, result: Any) -> None:
    case.values = {**case.values, **verdict.values}  # what build_output noted (a fitting world) too
    case.values["valid"] = result.report.target.get("valid")  # neoconv's own validation of the output
    if verdict.verdict == "error":
        case.outcome, case.message = "error", verdict.error
        return
    if verdict.accepted:
        case.outcome = "accepted"
        theirs = peak(src.verdict.values) if src.verdict is not None and src.verdict.accepted else None
        ours = peak(verdict.values)
        if ours == 0.0 and theirs != 0.0:
            case.category = "lr0"
            case.message = f"peak learning rate 0 (source: {theirs if theirs is not None else 'unknown'})"
            return
        if src.status == "passes" and not any(k.endswith(BATCH_KEYS) for k in case.supplied):
            a, b = global_batch(src.verdict.values) if src.verdict else None, global_batch(verdict.values)
            if a is not None and b is not None:
                case.values = {**case.values, "batch_compared": [a, b]}
            if a is not None and b is not None and a != b:
                case.category = "batch"
                case.message = f"global batch {b} at the target, {a} at the source"
        return
    case.outcome, case.message = "rejected", verdict.error
    claimed = claimed_in_report(verdict.error or "", result)
    if claimed:
        case.values["claimed"] = claimed
    if src.status == "fails":
        case.category = "source-fails"
    elif src.status == "older" and src.verdict and _shape(verdict.error or "") == _shape(src.verdict.error or ""):
        case.category = "drift"  # refused for what the release here refuses in the (older) source itself
    else:
        named = named_in_report(verdict.error or "", result, case.supplied)
        case.category = "reported" if named else "neoconv"
        if named:
            case.values = {**case.values, "named": named}


# ---- the whole matrix ----------------------------------------------------------------------------------


@dataclass
class Matrix:
    world: int
    cases: list[Case]
    sources: list[Source]
    skipped_oracles: dict[str, str]

    def failures(self) -> dict[str, str]:
        """case id -> "<category>: <message>" for every case that misses the goal of issue #16."""
        out = {}
        for case in self.cases:
            if case.misses_goal:
                kind = case.category or case.outcome
                message = re.sub(r"/tmp/[^\s'\"]*", "<tmp>", case.message or "")  # the run's own folders
                out[case.id] = f"{kind}: {message[:300]}"
        return dict(sorted(out.items()))


def run_matrix(
    corpus: Path = CORPUS,
    world: int = 8,
    work: Path | None = None,
    workers: int = 2,
    targets: list[str] | None = None,
    only: str | None = None,
) -> Matrix:
    work = Path(work or tempfile.mkdtemp(prefix="neoconv-oracle-matrix-"))
    standins = Standins(work)
    all_sources = [s for s in sources(corpus) if not only or only in s.rel]
    releases = older_releases(corpus)
    for src in all_sources:
        src.release = releases.get(src.rel)
    skipped = {name: why for name in oracle.ORACLES if (why := oracle.unavailable(name))}
    outputs: list[Output] = []
    cases: list[Case] = []
    hints: dict[str, Any] = {}
    for src in all_sources:
        for target in targets or TARGETS:
            if target == src.kind:
                continue
            try:
                output = build_output(
                    src, target, world, work / "cases" / src.rel.replace("/", "__") / target, standins
                )
            except NeoconvError as exc:
                cases.append(Case(f"{src.rel} -> {target}", src.rel, target, "refused", message=str(exc)[:500]))
                continue
            except Exception as exc:  # noqa: BLE001 - neoconv crashed: a bug to report, not a verdict
                cases.append(
                    Case(f"{src.rel} -> {target}", src.rel, target, "error", message=f"neoconv crashed: {exc!r}")
                )
                continue
            if output.result.report.source.get("format") == "neox" and src.fmt == "deepspeed":
                src.own = "neox"  # a GPT-NeoX argument file in JSON: NeoX reads it
            hints.setdefault(src.rel, output.result)
            outputs.append(output)
    batches: dict[str, list[dict[str, Any]]] = {}
    for src in all_sources:
        for name, job in source_jobs(src, world, hints.get(src.rel)):
            batches.setdefault(name, []).append({**job, "id": f"source:{job['id']}"})
    for output in outputs:
        batches.setdefault(output.oracle, []).append(output.job)
        if output.config_json is not None and output.case.target == "veomni-nested":
            batches.setdefault("hf", []).append(
                {"id": f"{output.case.source} -> hf", "files": [str(output.config_json)]}
            )
    runnable = {name: jobs for name, jobs in batches.items() if name not in skipped}
    verdicts = oracle.run_many(runnable, workers=workers)
    for src in all_sources:
        src.verdict = verdicts.get(src.own, {}).get(f"source:{src.rel}")
        if src.own in OLDER:
            src.older = verdicts.get(OLDER[src.own], {}).get(f"source:{src.rel}")
    by_rel = {src.rel: src for src in all_sources}
    for output in outputs:
        case = output.case
        verdict = verdicts.get(output.oracle, {}).get(case.id)
        if verdict is None:
            case.outcome, case.message = "skipped", skipped.get(output.oracle)
        else:
            classify(case, verdict, by_rel[case.source], output.result)
        cases.append(case)
        if output.config_json is not None and case.target == "veomni-nested":
            hf_case = Case(f"{case.source} -> hf", case.source, "hf", "pending")
            hf = verdicts.get("hf", {}).get(hf_case.id)
            if hf is None:
                hf_case.outcome, hf_case.message = "skipped", skipped.get("hf")
            else:
                classify(hf_case, hf, by_rel[case.source], output.result)
            cases.append(hf_case)
    cases.sort(key=lambda c: c.id)
    return Matrix(world, cases, all_sources, skipped)


# ---- summaries -------------------------------------------------------------------------------------------


def summary(matrix: Matrix) -> dict[str, Any]:
    outcomes = Counter(c.outcome for c in matrix.cases)
    categories = Counter(c.category for c in matrix.cases if c.category)
    per_target: dict[str, Counter[str]] = {}
    for c in matrix.cases:
        per_target.setdefault(c.target, Counter())[c.category or c.outcome] += 1
    sources = Counter(s.status for s in matrix.sources)
    unsupplied = Counter(k for c in matrix.cases for k in c.unsupplied)
    # issue #28: rejected outputs whose refused key the report calls exact/converted, by category and target
    claimed = Counter(f"{c.category} -> {c.target}" for c in matrix.cases if c.values.get("claimed"))
    said_invalid = Counter(
        c.category for c in matrix.cases if c.outcome == "rejected" and c.values.get("valid") is False
    )
    return {
        "world": matrix.world,
        "cases": len(matrix.cases),
        "outcomes": dict(outcomes),
        "categories": dict(categories),
        "goal_misses": len(matrix.failures()),
        "sources": dict(sources),
        "per_target": {t: dict(v) for t, v in sorted(per_target.items())},
        "missing_without_standin": dict(unsupplied.most_common()),
        "skipped_oracles": matrix.skipped_oracles,
        "claimed": dict(sorted(claimed.items())),
        "rejected_said_invalid": dict(said_invalid),
    }


def to_json(matrix: Matrix) -> dict[str, Any]:
    return {
        "summary": summary(matrix),
        "cases": [asdict(c) for c in matrix.cases],
        "sources": [
            {
                "source": s.rel,
                "oracle": s.own,
                "status": s.status,
                "release": s.release,
                "error": s.verdict.error if s.verdict else None,
                "values": s.verdict.values if s.verdict else None,
                "older_release": s.older.verdict if s.older else None,
            }
            for s in matrix.sources
        ],
    }


def to_markdown(matrix: Matrix) -> str:
    s = summary(matrix)
    lines = [
        f"# Oracle matrix (world size {matrix.world})",
        "",
        f"{s['cases']} cases; outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(s["outcomes"].items())),
        "categories: " + ", ".join(f"{k} {v}" for k, v in sorted(s["categories"].items())),
        "sources by their own framework: " + ", ".join(f"{k} {v}" for k, v in sorted(s["sources"].items())),
        f"cases missing the goal of #16: {s['goal_misses']}",
        f"rejected while the report calls the refused key exact/converted (#28): {sum(s['claimed'].values())}"
        + "".join(f"; {k} {v}" for k, v in s["claimed"].items()),
        "rejected outputs neoconv's validation calls invalid (target.valid false), by category: "
        + (", ".join(f"{k} {v}" for k, v in sorted(s["rejected_said_invalid"].items())) or "none"),
        "",
    ]
    if s["skipped_oracles"]:
        lines += ["Oracles not available: " + "; ".join(f"{k}: {v}" for k, v in s["skipped_oracles"].items()), ""]
    columns = [
        "accepted",
        "lr0",
        "batch",
        "source-fails",
        "drift",
        "reported",
        "neoconv",
        "error",
        "refused",
        "skipped",
    ]
    lines += ["| target | " + " | ".join(columns) + " |", "|---" * (len(columns) + 1) + "|"]
    for target, counts in s["per_target"].items():
        lines.append(f"| {target} | " + " | ".join(str(counts.get(c, 0)) for c in columns) + " |")
    lines += ["", "(`accepted` counts accepted cases with no lr0/batch finding.)", ""]
    for category in ("neoconv", "reported", "error", "lr0", "batch", "drift", "refused"):
        chosen = [c for c in matrix.cases if (c.category or c.outcome) == category]
        if not chosen:
            continue
        lines += [f"## {category} ({len(chosen)})", ""]
        by_message: dict[str, list[str]] = {}
        for c in chosen:
            by_message.setdefault(_shape(c.message or ""), []).append(c.id)
        for message, ids in sorted(by_message.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"- **{len(ids)}** × `{message[:400]}`")
            lines += [f"  - {i}" for i in ids]
        lines.append("")
    claimed = [c for c in matrix.cases if c.values.get("claimed")]
    if claimed:
        lines += [f"## rejected, the report says exact/converted ({len(claimed)})", ""]
        by_kind: dict[str, list[str]] = {}
        for c in claimed:
            by_kind.setdefault(
                f"{c.category} -> {c.target}: {c.values['claimed']}: {_shape(c.message or '')[:300]}", []
            ).append(c.id)
        for kind, ids in sorted(by_kind.items(), key=lambda kv: -len(kv[1])):
            lines.append(f"- **{len(ids)}** × `{kind}`")
            lines += [f"  - {i}" for i in ids]
        lines.append("")
    if s["missing_without_standin"]:
        lines += (
            ["## missing, no stand-in", ""] + [f"- {k}: {v}" for k, v in s["missing_without_standin"].items()] + [""]
        )
    return "\n".join(lines)


def _shape(message: str) -> str:
    """A message with paths and numbers blurred, to group cases by cause."""
    message = re.sub(r"/[\w./-]+", "<path>", message)
    return re.sub(r"\b\d+(\.\d+)?(e-?\d+)?\b", "N", message)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=CORPUS)
    parser.add_argument(
        "--configs",
        type=Path,
        help="a folder of configs beyond the corpus, laid out as the corpus "
        "(a subfolder per source kind; origins.json may name releases)",
    )
    parser.add_argument("--world", type=int, default=8)
    parser.add_argument("--json", type=Path, help="write every case as JSON")
    parser.add_argument("--markdown", type=Path, help="write the summary as Markdown")
    parser.add_argument("--work", type=Path, help="keep the translated files here")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--only", help="only corpus files whose path contains this")
    parser.add_argument("--target", action="append", choices=list(TARGETS), help="only these targets")
    parser.add_argument("--write-known", action="store_true", help=f"rewrite {KNOWN.relative_to(ROOT)}")
    args = parser.parse_args(argv)
    if args.configs is not None and args.write_known:
        parser.error("--write-known rewrites the corpus's work queue: not with --configs")
    matrix = run_matrix(args.configs or args.corpus, args.world, args.work, args.workers, args.target, args.only)
    if args.json:
        args.json.write_text(json.dumps(to_json(matrix), indent=1, default=repr))
    text = to_markdown(matrix)
    if args.markdown:
        args.markdown.write_text(text)
    if args.write_known:
        write_known(matrix.failures())
    print("\n".join(text.splitlines()[:8]))
    return 0


def compare_known(known: dict[str, str], now: dict[str, str]) -> tuple[dict[str, str], list[str]]:
    """(cases missing the goal that the work queue does not list, listed cases that now behave
    differently). A case counts by its id and category: one that moves from a rejection to `lr0`
    is both new and no longer as listed."""

    def kind(reason: str) -> str:
        return reason.split(":", 1)[0]

    new = {case: why for case, why in now.items() if case not in known or kind(known[case]) != kind(why)}
    changed = sorted(case for case, why in known.items() if case not in now or kind(now[case]) != kind(why))
    return new, changed


def write_known(failures: dict[str, str]) -> None:
    header = (
        "# The work queue of issue #16: every oracle-matrix case that misses its goal today, as\n"
        '# `case: "category: framework message"`. tests/test_oracle_matrix.py fails when a case not\n'
        "# listed here misses the goal, and when a listed case meets it (delete its line). Regenerate with\n"
        "# `python tools/oracle_matrix.py --write-known` (with the oracles of tools/oracle_setup.sh).\n"
    )
    KNOWN.write_text(header + yaml.safe_dump(failures, sort_keys=True, width=1000, allow_unicode=True))


if __name__ == "__main__":
    sys.exit(main())
