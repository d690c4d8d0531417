"""Command line: `neoconv SRC2DST IN... [options]` for every format pair, `convert`, `batch`,
`validate`, `explain`, `formats`, `diff`, `roundtrip`, `docs`.

Commands are thin: they name their options (cli/options.py, each defined once) and hand the
values to their work (cli/translation.py, cli/batch.py, cli/inspect.py), which returns a
policy.Outcome; cli/run.py turns it (or what it raised) into the exit code: 0 done; 1 done but a
file failed, an entry fails --strict / --fail-on (not accepted by --baseline), an output would
change or a comparison found differences; 2 bad invocation or unreadable/invalid input; 130
interrupted.
"""

from __future__ import annotations

from typing import Any

import click

from ..core import __version__
from ..knowledge.registry import FORMATS, pairs
from . import complete
from . import options as o
from .group import SectionedGroup
from .run import guarded


@click.group(cls=SectionedGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="neoconv")
def main() -> None:
    """Translate LLM training configs between FRAMEWORKS.

    Every source setting is carried over, converted, or named in the report (stderr; --report
    FILE for JSON); the output is read back to check it. Exit codes: 0 done, 1 an entry fails
    --strict (lossy, unknown, missing) or --fail-on, 2 bad invocation or input.

    Shell completion: eval "$(_NEOCONV_COMPLETE=bash_source neoconv)" (zsh_source, fish_source).
    """


def frameworks() -> str:
    """Every registered format's framework, as --help names them ('GPT-NeoX, DeepSpeed, ... and Megatron-LM')."""
    names = [
        spec.title.removesuffix(" YAML").removesuffix(" JSON").removesuffix(" arguments") for spec in FORMATS.values()
    ]
    return ", ".join(names[:-1]) + " and " + names[-1] if len(names) > 1 else "".join(names)


main.help = (main.help or "").replace("FRAMEWORKS", frameworks(), 1)


def _translate(src: str, dst: str, inputs: tuple[str, ...], opts: dict[str, Any], convert: bool = False) -> None:
    from .translation import run_translation

    def command(fmt: str) -> str:  # the command that reads the input as `fmt`
        return f"neoconv convert --from {fmt} --to {dst}" if convert else f"neoconv {fmt}2{dst}"

    guarded(lambda: run_translation(src, dst, inputs, opts, command), opts["debug"], inputs)


INPUTS = click.argument("inputs", nargs=-1, required=True, metavar="IN...", type=click.Path(allow_dash=True))


def _pair_command(src: str, dst: str) -> click.Command:
    @click.command(
        name=f"{src}2{dst}",
        help=f"Translate {FORMATS[src].title} into {FORMATS[dst].title}. Several files of one config are merged "
        "as the framework merges them.",
        no_args_is_help=True,
    )
    @INPUTS
    @o.use(o.translation(src, dst))
    def command(inputs: tuple[str, ...], **opts: Any) -> None:
        _translate(src, dst, inputs, opts)

    return command


for _src, _dst in pairs():
    main.add_command(_pair_command(_src, _dst))


@main.command("convert", no_args_is_help=True, short_help="Translate files from one format to another.")
@o.use(o.SOURCE, o.TARGET)
@INPUTS
@o.use(o.translation(None, None))
def convert(src: str, dst: str, inputs: tuple[str, ...], **opts: Any) -> None:
    """Translate IN... from one format to another (as the SRC2DST commands)."""
    _translate(src, dst, inputs, opts, convert=True)


@main.command("batch", no_args_is_help=True, short_help="Translate a whole tree of configs (--check, --in-place).")
@click.argument("pair", metavar="SRC2DST", shell_complete=complete.pair)
@click.argument("src_dir", metavar="SRC_DIR", type=click.Path())
@o.use(
    o.OUT_DIR,
    o.INCLUDE,
    o.EXCLUDE,
    o.WITH,
    o.JOBS,
    o.CHECK,
    o.DIFF,
    o.PRUNE,
    o.SKIP_UNSUPPORTED,
    o.IN_PLACE,
    o.NO_BACKUP,
    o.SET,
    o.WORLD_SIZE,
    o.layout(None),
    o.PLAIN,
    o.POLICY,
    o.PROVE,
    o.PROVE_OPTIONS,
    o.BATCH_QUIET,
    o.DEBUG,
)
def batch(pair: str, src_dir: str, **opts: Any) -> None:
    """Translate every config under SRC_DIR into OUT_DIR (summary in OUT_DIR/neoconv-report.json).

    Exit 0 when every file translated, 1 when any failed (--strict / --fail-on: or has an entry
    of those statuses the --baseline does not accept; --check: or would change), 2 on a bad invocation.
    """
    from .batch import run

    guarded(lambda: run(pair, src_dir, opts), opts["debug"], (src_dir,))


@main.command("migrate", no_args_is_help=True, short_help="Rewrite configs in place in their framework's current form.")
@click.argument("files", nargs=-1, required=True, metavar="FILE...", type=click.Path())
@o.use(
    o.FORMAT,
    o.layout(None),
    o.version("to", None),
    o.SET,
    o.MIGRATE_CHECK,
    o.DIFF,
    o.BACKUP,
    o.PLAIN,
    o.NO_VERIFY,
    o.QUIET,
    o.VERBOSE,
    o.DEBUG,
)
def migrate(files: tuple[str, ...], **opts: Any) -> None:
    """Rewrite each FILE in place in its own framework's current form (--layout: Cerebras trainer,
    VeOmni nested; current key spellings), keeping its comments and formatting. Files that are no
    config of --format (of any framework, without it) are left alone. Exit 0 nothing to change, 1
    files changed (or would, with --check) or failed, 2 bad invocation. What the pre-commit hooks run."""
    from .migrate import run

    guarded(lambda: run(files, opts), opts["debug"], files)


