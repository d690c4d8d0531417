"""The project configuration file's options (io/project_config.py finds and reads the file) applied to
a command's options: a key sets the option of the same name (`world-size = 8` is `--world-size 8`) on
every command that has it, checked as the command line checks it; the command line wins. Sub-tables
(`prove`) belong to the commands that read them."""

from __future__ import annotations

from typing import Any, Iterable

import click

from ..core.errors import UsageError
from ..io.project_config import ProjectConfig, common_folder, find

# key of the file -> (the option's destination, whether its values are paths relative to the file)
OPTIONS: dict[str, tuple[str, bool]] = {
    "world-size": ("world_size", False),
    "set": ("set_values", False),
    "with": ("with_files", True),
    "layout": ("layout", False),
    "from-version": ("source_version", False),
    "to-version": ("target_version", False),
    "strict": ("strict", False),
    "fail-on": ("fail_on", False),
    "baseline": ("baseline", True),
    "plain": ("plain", False),
    "no-verify": ("no_verify", False),
    "include": ("include", False),
    "exclude": ("exclude", False),
    "jobs": ("jobs", False),
    "skip-unsupported": ("skip_unsupported", False),
    "format": ("fmt", False),
}
SECTIONS = ("prove",)  # tables other commands read from the same file
CONFIG_SETS = "project_sets"  # opts key: the file's --set values, kept apart (they may name other targets)
# options that may be given per format, as a table (`layout = { cerebras = "trainer", veomni = "nested" }`):
# the side of the translation whose format picks the value
PER_FORMAT = {"layout": "dst", "to-version": "dst", "from-version": "src", "format": None}
BY_FORMAT = "project_by_format"  # opts key: {dest: (side, {format: value})}


def apply(opts: dict[str, Any], paths: Iterable[str]) -> ProjectConfig:
    """Fill `opts` from the project configuration found from the paths' common folder upwards, for
    every option the command has and the command line did not give. Says on stderr which file gave
    which options (unless -q)."""
    config = find(common_folder(list(paths)))
    opts[CONFIG_SETS] = ()
    opts[BY_FORMAT] = {}
    if config.file is None:
        return config
    ctx = click.get_current_context()
    params = {param.name: param for param in ctx.command.params}
    given: list[str] = []
    for key, value in config.table.items():
        if key in SECTIONS:
            continue
        if key not in OPTIONS:
            raise UsageError(
                f"{config.where}: no option {key!r}; it takes {', '.join(OPTIONS)} (and the tables "
                f"{', '.join(SECTIONS)})"
            )
        dest, is_path = OPTIONS[key]
        param = params.get(dest)
        if param is None:
            continue  # an option this command does not have
        if ctx.get_parameter_source(dest) in _GIVEN and dest != "set_values":
            continue  # the command line wins
        if isinstance(value, dict) and PER_FORMAT.get(key):
            opts[BY_FORMAT][dest] = (PER_FORMAT[key], _per_format(config, key, value))
            given.append(key)
            continue
        typed = _typed(config, key, value, param, ctx, is_path)
        if dest == "set_values":
            opts[CONFIG_SETS] = typed
            given.append(f"{key} ({len(typed)})")
            continue
        if dest == "world_size" and any(
            item.partition("=")[0].strip() == "parallel.world_size" for item in opts.get("set_values", ())
        ):
            continue  # --set parallel.world_size on the command line says the same thing
        opts[dest] = typed
        given.append(key)
    if given and not opts.get("quiet"):
        click.echo(f"neoconv: options from {config.where}: {', '.join(given)}", err=True)
    return config


_GIVEN = (click.core.ParameterSource.COMMANDLINE, click.core.ParameterSource.ENVIRONMENT)


def for_pair(opts: dict[str, Any], src: str, dst: str) -> dict[str, Any]:
    """`opts` with the file's per-format values for a translation from `src` into `dst` filled in."""
    chosen = dict(opts)
    for dest, (side, table) in opts.get(BY_FORMAT, {}).items():
        value = table.get(dst if side == "dst" else src)
        if value is not None:
            chosen[dest] = value
    return chosen


