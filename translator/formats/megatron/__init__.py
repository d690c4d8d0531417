"""Megatron-LM command-line arguments (`pretrain_gpt.py --num-layers 24 --hidden-size 2048 ...`):
argument files (`--flag value` words, comments, backslash continuations), bash arrays
(`GPT_MODEL_ARGS=( ... )` with the torchrun line) and Megatron's own CI YAML (`MODEL_ARGS:`) are
read (syntax.py, lexer.py) and parsed as Megatron's argparse parser does (options.py, from
schemas/megatron.schema.json); argument files are written (writer.py). Its formulas in
formulas.py, schedule.py and model.py."""

from __future__ import annotations

from ..spec import FormatSpec


def _spelling(key: str) -> str:
    """An option as Megatron's argparse stores it: `--norm-epsilon` is `layernorm_epsilon`."""
    if not key.startswith("-"):
        return key
    from .options import dest_of  # the option table, loaded when a key needs spelling

    return dest_of(key) or key.lstrip("-").replace("-", "_")


def _unkept_formatting(text: str) -> str | None:
    """A bash script or an argument file is written as an argument file (a CI YAML keeps its text)."""
    from .syntax import syntax_of

    kind = syntax_of(text)
    if kind == "bash":
        return "the source is a bash script: its arguments are written as an argument file, its shell code is not kept"
    if kind == "args":
        return "the source is an argument file: written one option per line, its comments are not kept"
    return None


FORMAT = FormatSpec(
    name="megatron",
    title="Megatron-LM arguments",
    reader=f"{__name__}.reader",
    writer=f"{__name__}.writer",
    suffix=".args",
    globs=("*.args",),
    key_spelling=_spelling,
    unkept_formatting=_unkept_formatting,
)
