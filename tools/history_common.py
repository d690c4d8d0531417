"""What the key-history generators (tools/gen_*_history.py) share.

Each generator reads one framework's own source at a list of revisions of its git mirror, takes a
snapshot (config key -> type, default, where) at every revision, and folds the snapshots into one
record per key (schemas/history/<format>.json). Nothing is imported or executed: sources are read
with `ast`. The output is deterministic (sorted keys, pinned revisions), so a test can regenerate
it and compare byte for byte.

Shared record shape (documented again in each output's "$comment"):
    "in":      [[first, last], ...]   runs of consecutive releases that have the key
    "type":    [[release, type], ...] the type from the first release on, one pair per change
    "default": [[release, value] | [release], ...]  likewise; a one-element pair means "no default"
                                       (required, or set by code we could not evaluate)
A default that is not a literal is written {"expr": "<source text>"}.
"""

from __future__ import annotations

import ast
import json
import math
import os
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

JSON = Any

REPO_ROOT = Path(__file__).resolve().parent.parent
HISTORY_DIR = REPO_ROOT / "schemas" / "history"
MIRROR_ENV = "NEOCONV_MIRRORS"  # a folder holding <owner>+<name>/repo bare mirrors


def mirror_path(owner_name: str) -> Path:
    """Where a framework's bare mirror is: $NEOCONV_MIRRORS/<owner+name>/repo, else ../.mirror/..."""
    base = os.environ.get(MIRROR_ENV)
    root = Path(base) if base else REPO_ROOT.parent / ".mirror"
    return root / owner_name / "repo"


class NoDefault:
    """Marks a key that has no default at a release (required, or computed by code)."""

    _instance: NoDefault | None = None

    def __new__(cls) -> NoDefault:
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "NO_DEFAULT"


NO_DEFAULT = NoDefault()


# --------------------------------------------------------------------------
# Git
# --------------------------------------------------------------------------


class Git:
    """Read-only access to a bare mirror; blob reads go through one `cat-file --batch` process."""

    def __init__(self, path: Path) -> None:
        if not (path / "HEAD").exists() and not (path / ".git").exists():
            raise SystemExit(f"{path}: not a git repository (set {MIRROR_ENV} or pass --repo)")
        self.path = path
        self._batch: subprocess.Popen[bytes] | None = None
        self._blobs: dict[str, str] = {}

    def run(self, *args: str) -> str:
        # dates are formatted in UTC whatever the machine's zone: labels must not depend on it
        env = {**os.environ, "TZ": "UTC"}
        out = subprocess.run(["git", "-C", str(self.path), *args], capture_output=True, check=False, env=env)
        if out.returncode != 0:
            raise SystemExit(f"git {' '.join(args)}: {out.stderr.decode(errors='replace').strip()}")
        return out.stdout.decode("utf-8", errors="replace")

    def has(self, rev: str) -> bool:
        out = subprocess.run(
            ["git", "-C", str(self.path), "cat-file", "-e", f"{rev}^{{commit}}"], capture_output=True, check=False
        )
        return out.returncode == 0

    def rev(self, rev: str) -> str:
        return self.run("rev-parse", f"{rev}^{{commit}}").strip()

    def date(self, rev: str) -> str:
        """Committer date (YYYY-MM-DD, UTC) of a revision."""
        return self.run("log", "-1", "--date=format-local:%Y-%m-%d", "--format=%cd", rev).strip()

    def tree(self, rev: str, *prefixes: str) -> dict[str, str]:
        """path -> blob id of every file under the prefixes (all files when none) at rev."""
        out = self.run("ls-tree", "-r", "--full-tree", rev, "--", *prefixes)
        files: dict[str, str] = {}
        for line in out.splitlines():
            meta, _, path = line.partition("\t")
            parts = meta.split()
            if len(parts) == 3 and parts[1] == "blob":
                files[path] = parts[2]
        return files

    def blob(self, blob_id: str) -> str:
        cached = self._blobs.get(blob_id)
        if cached is not None:
            return cached
        if self._batch is None:
            self._batch = subprocess.Popen(
                ["git", "-C", str(self.path), "cat-file", "--batch"],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
            )
        assert self._batch.stdin is not None and self._batch.stdout is not None
        self._batch.stdin.write(blob_id.encode() + b"\n")
        self._batch.stdin.flush()
        header = self._batch.stdout.readline().split()
        if len(header) < 3 or header[1] == b"missing":
            raise SystemExit(f"{self.path}: object {blob_id} is missing")
        data = self._batch.stdout.read(int(header[2]))
        self._batch.stdout.read(1)  # the newline after each object
        text = data.decode("utf-8", errors="replace")
        self._blobs[blob_id] = text
        return text

    def show(self, rev: str, path: str) -> str | None:
        blob_id = self.tree(rev, path).get(path)
        return None if blob_id is None else self.blob(blob_id)

    def close(self) -> None:
        if self._batch is not None:
            if self._batch.stdin is not None:
                self._batch.stdin.close()
            self._batch.wait()
            self._batch = None