def _per_format(config: ProjectConfig, key: str, value: dict[str, Any]) -> dict[str, str]:
    from ..knowledge.registry import FORMATS

    for fmt, item in value.items():
        if fmt not in FORMATS:
            raise UsageError(f"{config.where}: {key}: {fmt!r} is no format ({', '.join(FORMATS)})")
        if not isinstance(item, str):
            raise UsageError(f"{config.where}: {key}: {fmt} = {item!r}: give the name as text")
    return dict(value)


def set_values(opts: dict[str, Any], dst: str | None) -> tuple[str, ...]:
    """The --set values a translation into `dst` takes: the file's (those for another target left
    out, and those the command line gives a field of), then the command line's."""
    from ..knowledge.registry import FORMATS

    cli = tuple(opts.get("set_values", ()))
    _no_two_world_sizes(cli, opts.get("world_size"))
    named = {item.partition("=")[0].strip() for item in cli}
    if opts.get("world_size") is not None:
        named.add("parallel.world_size")  # --world-size (or the file's world-size) gives it
    kept = []
    for item in opts.get(CONFIG_SETS, ()):
        head, colon, _ = item.partition(":")
        if colon and head in FORMATS and "=" not in head and head != dst:
            continue  # a key of another target's
        if item.partition("=")[0].strip() in named:
            continue
        kept.append(item)
    return (*kept, *cli)


def show(path: str | None) -> Any:
    """`neoconv config [PATH]`: the file found and what it sets, one `key = value` line each."""
    from pathlib import Path

    from ..io.project_config import DEDICATED, PYPROJECT
    from ..services.policy import Outcome

    start = Path(path) if path else Path.cwd()
    config = find(start)
    if config.file is None:
        click.echo(
            f"no project configuration file for {start} (searched upwards for {DEDICATED}, and {PYPROJECT} "
            "with a [tool.neoconv] table)"
        )
        return Outcome()
    click.echo(config.where)
    for key, value in config.table.items():
        if key not in OPTIONS and key not in SECTIONS:
            raise UsageError(
                f"{config.where}: no option {key!r}; it takes {', '.join(OPTIONS)} (and the tables "
                f"{', '.join(SECTIONS)})"
            )
        if key in SECTIONS:
            click.echo(f"[{key}] (read by neoconv {key})")
            continue
        click.echo(f"{key} = {_toml(value)}")
    return Outcome()


def _toml(value: Any) -> str:
    """A value as the file spells it (TOML), one line."""
    import json

    if isinstance(value, dict):
        return "{ " + ", ".join(f"{key} = {_toml(item)}" for key, item in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else str(value)


def _no_two_world_sizes(cli: tuple[str, ...], world_size: int | None) -> None:
    """`--world-size 8 --set parallel.world_size=16`: two answers to one question, refused (8 won silently)."""
    if world_size is None:
        return
    for item in cli:
        field, _, text = item.partition("=")
        if field.strip() == "parallel.world_size" and text.strip() != str(world_size):
            raise UsageError(f"--world-size {world_size} and --set {item.strip()} disagree: give the world size once")


def _typed(
    config: ProjectConfig, key: str, value: Any, param: click.Parameter, ctx: click.Context, is_path: bool
) -> Any:
    """The file's value, checked and converted as the command line's would be."""
    multiple = getattr(param, "multiple", False)
    if multiple:
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(item, (str, int, float)) and not isinstance(item, bool) for item in items):
            raise UsageError(f'{config.where}: {key} must be a list of text values, e.g. {key} = ["..."]')
        value = [config.resolve(str(item)) if is_path else str(item) for item in items]
    elif isinstance(value, (list, dict)) and key != "fail-on":
        raise UsageError(f"{config.where}: {key} takes one value, not {type(value).__name__}")
    elif key == "fail-on" and isinstance(value, list):
        value = ",".join(str(item) for item in value)
    elif is_path and isinstance(value, str):
        value = config.resolve(value)
    if getattr(param, "is_flag", False) and not isinstance(value, bool):
        raise UsageError(f"{config.where}: {key} is true or false, not {value!r}")
    try:
        typed = param.type_cast_value(ctx, value)
    except click.BadParameter as exc:
        raise UsageError(f"{config.where}: {key}: {exc.message}") from None
    return tuple(typed) if multiple else typed