@main.command("validate", no_args_is_help=True, short_help="Is FILE a valid config of its framework (and release)?")
@click.argument("files", nargs=-1, required=True, metavar="FILE...", type=click.Path())
@o.use(
    o.FORMAT, o.RELEASE, o.SOURCE_LAYOUT, o.model_config(None), o.WRITTEN_BY, o.CONFIGS_ONLY, o.JSON, o.QUIET, o.DEBUG
)
def validate(files: tuple[str, ...], **opts: Any) -> None:
    """Check each FILE against its framework: the schema's types and enums, keys the framework (at
    --version) does not read, the relations every framework assumes (heads dividing the width, ...).
    One line per problem. Exit 0 valid, 1 problems, 2 a file that cannot be read as a config."""
    from .inspect import validate as run

    guarded(lambda: run(files, opts), opts["debug"], files)


@main.command("explain", short_help="What a canonical field or framework key means; --list: all.")
@click.argument("name", required=False, shell_complete=complete.field_or_key)
@o.use(o.LIST, o.JSON)
def explain(name: str | None, listed: bool, as_json: bool) -> None:
    """Explain a canonical field (model.hidden_size) or a framework key (neox:rotary_pct); with no
    NAME, list every canonical field."""
    from .inspect import explain as run

    guarded(lambda: run(name, listed, as_json))


@main.command("formats")
def formats() -> None:
    """List formats, their layouts and documented versions."""
    from .inspect import formats as run

    guarded(run)


@main.command("diff", no_args_is_help=True, short_help="Do two configs (any formats) describe the same run?")
@click.argument("a", type=click.Path())
@click.argument("b", type=click.Path())
@o.use(o.FROM_A, o.FROM_B, o.RTOL, o.JSON, o.WORLD_SIZE, o.TRANSLATION_REPORT, o.DEBUG)
def diff(a: str, b: str, **opts: Any) -> None:
    """Do A and B describe the same training run? Compares canonical fields (exit 0 equal, 1 different)."""
    from .inspect import diff as run

    guarded(lambda: run(a, b, opts), opts["debug"], (a, b))


@main.command("prove", short_help="Do both frameworks' own code agree that a translation is the same run?")
@click.argument("paths", nargs=-1, metavar="SRC... OUT", type=click.Path())
@o.use(
    o.FROM_A,
    o.FROM_B,
    o.TRANSLATION_REPORT,
    o.WORLD_SIZE,
    o.model_config("veomni"),
    *o.PROVE_OPTIONS,
    o.RTOL,
    o.PLOT,
    o.JSON,
    o.CHECK_ENV,
    o.VERBOSE,
    o.DEBUG,
)
def prove(paths: tuple[str, ...], **opts: Any) -> None:
    """Run SRC (A) and its translation OUT (B) through their frameworks' own config code, scheduler
    and model builder (each by its own interpreter: --env, --src; nothing is trained, no GPU or
    network is touched) and compare what they say: accepted, learning rate at every step, global
    batch, tokens per step, steps, parameters. With --report (the translation's JSON report) each
    difference is marked as named by it or not. Exit 0 equal or named, 1 not, 2 a side could not run."""
    from .prove import run

    guarded(lambda: run(paths, opts), opts["debug"], paths)


@main.command("roundtrip", no_args_is_help=True, short_help="What does not survive a translation there and back?")
@click.argument("pair", metavar="SRC2DST", shell_complete=complete.pair)
@INPUTS
@o.use(
    o.RTOL,
    o.JSON,
    o.WORLD_SIZE,
    o.SET,
    o.WITH,
    o.layout(None),
    o.model_config(None),
    o.version("from", None),
    o.version("to", None),
    o.ROUNDTRIP_REPORT,
    o.DEBUG,
)
def roundtrip(pair: str, inputs: tuple[str, ...], **opts: Any) -> None:
    """Translate there and back; list what did not survive (exit 0 all survived, 1 otherwise). Takes the
    pair's options: --layout (the target's), --with, --model-config, --from-version/--to-version
    (the way back reads the target's release and writes the source's), --report (the translation there)."""
    from .inspect import roundtrip as run

    guarded(lambda: run(pair, inputs, opts), opts["debug"], inputs)


@main.command("config", short_help="Which project configuration file applies here, and what it sets.")
@click.argument("path", required=False, type=click.Path(), metavar="[PATH]")
def config(path: str | None) -> None:
    """Show the project configuration file that applies to PATH (a folder or file; default the current
    folder): the first .neoconv.toml, or pyproject.toml with a [tool.neoconv] table, from there upwards,
    and the options it gives every command (the command line wins over it)."""
    from .project import show

    guarded(lambda: show(path))


@main.command("docs", short_help="Generate the mapping reference from the tables.")
@o.use(o.DOCS_OUTPUT, o.DOCS_CHECK)
def docs(output: str, check: bool) -> None:
    """Generate the mapping reference (docs/mappings.md) from the tables."""
    from .inspect import docs as run

    guarded(lambda: run(output, check))