class AstCache:
    """Parsed modules by blob id: most files do not change between two releases."""

    def __init__(self, git: Git) -> None:
        self.git = git
        self._trees: dict[str, ast.Module | None] = {}

    def parse(self, blob_id: str) -> ast.Module | None:
        if blob_id not in self._trees:
            try:
                self._trees[blob_id] = ast.parse(self.git.blob(blob_id))
            except (SyntaxError, ValueError):
                self._trees[blob_id] = None  # a broken file at that revision: it defines nothing
        return self._trees[blob_id]


# --------------------------------------------------------------------------
# Values from the AST
# --------------------------------------------------------------------------


class NotLiteral(Exception):
    pass


def literal(node: ast.expr, names: Mapping[str, JSON] | None = None) -> JSON:
    """A JSON value for a literal expression (tuples become lists); names resolve module constants."""
    if isinstance(node, ast.Constant):
        value = node.value
        if isinstance(value, float) and not math.isfinite(value):
            raise NotLiteral
        if value is None or isinstance(value, (bool, int, float, str)):
            return value
        raise NotLiteral
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        inner = literal(node.operand, names)
        if isinstance(inner, bool) or not isinstance(inner, (int, float)):
            raise NotLiteral
        return -inner if isinstance(node.op, ast.USub) else inner
    if isinstance(node, (ast.List, ast.Tuple)):
        return [literal(e, names) for e in node.elts]
    if isinstance(node, ast.Dict):
        out: dict[str, JSON] = {}
        for k, v in zip(node.keys, node.values):
            if k is None:
                raise NotLiteral
            key = literal(k, names)
            if not isinstance(key, str):
                raise NotLiteral
            out[key] = literal(v, names)
        return out
    if isinstance(node, ast.Name) and names is not None and node.id in names:
        return names[node.id]
    if isinstance(node, ast.Attribute) and names is not None:
        dotted = ast.unparse(node)
        if dotted in names:
            return names[dotted]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Mult, ast.Pow)):
        # 1e-5 written as 10**-5 or 2 * 1024: still a plain number
        left, right = literal(node.left, names), literal(node.right, names)
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (left, right)):
            try:
                result = left * right if isinstance(node.op, ast.Mult) else left**right
            except (OverflowError, ZeroDivisionError) as exc:
                raise NotLiteral from exc
            if isinstance(result, (int, float)) and math.isfinite(result):
                return result
        raise NotLiteral
    raise NotLiteral


def value_of(node: ast.expr | None, names: Mapping[str, JSON] | None = None) -> JSON:
    """A literal's value, or {"expr": source} for anything computed."""
    if node is None:
        return NO_DEFAULT
    try:
        return literal(node, names)
    except NotLiteral:
        return {"expr": ast.unparse(node)}


