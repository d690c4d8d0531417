"""Every option of every command, defined once (black's pattern): a command lists the options it
takes with `use(...)`; options whose valid values depend on a format (--layout, the versions,
--model-config) are made for the formats of the command, so each command shows only what applies
to it and lists the values it accepts."""

from __future__ import annotations

from typing import Any, Callable, Iterable

import click

from ..core.ir import DEFAULT_RTOL
from ..knowledge.registry import FORMATS
from ..core.report import Status
from . import complete
from .types import Lazy, Release, StatusList

F = Callable[..., Any]
Decorator = Callable[[F], F]


def use(*options: Decorator | Iterable[Decorator] | None) -> Decorator:
    """Apply options in the order given (the order --help shows)."""
    flat: list[Decorator] = []
    for item in options:
        if item is None:
            continue
        if isinstance(item, (list, tuple)):
            flat.extend(item)
        else:
            flat.append(item)  # type: ignore[arg-type]

    def decorate(func: F) -> F:
        for option in reversed(flat):
            func = option(func)
        return func

    return decorate


FORMAT_NAMES = click.Choice(sorted(FORMATS))

# ---- what is translated, and where it goes
OUTPUT = click.option(
    "-o",
    "--output",
    "output",
    metavar="OUT",
    default="-",
    show_default=True,
    help="Write the translated config here ('-' = stdout).",
)
REPORT = click.option(
    "--report",
    "report_path",
    metavar="FILE",
    help="Write the JSON report to FILE ('-' = stdout when the config goes to a file).",
)
WITH = click.option(
    "--with",
    "with_files",
    metavar="FILE",
    multiple=True,
    type=click.Path(),
    help="Companion file read with the input (a NeoX ds_config.json, a shared local_setup.yml); repeatable.",
)
SOURCE = click.option("--from", "src", required=True, type=FORMAT_NAMES, help="Source format.")
TARGET = click.option("--to", "dst", required=True, type=FORMAT_NAMES, help="Target format.")
PLAIN = click.option(
    "--plain",
    is_flag=True,
    help="Write the target's plain layout even where the source's comments and formatting could be "
    "kept (same-format translations keep them by default).",
)

# ---- values the source does not give
SET = click.option(
    "--set",
    "set_values",
    metavar="FIELD=VALUE",
    multiple=True,
    shell_complete=complete.assignment,
    help="Give a canonical field a value (`neoconv explain --list`), or a key only the target has "
    "(TARGET:KEY=VALUE, e.g. cerebras:train_input.data_dir=./data); repeatable.",
)
WORLD_SIZE = click.option(
    "--world-size",
    type=click.IntRange(min=1),
    metavar="N",
    help="GPUs of the source run, to derive the global batch (parallel.world_size).",
)

# ---- when a run fails
STRICT = click.option(
    "--strict",
    is_flag=True,
    help="Exit 1 when any entry is lossy, unknown or missing (--fail-on lossy,unknown,missing).",
)
FAIL_ON = click.option(
    "--fail-on",
    "fail_on",
    type=StatusList(),
    help=f"Exit 1 when an entry has one of these report statuses: {', '.join(s.value for s in Status)}.",
)
BASELINE = click.option(
    "--baseline",
    metavar="FILE",
    type=click.Path(),
    help="Entries already accepted (a previous JSON report, or a list of entries): only others fail.",
)
NO_VERIFY = click.option(
    "--no-verify",
    "no_verify",
    is_flag=True,
    help="Do not read the output back to check that the report names every difference.",
)
POLICY = (STRICT, FAIL_ON, BASELINE, NO_VERIFY)

# ---- what is shown
QUIET = click.option("-q", "--quiet", is_flag=True, help="No report on stderr.")
VERBOSE = click.option("-v", "--verbose", is_flag=True, help="Show every report entry, not only the notable ones.")
DEBUG = click.option("--debug", is_flag=True, help="Show a traceback on errors.")
COLOR = click.option(
    "--color",
    type=click.Choice(["auto", "always", "never"]),
    default="auto",
    show_default=True,
    help="The report as a coloured table: on a terminal (auto; NO_COLOR turns colour off), always, "
    "or never (plain lines, as when piped).",
)
JSON = click.option("--json", "as_json", is_flag=True, help="Machine-readable output.")

