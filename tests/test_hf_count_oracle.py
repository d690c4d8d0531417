"""Oracle tier: the config.json files neoconv writes for real runs, built by transformers on the meta
device (AutoModelForCausalLM.from_config under `torch.device("meta")`: no memory, no weights); the
number of parameters it builds must be translator/knowledge/model_size.py's count of the source config and of
the written file.

Sources: every Pythia config of the shared corpus (neox2hf, the vocabulary given with --set as the
published checkpoints pad it) and Model Zoo's Llama 3.1, Mistral and Mixtral configs (cerebras2hf).
Pythia's totals are also the ones published for the checkpoints (tests/test_model_size.py: the paper's
and the hub's numbers), so the chain corpus -> neoconv -> transformers ends at the paper's totals.
Runs tests/oracle_checks/check_hf.py (`count` jobs) with the `hf-torch` oracle (tests/oracle.py), one
process for all files; skipped with the reason when that environment or the corpus is absent.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import oracle
import pytest
from conftest import CORPUS

from neoconv.api import read_ir, translate
from neoconv.knowledge.model_size import count_parameters

from test_model_size import MODELS

pytestmark = pytest.mark.oracle

# corpus file -> (padded vocabulary of the published checkpoint, its fixture with the published total)
PYTHIA = {
    "14M.yml": (50304, None),
    "31M.yml": (50304, None),
    "70M.yml": (50304, "pythia-70m"),
    "160M.yml": (50304, "pythia-160m"),
    "410M.yml": (50304, "pythia-410m"),
    "1B.yml": (50304, "pythia-1b"),
    "1-4B.yml": (50304, "pythia-1.4b"),
    "2-8B.yml": (50304, "pythia-2.8b"),
    "6-9B.yml": (50432, "pythia-6.9b"),
    "12B.yml": (50688, "pythia-12b"),
}
ZOO = [
    "cerebras-trainer/llama/params_llama3p1_8b_msl_128k.yaml",
    "cerebras-trainer/mistral/params_mistral_7B_msl128k.yaml",
    "cerebras-trainer/mixtral/params_mixtral_8x7b.yaml",
]


def sources() -> dict[str, tuple[Path, str, dict[str, Any]]]:
    """id -> (corpus file, its format, --set values)."""
    out: dict[str, tuple[Path, str, dict[str, Any]]] = {}
    for name, (vocab, _) in PYTHIA.items():
        out[f"pythia/{name}"] = (CORPUS / "neox" / "pythia" / name, "neox", {"model.vocab_size": vocab})
    for name in ZOO:
        out[name] = (CORPUS / name, "cerebras", {})
    return out


SOURCES = sources()


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[oracle.Verdict, int, int]]:
    """id -> (transformers' verdict with its count, neoconv's count of the source, of the written file)."""
    why = oracle.unavailable("hf-torch")
    if why:
        pytest.skip(why)
    missing = [str(path) for path, _, _ in SOURCES.values() if not path.exists()]
    if missing:
        pytest.skip(f"the shared corpus {CORPUS} is not present (it lives beside the checkout): {missing[0]}")
    folder = tmp_path_factory.mktemp("written")
    jobs, counts = [], {}
    for n, (key, (path, fmt, options)) in enumerate(sorted(SOURCES.items())):
        result = translate([str(path)], fmt, "hf", set_values=options)
        written = folder / f"{n}.json"
        written.write_text(result.dump())
        source = count_parameters(read_ir([str(path)], fmt, set_values=options).ir.plain()).total
        mine = count_parameters(read_ir([str(written)], "hf").ir.plain()).total
        counts[key] = (source, mine)
        jobs.append({"id": key, "files": [str(written)], "count": True})
    verdicts = oracle.run("hf-torch", jobs)
    failed = {k: v.error for k, v in verdicts.items() if not v.accepted}
    assert not failed, f"transformers did not build: {failed}"
    return {key: (verdicts[key], *counts[key]) for key in counts}


@pytest.mark.parametrize("key", sorted(SOURCES))
def test_transformers_builds_the_source_s_parameter_count(key: str, built: dict[str, Any]) -> None:
    verdict, source, mine = built[key]
    assert verdict.values["parameters"] == source == mine


@pytest.mark.parametrize("name", sorted(n for n, (_, fixture) in PYTHIA.items() if fixture))
def test_neox2hf_on_pythia_builds_the_published_total(name: str, built: dict[str, Any]) -> None:
    """E.g. Pythia-1.4B: 1,414,647,808 parameters, as transformers builds the config.json neoconv wrote."""
    fixture = PYTHIA[name][1]
    assert fixture is not None
    assert built[f"pythia/{name}"][0].values["parameters"] == MODELS[fixture][1]


def test_the_oracle_counts_what_its_class_holds(built: dict[str, Any]) -> None:
    """The builds are of the written classes (not a fallback): GPT-NeoX for Pythia, Model Zoo's
    models as their own HF classes."""
    classes = {key: verdict.values["class"] for key, (verdict, _, _) in built.items()}
    assert {classes[k] for k in classes if k.startswith("pythia/")} == {"GPTNeoXConfig"}
    assert [classes[k] for k in ZOO] == ["LlamaConfig", "MistralConfig", "MixtralConfig"], json.dumps(classes)