def module_constants(tree: ast.Module) -> dict[str, JSON]:
    """NAME = <literal> assignments at module level (DeepSpeed's constants.py style)."""
    names: dict[str, JSON] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target, value = stmt.targets[0].id, stmt.value
        elif isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name) and stmt.value is not None:
            target, value = stmt.target.id, stmt.value
        else:
            continue
        try:
            names[target] = literal(value, names)
        except NotLiteral:
            pass
    return names


def type_text(annotation: ast.expr | None) -> str | None:
    """An annotation as compact source text ('typing.' dropped: it does not change the meaning)."""
    if annotation is None:
        return None
    text = ast.unparse(annotation)
    return text.replace("typing.", "").replace("typing_extensions.", "")


def type_of_value(value: JSON) -> str | None:
    """A Python type name guessed from a literal default, for reads that carry no annotation."""
    if value is NO_DEFAULT or value is None or (isinstance(value, dict) and set(value) == {"expr"}):
        return None
    for kind, name in ((bool, "bool"), (int, "int"), (float, "float"), (str, "str"), (list, "list"), (dict, "dict")):
        if isinstance(value, kind):
            return name
    return None


# --------------------------------------------------------------------------
# Snapshots -> records
# --------------------------------------------------------------------------


@dataclass
class Release:
    label: str
    rev: str  # full commit id
    date: str
    note: str | None = None
    prs: tuple[int, ...] = ()  # the pull requests merged while this release was the newest (first parent)

    def as_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"label": self.label, "rev": self.rev[:10], "date": self.date}
        if self.note:
            out["note"] = self.note
        if self.prs:
            out["prs"] = list(self.prs)
        return out


_PR = re.compile(r"\(#(\d+)\)\s*$|^Merge pull request #(\d+) ")


def merged_prs(git: "Git", releases: Sequence[Release], start: str | None, pin: str, *, by_date: bool = False) -> None:
    """Give each release the PR numbers merged (first-parent history of main, squash "(#N)" or "Merge
    pull request #N" subjects) from its commit up to the next release's, so a user can name any PR
    and get the release in force once it was merged. `by_date`: releases are days (labels are dates),
    a PR belongs to the last release dated at or before its merge day. PRs merged before the first
    release get none."""
    span = f"{start}^..{pin}" if start else pin
    log = git.run("log", "--first-parent", "--reverse", "--date=format-local:%Y-%m-%d", "--format=%H %cd %s", span)
    starts = {r.rev: i for i, r in enumerate(releases)}
    found: list[list[int]] = [[] for _ in releases]
    at = -1
    for line in log.splitlines():
        commit, date, subject = (line.split(" ", 2) + [""])[:3]
        if by_date:
            while at + 1 < len(releases) and releases[at + 1].date <= date:
                at += 1
        else:
            at = starts.get(commit, at)
        match = _PR.search(subject)
        if match and at >= 0:
            found[at].append(int(match.group(1) or match.group(2)))
    for release, numbers in zip(releases, found):
        release.prs = tuple(sorted(set(numbers)))


@dataclass
class KeyInfo:
    """One key at one release."""

    type: str | None = None
    default: JSON = NO_DEFAULT
    extra: dict[str, JSON] = field(default_factory=dict)  # generator-specific facts (kept from the last release)


Snapshot = dict[str, KeyInfo]


def _canon(value: JSON) -> str:
    """Comparison text: 1e8 and 100000000 are the same default (True and 1 are not)."""

    def norm(v: JSON) -> JSON:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [norm(x) for x in v]
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()}
        return v

    return json.dumps(norm(value), sort_keys=True)


def runs(labels: Sequence[str], present: set[str]) -> list[list[str]]:
    """Runs of consecutive releases (in release order) that are in `present`."""
    out: list[list[str]] = []
    current: list[str] | None = None
    for label in labels:
        if label in present:
            if current is None:
                current = [label, label]
                out.append(current)
            else:
                current[1] = label
        else:
            current = None
    return out


def changes(history: Iterable[tuple[str, JSON]]) -> list[list[JSON]]:
    """[[label, value], ...] keeping only the first release and each change (no-default: [label])."""
    out: list[list[JSON]] = []
    last: str | None = None
    for label, value in history:
        canon = "<none>" if value is NO_DEFAULT else _canon(value)
        if canon != last:
            out.append([label] if value is NO_DEFAULT else [label, value])
            last = canon
    return out