# ---- comparisons
RTOL = click.option(
    "--rtol", type=float, default=DEFAULT_RTOL, show_default=True, help="Relative tolerance for numbers."
)
FROM_A = click.option("--from-a", "fmt_a", type=FORMAT_NAMES, help="Format of A (default: detected).")
FROM_B = click.option("--from-b", "fmt_b", type=FORMAT_NAMES, help="Format of B (default: detected).")
TRANSLATION_REPORT = click.option(
    "--report",
    "report_path",
    metavar="FILE",
    type=click.Path(),
    help="The JSON report of translating A into B: show what it says of each difference.",
)

# ---- prove (translator/prove: the frameworks' own code on both files)
ROUNDTRIP_REPORT = click.option(
    "--report",
    "report_path",
    metavar="FILE",
    type=click.Path(),
    help="Write the JSON report of the translation there (SRC2DST --report's) to FILE.",
)
PROVE = click.option(
    "--prove",
    is_flag=True,
    help="Then prove the translation with both frameworks' own code, as `neoconv prove` (needs -o; "
    "--env/--src or the project's configuration file name the frameworks).",
)
ENVS = click.option(
    "--env",
    "envs",
    metavar="FMT=PYTHON",
    multiple=True,
    help="The interpreter that runs FMT's framework (e.g. neox=/opt/neox/bin/python); repeatable. "
    "Default: the configuration file's, else this interpreter when it has the framework.",
)
SOURCES = click.option(
    "--src",
    "sources",
    metavar="FMT=PATH",
    multiple=True,
    help="FMT's framework source checkout (neox=/opt/gpt-neox, cerebras=/opt/modelzoo/src, "
    "megatron=/opt/Megatron-LM, veomni=/opt/VeOmni); repeatable.",
)
TIMEOUT = click.option(
    "--timeout",
    type=click.FloatRange(min=1),
    default=1800.0,
    show_default=True,
    metavar="SECONDS",
    help="Longest a framework's probe may run.",
)
PLOT = click.option(
    "--plot",
    metavar="FILE.png",
    type=click.Path(),
    help="Also draw both learning rate curves and their difference (needs neoconv[plot]: matplotlib).",
)
CHECK_ENV = click.option(
    "--check-env",
    is_flag=True,
    help="Say which frameworks are ready to prove with (interpreter, source tree, version), and exit.",
)
PROVE_OPTIONS = (ENVS, SOURCES, TIMEOUT)

# ---- batch
OUT_DIR = click.option(
    "-o", "--output", "out_dir", metavar="OUT_DIR", type=click.Path(), help="Folder to mirror the tree into."
)
INCLUDE = click.option(
    "--include",
    multiple=True,
    metavar="GLOB",
    help="Only files matching (default per format, e.g. *.yml *.yaml); a pattern also matches folders.",
)
EXCLUDE = click.option(
    "--exclude",
    multiple=True,
    metavar="GLOB",
    help="Skip files and folders matching (--exclude rwkv skips rwkv/); repeatable.",
)
JOBS = click.option(
    "-j", "--jobs", type=click.IntRange(min=1), default=None, metavar="N", help="Parallel workers (default: CPU count)."
)
CHECK = click.option("--check", is_flag=True, help="Write nothing; exit 1 if any output would change.")
DIFF = click.option(
    "--diff", "show_diff", is_flag=True, help="With --check: print a unified diff of what would change."
)
SKIP_UNSUPPORTED = click.option(
    "--skip-unsupported",
    is_flag=True,
    help="Skip (and list) sources of a model family the target cannot hold (BERT, T5, ViT, ...) "
    "instead of failing them.",
)
PRUNE = click.option(
    "--prune",
    is_flag=True,
    help="Remove outputs whose source is gone (only files named as neoconv names its outputs, "
    "listed in the previous run's neoconv-report.json).",
)
IN_PLACE = click.option(
    "--in-place",
    is_flag=True,
    help="Write beside the sources; a changed file is backed up as *.bak unless --no-backup.",
)
NO_BACKUP = click.option("--no-backup", is_flag=True, help="With --in-place: do not keep *.bak copies.")
BATCH_QUIET = click.option("-q", "--quiet", is_flag=True, help="No progress and no summary lines.")

# ---- migrate
MIGRATE_CHECK = click.option("--check", is_flag=True, help="Write nothing; exit 1 if any file would change.")
BACKUP = click.option(
    "--backup", is_flag=True, help="Keep a *.bak copy of each file rewritten (version control usually is the backup)."
)

