"""`neoconv prove`: the frameworks' own code confirms a translation.

Each side (the source and its translation) is given to its framework's probe
(translator/prove/probes/<format>_probe.py), run by that framework's interpreter; the two answers
are compared (compare.py) into a certificate (certificate.py) whose differences are checked against
the translation's report.

    >>> from translator.prove import prove
    >>> cert = prove(["160M.yml"], ["160M.yaml"], "neox", "cerebras", world_size=8,
    ...              env={"neox": "/opt/neox/bin/python"}, src={"neox": "/opt/gpt-neox"})  # doctest: +SKIP
    >>> cert.code  # doctest: +SKIP
    0

Imports the library API (to read each file's canonical values: where the learning rate's phases
change, a run length for a format that holds none) and the report; nothing of the CLI.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from ..core.ir import DEFAULT_RTOL
from .certificate import Certificate, Side
from .compare import annotate, rows
from .config import ProveConfig
from .config import find as find_config
from .environments import Environment, resolve
from .hints import hints
from .probes import probes
from .runner import DEFAULT_TIMEOUT, ProbeAnswer, run

__all__ = ["Certificate", "ProveOptions", "Pair", "prove", "prove_many", "environments"]


@dataclass(frozen=True)
class ProveOptions:
    world_size: int | None = None
    env: dict[str, str] = field(default_factory=dict)  # format -> interpreter (--env)
    src: dict[str, str] = field(default_factory=dict)  # format -> source tree (--src)
    config: ProveConfig | None = None  # the project's configuration file (default: found from the current folder)
    rtol: float = DEFAULT_RTOL
    timeout: float = DEFAULT_TIMEOUT
    count_parameters: bool = True
    model_config: str | None = None  # a VeOmni side's HF config.json, when its YAML names a hub model (--model-config)


@dataclass(frozen=True)
class Pair:
    """A source and its translation, with the translation's JSON report when there is one."""

    source: tuple[str, ...]
    output: str
    report: dict[str, Any] | None = None
    report_file: str | None = None
    output_files: tuple[str, ...] = ()  # read with the output: the side files the translation wrote beside it
    output_model_config: str | None = None  # its side file holding the architecture (VeOmni's config.json)


def environments(formats: list[str], options: ProveOptions) -> dict[str, Environment]:
    config = options.config if options.config is not None else find_config()
    return {fmt: resolve(fmt, options.env, options.src, config) for fmt in formats}


def prove_many(pairs: list[Pair], src: str, dst: str, options: ProveOptions | None = None) -> list[Certificate]:
    """A certificate per pair; each side's files are probed in one process of its framework."""
    options = options or ProveOptions()
    missing = [fmt for fmt in (src, dst) if fmt not in probes()]
    envs = environments([f for f in (src, dst) if f in probes()], options)
    jobs_a, jobs_b = [], []
    for pair in pairs:
        job_a, job_b = hints(
            list(pair.source),
            src,
            [pair.output, *pair.output_files],
            dst,
            options.world_size,
            model_config_b=pair.output_model_config,
        )
        for job in (job_a, job_b):
            job["count_parameters"] = options.count_parameters
            job["world_size"] = options.world_size
            if options.model_config:
                job["model_config"] = os.path.abspath(options.model_config)
        if pair.output_model_config and not options.model_config:
            job_b["model_config"] = os.path.abspath(pair.output_model_config)
        jobs_a.append(job_a)
        jobs_b.append(job_b)

    def answers(fmt: str, jobs: list[dict[str, Any]]) -> list[ProbeAnswer]:
        if fmt in missing:
            return [ProbeAnswer(fmt, None, f"neoconv has no probe for {fmt}") for _ in jobs]
        return run(envs[fmt], jobs, timeout=options.timeout)

    if src == dst:  # one process serves both sides
        both = answers(src, jobs_a + jobs_b)
        side_a, side_b = both[: len(pairs)], both[len(pairs) :]
    else:
        with ThreadPoolExecutor(max_workers=2) as pool:
            future_a, future_b = pool.submit(answers, src, jobs_a), pool.submit(answers, dst, jobs_b)
            side_a, side_b = future_a.result(), future_b.result()
    out = []
    for pair, a, b in zip(pairs, side_a, side_b):
        cert = Certificate(
            Side(", ".join(pair.source), src, a),
            Side(pair.output, dst, b),
            options.world_size,
            report_file=pair.report_file,
        )
        if a.result is not None and b.result is not None:
            cert.rows = rows(a.result, b.result, options.rtol)
            if pair.report is not None:
                annotate(cert.rows, pair.report)
                cert.report_file = pair.report_file or "the translation's report"
        out.append(cert)
    return out


def prove(
    source: list[str],
    output: list[str] | str,
    src: str,
    dst: str,
    *,
    report: dict[str, Any] | None = None,
    report_file: str | None = None,
    options: ProveOptions | None = None,
    **given: Any,
) -> Certificate:
    """Probe `source` (format src) and its translation `output` (format dst) with their frameworks'
    own code and compare what they say. `given`: ProveOptions fields (world_size=8, env={...}, ...)."""
    options = options or ProveOptions(**given)
    out = output if isinstance(output, str) else output[0]
    return prove_many([pair_of(tuple(source), out, dst, report, report_file)], src, dst, options)[0]


def pair_of(
    source: tuple[str, ...], output: str, dst: str, report: dict[str, Any] | None, report_file: str | None
) -> Pair:
    """A Pair whose output is read as its framework runs it: with the side files the translation wrote
    beside it (those the report lists, else the one the output names)."""
    from ..services.side_files import output_files

    beside = output_files(output, dst, report)
    return Pair(source, output, report, report_file, tuple(beside.paths[1:]), beside.model_config)