def fold(releases: Sequence[Release], snapshots: Mapping[str, Snapshot]) -> dict[str, dict[str, JSON]]:
    """One record per key over all releases: where it is, its type and default histories."""
    labels = [r.label for r in releases]
    keys = sorted({k for snap in snapshots.values() for k in snap})
    records: dict[str, dict[str, JSON]] = {}
    for key in keys:
        seen = [(label, snapshots[label][key]) for label in labels if key in snapshots[label]]
        record: dict[str, JSON] = {"in": runs(labels, {label for label, _ in seen})}
        types = changes((label, info.type) for label, info in seen)
        if any(len(pair) == 2 and pair[1] is not None for pair in types):
            record["type"] = types
        record["default"] = changes((label, info.default) for label, info in seen)
        extra = seen[-1][1].extra
        for name in sorted(extra):
            record[name] = extra[name]
        records[key] = record
    return records


def first_release(record: Mapping[str, JSON]) -> str:
    return str(record["in"][0][0])


def last_release(record: Mapping[str, JSON]) -> str:
    return str(record["in"][-1][1])


def present_at(record: Mapping[str, JSON], label: str, labels: Sequence[str]) -> bool:
    index = labels.index(label)
    return any(labels.index(a) <= index <= labels.index(b) for a, b in record["in"])


# --------------------------------------------------------------------------
# Curated facts, checked against the extracted data
# --------------------------------------------------------------------------


@dataclass(frozen=True)
class Rename:
    old: str
    new: str
    release: str  # the first release that reads `new` instead of `old`
    source: str  # repo@rev:path (or a PR) where the change is visible
    note: str = ""
    overlap: bool = False  # both names read in the same releases (an alias, not a replacement)

    def as_json(self) -> dict[str, JSON]:
        out: dict[str, JSON] = {"from": self.old, "to": self.new, "release": self.release, "source": self.source}
        if self.note:
            out["note"] = self.note
        if self.overlap:
            out["overlap"] = True
        return out


@dataclass(frozen=True)
class Change:
    key: str
    release: str  # the first release with the new meaning
    note: str
    source: str

    def as_json(self) -> dict[str, JSON]:
        return {"key": self.key, "release": self.release, "note": self.note, "source": self.source}


def check_rename(rename: Rename, records: Mapping[str, Mapping[str, JSON]], labels: Sequence[str]) -> None:
    """The old name must be read just before the rename and the new one from it on."""
    where = f"rename {rename.old} -> {rename.new} at {rename.release}"
    if rename.old not in records or rename.new not in records:
        raise SystemExit(f"{where}: {'old' if rename.old not in records else 'new'} key never found")
    if rename.release not in labels:
        raise SystemExit(f"{where}: no release labelled {rename.release}")
    index = labels.index(rename.release)
    if not present_at(records[rename.new], rename.release, labels):
        raise SystemExit(f"{where}: the new key is not read at {rename.release}")
    if index == 0 or not present_at(records[rename.old], labels[index - 1], labels):
        raise SystemExit(f"{where}: the old key is not read just before {rename.release}")
    if not rename.overlap and present_at(records[rename.old], rename.release, labels):
        raise SystemExit(f"{where}: the old key is still read at {rename.release} (mark overlap)")


def check_change(change: Change, records: Mapping[str, Mapping[str, JSON]], labels: Sequence[str]) -> None:
    if change.release not in labels:
        raise SystemExit(f"change of {change.key}: no release labelled {change.release}")
    if change.key not in records or not present_at(records[change.key], change.release, labels):
        raise SystemExit(f"change of {change.key} at {change.release}: the key is not read there")


# --------------------------------------------------------------------------
# Output
# --------------------------------------------------------------------------