# ---- validate
FORMAT = click.option(
    "--format", "fmt", type=FORMAT_NAMES, help="The file's format (default: detected from its content)."
)
RELEASE = click.option(
    "--version",
    "version",
    metavar="V",
    shell_complete=complete.releases,
    help="The framework release to check against (a release label or alias from schemas/history, "
    "e.g. neox v2.0, cerebras 2.4, veomni v0.1.10, deepspeed 0.17.1; or a version `neoconv formats` "
    "lists; default: current).",
)
CONFIGS_ONLY = click.option(
    "--configs-only",
    is_flag=True,
    help="Skip files that are no config of a known framework (a pre-commit hook sees every YAML file).",
)
WRITTEN_BY = click.option(
    "--report",
    "report_path",
    metavar="FILE",
    type=click.Path(),
    help="The JSON report of the translation that wrote FILE: read FILE with the side files it lists "
    "(default: those FILE itself names, e.g. TrainingArguments' deepspeed:).",
)
SOURCE_LAYOUT = click.option(
    "--layout", "layout", metavar="NAME", shell_complete=complete.layouts, help="The file's layout (default: detected)."
)

# ---- explain
LIST = click.option(
    "--list",
    "listed",
    is_flag=True,
    help="Every canonical field with its key in each format (the default with no NAME).",
)

# ---- docs
DOCS_OUTPUT = click.option("-o", "--output", default="-", show_default=True, help="Where to write docs/mappings.md.")
DOCS_CHECK = click.option(
    "--check", is_flag=True, help="Exit 1 if OUTPUT (a file) differs from what the tables generate."
)


def layout(dst: str | None) -> Decorator | None:
    """--layout: the target's layouts (none for a target with one layout: the option is not shown)."""
    if dst is None:
        listed = "; ".join(f"{n}: {', '.join(s.layouts)}" for n, s in FORMATS.items() if s.layouts)
        # checked against the target once it is known (arguments.check_options), with the same message as the library's
        return click.option(
            "--layout",
            metavar="NAME",
            shell_complete=complete.layouts,
            help=f"Target layout ({listed}; default the first).",
        )
    spec = FORMATS[dst]
    if not spec.layouts:
        return None
    return click.option(
        "--layout",
        type=Lazy("layout", lambda: spec.layouts, f"{dst} layout"),
        help=f"{spec.title} layout to write (default {spec.default_layout}).",
    )


def model_config(src: str | None) -> Decorator | None:
    """--model-config, only for sources that keep the architecture apart (the format contract says)."""
    takers = [s for s in FORMATS.values() if s.takes_model_config]
    if src is not None and not FORMATS[src].takes_model_config:
        return None
    who = FORMATS[src].title if src else " or ".join(s.title for s in takers) + " source"
    return click.option(
        "--model-config",
        "model_config",
        metavar="FILE",
        type=click.Path(),
        help=f"{who}: the HuggingFace config.json with the architecture (default: found from "
        "model.config_path / model.model_path beside the YAML).",
    )


def version(side: str, fmt: str | None) -> Decorator:
    """--from-version / --to-version: a release of the format (a label or a name standing for one)."""
    flag, dest, what = (
        ("--from-version", "source_version", "Source")
        if side == "from"
        else ("--to-version", "target_version", "Target")
    )
    default = "the release the file's keys tell" if side == "from" else "the newest"
    if fmt is None:
        return click.option(
            flag,
            dest,
            metavar="V",
            help=f"{what} release (1.9, 2023-05-02, #538, 0.14.4, current; "
            f"`neoconv formats` lists them); default: {default}.",
        )
    return click.option(
        flag,
        dest,
        type=Release(fmt, flag),
        help=f"{what} {FORMATS[fmt].title} release (`neoconv formats` lists them); default: {default}.",
    )


def translation(src: str | None, dst: str | None) -> list[Decorator]:
    """The options of a translation from src to dst (None: either, as `convert` takes them)."""
    chosen = [
        OUTPUT,
        REPORT,
        SET,
        WITH,
        WORLD_SIZE,
        layout(dst),
        model_config(src),
        version("from", src),
        version("to", dst),
        PLAIN,
        *POLICY,
        PROVE,
        *PROVE_OPTIONS,
        QUIET,
        VERBOSE,
        COLOR,
        DEBUG,
    ]
    return [o for o in chosen if o is not None]
