"""Coverage-guided fuzzing of the loaders, the translation and the writers (local only; not run in CI).

    pip install atheris
    python tools/fuzz_atheris.py -max_total_time=600 [corpus_dir]

Each input is read as a config file of a format chosen by its first byte and translated to another
format; the output text, the report table and the JSON report are produced as the CLI would. A
NeoconvError is a clean outcome; any other exception (or a crash, or a hang past -timeout) is a
finding, and so is JSON output that strict JSON readers refuse (NaN, Infinity). The run starts
from SEEDS (written to a temp folder and fuzzed with any corpus_dir given): small configs of every
format plus the shapes that broke before (integers past the float range, non-string keys, dotted
JSON keys, 1e999). The hypothesis suite in tests/test_fuzz.py checks the same contract in CI.
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

import atheris

with atheris.instrument_imports():
    import importlib
    import pkgutil

    import neoconv
    from neoconv.api import translate
    from neoconv.core.errors import NeoconvError
    from neoconv.knowledge.registry import FORMATS

    # every module, also those the CLI imports lazily and each format package's
    for _module in pkgutil.walk_packages(neoconv.__path__, neoconv.__name__ + "."):
        if not _module.name.endswith("__main__"):
            importlib.import_module(_module.name)

PAIRS = [(src, dst) for src in sorted(FORMATS) for dst in sorted(FORMATS) if FORMATS[dst].can_write]
WORKDIR = Path(tempfile.mkdtemp(prefix="neoconv-fuzz-"))
HUGE = "1" + "0" * 400

NEOX = "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\nmax_position_embeddings: 128\n"
SEEDS: dict[str, str] = {
    "neox": NEOX
    + "train_iters: 1000\nwarmup: 0.01\noptimizer:\n  type: Adam\n  params:\n    lr: 0.0006\n    betas: [0.9, 0.95]\n",
    "neox-huge-int": NEOX + f"train_iters: {HUGE}\nlr: {HUGE}\n",
    "neox-near-float-max": NEOX + "train_iters: 1" + "0" * 307 + "\nwarmup: 1.7e+308\n",
    "neox-non-string-keys": NEOX + "optimizer:\n  type: Adam\n  1.5: x\n  null: 1\n  true: 2\n",
    "neox-attention": NEOX + "attention_config: [[[global, local], all]]\n",
    "deepspeed": '{"train_batch_size": 8, "train_micro_batch_size_per_gpu": 1,'
    ' "optimizer": {"type": "Adam", "params": {"lr": 0.001, "betas": [0.9, 0.999]}}}',
    "deepspeed-huge": '{"train_batch_size": ' + HUGE + ', "foo": 1e999, "gradient_clipping": -1e400}',
    "deepspeed-dotted": '{"train_batch_size": 8, "optimizer.type": "Lamb", "x": {"1.5": 2}}',
    "cerebras": "train_input:\n  batch_size: 8\nmodel:\n  hidden_size: 64\n  num_hidden_layers: 2\n  num_heads: 4\n"
    "optimizer:\n  optimizer_type: AdamW\n  learning_rate: 0.001\nrunconfig:\n  max_steps: 10\n",
    "cerebras-huge": f"model:\n  hidden_size: {HUGE}\n  1.5: x\nrunconfig:\n  max_steps: {HUGE}\n",
    "veomni": "model:\n  config_path: .\ntrain:\n  optimizer:\n    lr: 1.0e-4\n  max_steps: 10\n",
    "veomni-huge": f"train:\n  optimizer:\n    lr: {HUGE}\n  null: 1\n  max_steps: {HUGE}\n",
}


def _seed_folder() -> str:
    folder = WORKDIR / "seeds"
    folder.mkdir()
    for name, text in SEEDS.items():
        src = name.split("-")[0]
        for i, (s, d) in enumerate(PAIRS):
            if s == src:
                (folder / f"{name}-{d}").write_bytes(bytes([i]) + text.encode())
    return str(folder)


def _no_constant(word: str) -> None:
    raise AssertionError(f"JSON output holds {word}, which JSON readers refuse")


def one_input(data: bytes) -> None:
    if not data:
        return
    src, dst = PAIRS[data[0] % len(PAIRS)]
    path = WORKDIR / f"input{FORMATS[src].suffix}"
    path.write_bytes(data[1:])
    try:
        result = translate(str(path), src, dst, output=str(WORKDIR / "out" / f"o{FORMATS[dst].suffix}"))
        text = result.dump()
        result.report.render_table(verbose=True)
        json.dumps(result.report.to_json(), allow_nan=False)
    except NeoconvError:
        return
    if FORMATS[dst].suffix == ".json":
        json.loads(text, parse_constant=_no_constant)
    for side in result.side_files.values():
        json.loads(side, parse_constant=_no_constant)


def main() -> None:
    atheris.Setup(sys.argv + [_seed_folder()], one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