COMMON_COMMENT = [
    "Generated from the framework's own source at each release; do not edit (rerun the generator).",
    "releases: oldest first; label is what --from-version/--to-version accept; rev/date: the commit read.",
    "aliases: other names users know -> release label.",
    "keys: one record per config key path (dots for nesting).",
    "  in: [[first, last], ...] runs of consecutive releases that read the key.",
    "  type: [[release, type], ...] the type from that release on (Python annotation text, or guessed from the default).",
    "  default: [[release, value] | [release], ...] the default from that release on; [release] alone = no default",
    '    (required, or computed by code); a computed default is {"expr": "<source>"}.',
    "renames: {from, to, release, source, note}: release = first release that reads 'to' instead of 'from';",
    "  overlap: true = 'from' is still read from that release on (an accepted old spelling).",
    "changes: {key, release, note, source}: same key, different meaning from that release on.",
]


def document(
    fmt: str,
    repo: str,
    generator: str,
    comment: list[str],
    releases: Sequence[Release],
    aliases: Mapping[str, str],
    keys: Mapping[str, JSON],
    renames: Sequence[Rename] = (),
    meaning_changes: Sequence[Change] = (),
    extra: Mapping[str, JSON] | None = None,
) -> dict[str, JSON]:
    labels = [r.label for r in releases]
    if len(set(labels)) != len(labels):
        raise SystemExit("duplicate release labels")
    for name, target in aliases.items():
        if target not in labels:
            raise SystemExit(f"alias {name} -> {target}: no such release")
    for rename in renames:
        check_rename(rename, keys, labels)
    for change in meaning_changes:
        check_change(change, keys, labels)
    doc: dict[str, JSON] = {
        "$comment": [f"Key history of {repo} ({fmt}); written by {generator}.", *COMMON_COMMENT, *comment],
        "format": fmt,
        "source": repo,
        "releases": [r.as_json() for r in releases],
        "aliases": dict(sorted(aliases.items())),
        "keys": dict(keys),
        "renames": [r.as_json() for r in renames],
        "changes": [c.as_json() for c in meaning_changes],
    }
    if extra:
        doc.update(extra)
    return doc


def render(doc: Mapping[str, JSON]) -> str:
    """Compact but diff-friendly: one line per key record."""
    lines = ["{"]
    items = list(doc.items())
    for i, (name, value) in enumerate(items):
        comma = "," if i < len(items) - 1 else ""
        if isinstance(value, dict) and value and name in ("keys", "aliases", "model_sets"):
            lines.append(f"  {json.dumps(name)}: {{")
            inner = list(value.items())
            for j, (k, v) in enumerate(inner):
                c = "," if j < len(inner) - 1 else ""
                lines.append(f"    {json.dumps(k)}: {_compact(v)}{c}")
            lines.append(f"  }}{comma}")
        elif isinstance(value, list) and value:
            lines.append(f"  {json.dumps(name)}: [")
            for j, v in enumerate(value):
                c = "," if j < len(value) - 1 else ""
                lines.append(f"    {_compact(v)}{c}")
            lines.append(f"  ]{comma}")
        else:
            lines.append(f"  {json.dumps(name)}: {json.dumps(value, sort_keys=True, ensure_ascii=False)}{comma}")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _compact(value: JSON) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def write_or_check(text: str, output: Path, check: bool, tool: str) -> int:
    if check:
        current = output.read_text(encoding="utf-8") if output.exists() else None
        if current != text:
            print(f"{output} is out of date; rerun tools/{tool}", file=sys.stderr)
            return 1
        return 0
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(text, encoding="utf-8")
    return 0


def iter_classes(tree: ast.Module) -> Iterator[ast.ClassDef]:
    for stmt in tree.body:
        if isinstance(stmt, ast.ClassDef):
            yield stmt


def base_names(cls: ast.ClassDef) -> list[str]:
    out = []
    for base in cls.bases:
        node = base.value if isinstance(base, ast.Subscript) else base
        if isinstance(node, ast.Name):
            out.append(node.id)
        elif isinstance(node, ast.Attribute):
            out.append(node.attr)
    return out
