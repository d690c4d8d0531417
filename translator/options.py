"""Click options shared by the commands, defined once."""

from __future__ import annotations

from typing import Any, Callable

import click

F = Callable[..., Any]


def translation_options(func: F) -> F:
    options = [
        click.option("-o", "--output", "output", metavar="OUT", default="-", show_default=True,
                     help="Write the translated config here ('-' = stdout)."),
        click.option("--report", "report_path", metavar="FILE",
                     help="Write the JSON report to FILE ('-' = stdout when the config goes to a file)."),
        click.option("--strict", is_flag=True,
                     help="Exit 1 when any entry is lossy, unknown or missing (--fail-on lossy,unknown,missing)."),
        click.option("--fail-on", "fail_on", metavar="STATUSES",
                     help="Exit 1 when an entry has one of these report statuses, e.g. lossy,unknown,missing,dropped."),
        click.option("--baseline", metavar="FILE",
                     help="Entries already accepted (a previous JSON report, or a list of entries): only others fail."),
        click.option("--no-verify", "no_verify", is_flag=True,
                     help="Do not read the output back to check that the report names every difference."),
        click.option("--set", "set_values", metavar="FIELD=VALUE", multiple=True,
                     help="Give a canonical field a value (see `neoconv explain`); repeatable."),
        click.option("--with", "with_files", metavar="FILE", multiple=True,
                     help="Companion file read with the input (a NeoX ds_config.json, ...); repeatable."),
        click.option("--world-size", type=click.IntRange(min=1), metavar="N",
                     help="GPUs of the source run, to derive the global batch (parallel.world_size)."),
        click.option("--layout", metavar="NAME", help="Target layout (e.g. cerebras: legacy)."),
        click.option("--model-config", "model_config", metavar="FILE",
                     help="VeOmni source: the HuggingFace config.json with the architecture (default: found "
                          "from model.config_path / model.model_path beside the YAML)."),
        click.option("--from-version", "source_version", metavar="V",
                     help="Source release (1.9, 2023-05-02, #538, 0.14.4, current; `neoconv formats` lists them); "
                          "default: the release the file's keys tell."),
        click.option("--to-version", "target_version", metavar="V", help="Target release (default: the newest)."),
        click.option("-q", "--quiet", is_flag=True, help="No report table on stderr."),
        click.option("-v", "--verbose", is_flag=True, help="Show every report entry, not only the notable ones."),
        click.option("--debug", is_flag=True, help="Show a traceback on errors."),
    ]  # fmt: skip
    for option in reversed(options):
        func = option(func)
    return func
