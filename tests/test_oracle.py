"""Oracle tier: what neoconv writes, loaded by each framework's own config code, with the values the
framework derives compared with what neoconv meant. Opt-in (`pytest -m oracle`); each test skips,
with the reason, when its framework's environment is not configured (tests/oracle.py,
tools/oracle_setup.sh). The matrix over the whole corpus is tests/test_oracle_matrix.py.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import oracle
import pytest
import yaml
from cerebras_corpus import LEGACY, numbers, rel, translate_or_known
from conftest import CORPUS, FIXTURES, corpus_dir, corpus_files

from neoconv import Status, translate
from neoconv.api import read_ir
from neoconv.formats.deepspeed.scheduler import read as ds_schedule
from neoconv.formats.hf import model_types as hf_config
from neoconv.io.documents import flatten
from neoconv.schedule.fields import parse

pytestmark = pytest.mark.oracle

DS = FIXTURES / "inputs" / "deepspeed"
VEOMNI = FIXTURES / "inputs" / "veomni"
# transformers 5 moves the classic RoPE keys into rope_parameters
MOVED = {
    "rotary_pct": "partial_rotary_factor",
    "partial_rotary_factor": "partial_rotary_factor",
    "rotary_emb_base": "rope_theta",
    "rope_theta": "rope_theta",
}


def need(*names: str) -> None:
    for name in names:
        why = oracle.unavailable(name)
        if why:
            pytest.skip(why)


def check(name: str, jobs: list[dict[str, Any]]) -> dict[str, oracle.Verdict]:
    verdicts = oracle.run(name, jobs)
    errors = {k: v.error for k, v in verdicts.items() if v.verdict == "error"}
    assert not errors, f"the {name} check program failed (not the framework's verdict): {errors}"
    return verdicts


def write(result: Any, path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(result.dump())
    for name, text in result.side_files.items():
        (path.parent / name).write_text(text)
    return path


def close(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, (int, float)) and isinstance(b, (int, float)) and math.isclose(a, b, rel_tol=1e-12)
    return bool(a == b)


# ---- GPT-NeoX ------------------------------------------------------------------------------------------


def test_neox_loads_what_we_write_from_the_cerebras_corpus(tmp_path: Path) -> None:
    need("neox")
    corpus_dir("cerebras-legacy")
    sources = LEGACY + corpus_files("cerebras-trainer", "**/*.yaml")
    jobs, written, refused_family, no_heads = [], {}, [], []
    for path in sources:
        # keyed from the corpus root: both layouts hold files of the same name (gemma2/params_gemma2_9b_msl8k.yaml)
        key = str(path.relative_to(CORPUS))
        result = translate_or_known(path, "neox")
        if result is None:
            refused_family.append(key)  # BERT, T5, ViT, ...: translate_or_known checked the refusal says so
            continue
        if any(e.status is Status.MISSING and e.target_key == "num_attention_heads" for e in result.report.entries):
            no_heads.append(key)  # not a transformer NeoX can build: the report names what is missing
            continue
        out = write(result, tmp_path / key.replace("/", "__") / "out.yml")
        jobs.append({"id": key, "files": [str(out)], "world": 1})
        written[key] = result.config
    # every decoder-LM source is written and loaded: nothing skipped beyond what neoconv refused or
    # reported, and each written file got its own verdict
    assert jobs and len(jobs) + len(refused_family) + len(no_heads) == len(sources)
    verdicts = check("neox", jobs)
    assert sorted(verdicts) == sorted(written)
    refused = {k: v.error for k, v in verdicts.items() if not v.accepted}
    assert not refused, refused
    for key, verdict in verdicts.items():
        cfg, got = written[key], verdict.values
        assert got["train_batch_size"] == cfg.get("train_batch_size", got["train_batch_size"]), key
        ds = got["deepspeed_config"]
        clip = cfg.get("deepspeed_extra_args", {}).get("gradient_clipping", cfg.get("gradient_clipping"))
        assert ds.get("gradient_clipping", 0.0) == clip, key  # what DeepSpeed really gets
        if cfg.get("precision") == "bfloat16":
            assert ds["bf16"] == {"enabled": True} and got["precision"] == "bfloat16", key


# ---- DeepSpeed -----------------------------------------------------------------------------------------


def test_deepspeed_accepts_what_we_write_and_builds_the_same_schedule(pythia160m: Path, tmp_path: Path) -> None:
    need("deepspeed")
    corpus_dir("cerebras-legacy")
    files = {
        "pythia": translate(pythia160m, "neox", "deepspeed", world_size=8),
        "with-neox": translate(
            DS / "neox-model.yml",
            "neox",
            "deepspeed",
            world_size=16,
            with_files=[(str(DS / "warmup-decay-lr-zero1.json"), "deepspeed")],
        ),
        "cerebras": translate(
            CORPUS / "cerebras-legacy" / "gpt3" / "Cerebras_GPT" / "111m.yaml", "cerebras", "deepspeed"
        ),
        # a decay without warmup: torch's CosineAnnealingLR, built by name the way DeepSpeed builds it
        "no-warmup": translate(
            {
                "train_input": {"batch_size": 8},
                "optimizer": {
                    "optimizer_type": "AdamW",
                    "learning_rate": {
                        "scheduler": "CosineDecay",
                        "initial_learning_rate": 3e-4,
                        "end_learning_rate": 3e-5,
                        "total_iters": 5000,
                    },
                },
            },
            "cerebras",
            "deepspeed",
        ),
    }
    files.update(
        {
            f"fixture:{p.name}": translate(p, "deepspeed", "deepspeed")
            for p in sorted(DS.glob("*.json"))
            if p.name != "hf-auto.json"
        }
    )  # "auto" is the HF Trainer's to fill in
    world = {"pythia": 8, "with-neox": 8, "cerebras": 1, "no-warmup": 1}
    # lr_at t: the rate optimizer step t uses. DeepSpeed's own schedulers lag one step (their value after
    # t-1 scheduler steps), torch's by name do not.
    # (Cerebras: 111m.yaml warms up over 1525 steps and runs max_steps 9037, so 9036 is its last update)
    lr_at = {
        "pythia": [1431, 1431 + (143000 - 1430) // 2, 143001],
        "cerebras": [1525, 1526, 7386, 9036],
        "no-warmup": [2500],
    }
    jobs = [
        {
            "id": k,
            "files": [str(write(r, tmp_path / k.replace(":", "_") / "ds.json"))],
            "world": world.get(k, 8),
            "lr_at": lr_at.get(k, []),
        }
        for k, r in files.items()
    ]
    got = check("deepspeed", jobs)
    assert {k: v.error for k, v in got.items() if not v.accepted} == {}
    # DeepSpeed's scheduler runs what neoconv says the file it wrote means (its reading of a DeepSpeed
    # scheduler block). The rates are Python floats (float64) on both sides; torch's schedulers by name
    # update recursively (each lr from the last): CosineAnnealingLR drifts from its closed form by at most
    # 4.6e-14 relative over 5000 steps. 1e-9 is far above that and far below any difference of schedules.
    for key, steps in lr_at.items():
        config = files[key].config
        meant = ds_schedule(config.get("scheduler"), config["optimizer"]["params"]["lr"]).schedule
        for step in steps:
            assert got[key].values["lr_at"][str(step)] == pytest.approx(meant.value(step), rel=1e-9), (key, step)
    pythia = got["pythia"].values
    assert (
        pythia["train_batch_size"],
        pythia["train_micro_batch_size_per_gpu"],
        pythia["gradient_accumulation_steps"],
    ) == (256, 32, 1)
    assert pythia["optimizer"] == "adamw" and pythia["fp16"] and pythia["zero_stage"] == 1
    # NeoX's cosine: 6e-4 after 1430 warmup steps, 6e-5 at 143000, halfway in between
    peak, mid, end = (pythia["lr_at"][str(s)] for s in lr_at["pythia"])
    assert peak == pytest.approx(6e-4, rel=1e-3) and end == pytest.approx(6e-5, rel=1e-3)
    assert mid == pytest.approx(6e-5 + (6e-4 - 6e-5) / 2, rel=1e-3)
    assert got["with-neox"].values["train_batch_size"] == 256 and got["with-neox"].values["gradient_clipping"] == 0.5
    cerebras = got["cerebras"].values
    assert cerebras["train_batch_size"] == 120 and cerebras["bf16"]
    # Model Zoo's linear warmup and decay have no DeepSpeed form: neoconv writes the closest WarmupCosineLR
    # (reported lossy). Its cosine starts one update after the peak (6e-4 * (1 - 0.9 (pi/7511)^2 / 4) at
    # 1526, 2.4e-11 under 6e-4), and it ends the run at the rate the source's last update uses (the
    # source reaches 6e-5 only at step 9037, after the run)
    source = parse(files["cerebras"].ir.get("schedule.phases"))
    assert cerebras["lr_at"]["1526"] == pytest.approx(6e-4, rel=1e-7)
    assert cerebras["lr_at"]["9036"] == pytest.approx(source.value(9036), rel=1e-9)
    assert source.value(9036) != pytest.approx(6e-5, rel=1e-6) and source.value(9037) == pytest.approx(6e-5)
    plain = got["no-warmup"].values
    assert plain["scheduler"] == "CosineAnnealingLR" and plain["lr_at"]["2500"] == pytest.approx(
        3e-5 + (3e-4 - 3e-5) / 2
    )


# ---- Cerebras Model Zoo --------------------------------------------------------------------------------


def test_migration_agrees_with_cerebras_converter() -> None:
    """cerebras2cerebras --layout trainer == Model Zoo's convert_legacy_params_to_trainer_params,
    plus the model name Model Zoo 2.4+ requires, on every legacy corpus file."""
    need("cerebras")
    corpus_dir("cerebras-legacy")
    ours, family_default = {}, {}
    for path in LEGACY:
        result = translate_or_known(path, "cerebras", layout="trainer")
        if result is not None:
            ours[rel(path)] = json.loads(json.dumps(result.config))
            family_default[rel(path)] = [
                e
                for e in result.report.entries
                if e.source_key == "model.fp16_type" and "code defaults it to" in e.detail
            ]
    jobs = [{"id": rel(p), "files": [str(p)], "show": True, "convert_only": True} for p in LEGACY if rel(p) in ours]
    verdicts = check("cerebras", jobs)
    for key, mine in ours.items():
        theirs = verdicts[key].values.get("converted")
        assert theirs is not None, f"{key}: Model Zoo's converter refused it: {verdicts[key].error}"
        assert mine["trainer"]["init"]["model"].pop("name")  # Cerebras' converter adds none; 2.4+ needs one
        if family_default[key]:
            # A BERT / Transformer file without fp16_type trained in float16 at its release: run.py called
            # bert/utils.py set_defaults (fp16_type "float16") up to 2.2.1, and the trainer's MixedPrecision
            # default was float16 in 2.3. From 2.4 that default is bfloat16 and nothing calls set_defaults, and
            # the converter carries only the keys a file has (TRAINER_PARAMS_TO_LEGACY), so its output would
            # train in bfloat16: neoconv states the float16 the source meant (and says so in the report).
            assert "fp16_type" not in theirs["trainer"]["init"].get("precision", {}), key
            assert mine["trainer"]["init"]["precision"].pop("fp16_type") == "float16", key
        assert mine == numbers(theirs), key


# ---- transformers --------------------------------------------------------------------------------------


def written_configs() -> dict[str, dict[str, Any]]:
    out = {}
    sources = [("neox", FIXTURES / "inputs" / "neox" / "pythia-160m.yml")] + [("neox", p) for p in corpus_files("neox")]
    sources += [
        ("cerebras", p)
        for p in corpus_files("cerebras-legacy", "**/*.yaml") + corpus_files("cerebras-trainer", "**/*.yaml")
    ]
    for src, path in sources:
        try:
            result = translate(path, src, "veomni", set_values={"model.vocab_size": 50304})
        except Exception:  # noqa: BLE001 - the source reader refuses some corpus files; their own tests cover them
            continue
        if result.ir.get("model.attention_kind") not in (None, "dense"):
            continue  # Mamba / RWKV blocks: reported lossy, no HF class can hold them
        if "config.json" in result.side_files:
            out[str(path)] = json.loads(result.side_files["config.json"])
    return out


def value(data: dict[str, Any], key: str, wrote: Any = None) -> Any:
    if key in MOVED and "rope_parameters" in data:
        return (data["rope_parameters"] or {}).get(MOVED[key])
    if key == "rope_scaling" and "rope_parameters" in data and isinstance(wrote, dict):
        # transformers 5 keeps the scaling in rope_parameters (beside rope_theta)
        return {k: (data["rope_parameters"] or {}).get(k) for k in wrote}
    return data.get(key, "<absent>")


def test_every_written_config_json_is_accepted_by_its_hf_class(tmp_path: Path) -> None:
    need("hf")
    configs = written_configs()
    assert configs, "nothing was written"
    jobs = []
    for n, (key, config) in enumerate(configs.items()):
        path = tmp_path / f"{n}.json"
        path.write_text(json.dumps(config))
        jobs.append({"id": key, "files": [str(path)]})
    verdicts = check("hf", jobs)
    for key, config in configs.items():
        verdict = verdicts[key]
        assert verdict.accepted, f"{key}: {verdict.error}"
        built = verdict.values["config"]
        assert verdict.values["model_type"] == config["model_type"]
        for name, wrote in config.items():
            if name != "model_type":
                assert close(value(built, name, wrote), wrote), (
                    f"{key}: {name} = {wrote!r} became {value(built, name)!r}"
                )


# keys the model code fills in when the class has no such field (getattr with a default) or keeps it None:
# what the model uses when a file omits the key (modeling_<type>.py, transformers 5.23)
def _per_head(data: dict[str, Any]) -> Any:
    return data["hidden_size"] // data["num_attention_heads"]


def _four_wide(data: dict[str, Any]) -> Any:
    return 4 * data["n_embd"]


FILLED_BY_MODEL = {
    ("qwen2", "head_dim"): _per_head,  # Qwen2Attention: getattr(config, "head_dim", hidden // heads)
    ("qwen2_moe", "head_dim"): _per_head,  # Qwen2MoeAttention: the same
    ("qwen3_moe", "head_dim"): _per_head,  # Qwen3MoeAttention: the same
    ("phi3", "head_dim"): _per_head,  # Phi3Attention: getattr(config, "head_dim", None) or hidden // heads
    ("mixtral", "head_dim"): _per_head,  # MixtralAttention: the same (head_dim field None)
    ("starcoder2", "head_dim"): _per_head,  # Starcoder2Attention: getattr(config, "head_dim", hidden // heads)
    ("olmo2", "head_dim"): _per_head,  # Olmo2Attention: getattr(config, "head_dim", hidden // heads)
    ("granite", "head_dim"): _per_head,  # GraniteAttention: the same
    ("smollm3", "head_dim"): _per_head,  # SmolLM3Attention: the same
    ("granitemoe", "head_dim"): _per_head,  # GraniteMoeAttention: the same
    ("olmo3", "head_dim"): _per_head,  # Olmo3Attention: the same
    ("gptj", "n_inner"): _four_wide,  # GPTJBlock: n_inner if not None else 4 * n_embd
    ("gpt2", "n_inner"): _four_wide,  # GPT2Block: the same
}
# a default the class's __post_init__ rewrites from another key: hf.yaml keeps the field's own default
# (what an omitted key means when the other key asks for it), compared with the dataclass field
REWRITTEN = {
    "sliding_window": "kept only with use_sliding_window: true (None, qwen2_moe 0, without: no window either way)",
    "mlp_only_layers": "None becomes [] (no dense-only layers either way)",
    "no_rope_layers": "None becomes no_rope_layer_interval's pattern (SmolLM3Config.__post_init__; hf.yaml reads it so)",
    "layer_types": "None becomes the class's own pattern (its window codec in hf.yaml builds the same)",
}


def class_value(model_type: str, key: str, values: dict[str, Any]) -> Any:
    """What class `model_type` means for config.json key `key` when a file omits it."""
    data, fields = values["config"], values["fields"]
    if key in REWRITTEN and key in fields:
        return fields[key]
    if (model_type, key) in FILLED_BY_MODEL and data.get(key) is None:
        return FILLED_BY_MODEL[model_type, key](data)
    if key in data:
        return data[key]
    alias = values["attribute_map"].get(key)  # Qwen3MoeConfig keeps num_experts as num_local_experts
    if alias in data:
        return data[alias]
    rope = data.get("rope_parameters") or {}
    if key == "rope_scaling" and "rope_type" in rope:  # the scaling a class builds when a file says nothing (gpt_oss)
        scaling = {k: v for k, v in rope.items() if k not in ("rope_theta", "partial_rotary_factor")}
        return None if scaling.get("rope_type") == "default" else scaling
    if "full_attention" in rope:  # transformers 5 nests rope_parameters by layer kind (Gemma 3, OLMo 3)
        nested = {
            "rope_theta": ("full_attention", "rope_theta"),
            "rope_local_base_freq": ("sliding_attention", "rope_theta"),
        }
        if key in nested:
            kind, inner = nested[key]
            return (rope.get(kind) or {}).get(inner)
    if key == "sliding_window_pattern" and data.get(
        "layer_types"
    ):  # a keyword that only shapes the default layer_types
        return data["layer_types"].index("full_attention") + 1
    if key in MOVED:
        found = rope.get(MOVED[key])
        # the rotary embedding reads rope_parameters.get("partial_rotary_factor", 1.0)
        return 1.0 if found is None and MOVED[key] == "partial_rotary_factor" and rope else found
    node: Any = data  # nested keys (MPT's attn_config.attn_pdrop)
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return "<absent>"
        node = node[part]
    return node


def test_hf_table_matches_the_transformers_classes() -> None:
    """Each model type's keys exist in its class and its defaults are the class's: a default that is
    a value of other fields (=model.x) is worked out from the class's own values of those."""
    need("hf")
    types = hf_config.table().types
    verdicts = check("hf", [{"id": name, "model_type": name} for name in sorted(types)])
    wrong = []
    for model_type, spec in types.items():
        values = verdicts[model_type].values
        for key in spec.keys.values():
            if class_value(model_type, key, values) == "<absent>":
                wrong.append(f"{model_type} has no {key}")
        by_key = {key: name for name, key in spec.keys.items()}
        canonical = {name: class_value(model_type, key, values) for key, name in by_key.items()}
        for key, default in spec.defaults.items():
            theirs = class_value(model_type, key, values)
            ours = hf_config.resolve(default, canonical) if hf_config.derived(default) else default
            if not close(theirs, ours):
                wrong.append(f"{model_type}.{key}: hf.yaml says {default!r} ({ours!r}), transformers {theirs!r}")
    assert not wrong, "\n".join(wrong)


def test_a_transformers5_config_reads_back(tmp_path: Path) -> None:
    """A config.json transformers itself saves (rope_parameters) reads as the same architecture."""
    need("hf")
    written = tmp_path / "written.json"
    written.write_text(
        translate(
            FIXTURES / "inputs" / "neox" / "pythia-160m.yml", "neox", "veomni", set_values={"model.vocab_size": 50304}
        ).side_files["config.json"]
    )
    saved = check("hf", [{"id": "pythia", "files": [str(written)], "saved": True}])["pythia"].values["saved"]
    assert "rope_parameters" in saved  # the transformers 5 layout
    (tmp_path / "saved").mkdir()
    (tmp_path / "saved" / "config.json").write_text(json.dumps(saved))
    (tmp_path / "run.yaml").write_text("model:\n  config_path: saved\ndata:\n  train_path: x\n")
    ir = read_ir([str(tmp_path / "run.yaml")], "veomni").ir
    assert ir.get("model.rotary_fraction") == 0.25 and ir.get("model.rotary_base") == 10000.0
    assert ir.get("model.activation") == "gelu_tanh" and ir.get("model.num_layers") == 12


# ---- VeOmni --------------------------------------------------------------------------------------------

PARSER = {"nested": "veomni", "flat": "veomni-flat"}


def runnable(result: Any, path: Path, layout: str) -> dict[str, Any]:
    """A job for the written YAML, with the keys the report says are missing given on VeOmni's command
    line (a dataset, a tokenizer, and in the flat layout an output folder)."""
    write(result, path)
    options = {"data.train_path": "dataset", "model.tokenizer_path": "tokenizer"}
    if layout == "flat":
        options["train.output_dir"] = "output"
    return {
        "id": str(path),
        "files": [str(path)],
        "world": 1,
        "set": options,
        "fields": ["train.optimizer.lr" if layout == "nested" else "train.lr"],
    }


@pytest.mark.parametrize("layout", ["nested", "flat"])
def test_veomni_parses_what_neoconv_writes(layout: str, tmp_path: Path) -> None:
    need(PARSER[layout])
    sources = [FIXTURES / "inputs" / "neox" / "pythia-160m.yml"] + corpus_files("neox")
    jobs, results = [], {}
    for n, path in enumerate(sources):
        try:
            result = translate(
                path, "neox", "veomni", layout=layout, world_size=8, set_values={"model.vocab_size": 50304}
            )
        except Exception:  # noqa: BLE001 - refused by the NeoX reader (covered elsewhere)
            continue
        if any(e.status is Status.MISSING and e.target_key == "model.config_path" for e in result.report.entries):
            continue  # a fragment without a model (local_setup.yml): reported missing
        job = runnable(result, tmp_path / str(n) / "run.yaml", layout)
        jobs.append(job)
        results[job["id"]] = result
    verdicts = check(PARSER[layout], jobs)
    for key, result in results.items():
        verdict = verdicts[key]
        assert verdict.accepted, f"{key}: {verdict.error}"
        lr = next(iter(verdict.values["fields"].values()))
        assert lr == (result.ir.get("optim.lr") or 5e-5)  # VeOmni's default when the source has none
        steps = result.ir.get("train.steps")
        if steps is not None and "train_size" in result.config.get("data", {}):
            assert verdict.values["train_steps"] == steps, key  # VeOmni counts the same steps
    assert len(results) > 20


def test_veomni_counts_the_steps_neoconv_reads_from_its_corpus() -> None:
    """compute_train_steps x num_train_epochs on each corpus config == neoconv's train.steps."""
    need("veomni", "veomni-flat")
    corpus_dir("veomni"), corpus_dir("veomni-legacy")
    compared, refused = 0, []
    for layout, folder in (("nested", "veomni"), ("flat", "veomni-legacy")):
        jobs, irs = [], {}
        for path in corpus_files(folder, "**/*.yaml"):
            if "train" not in yaml.safe_load(path.read_text()):
                continue
            ir = read_ir([str(path)], "veomni").ir
            irs[str(path)] = ir
            jobs.append({"id": str(path), "files": [str(path)], "world": ir.get("parallel.sequence_size") or 1})
        for key, verdict in check(PARSER[layout], jobs).items():
            if not verdict.accepted:  # VeOmni itself refuses it: an Ascend-only config, or a task
                refused.append(f"{key}: {verdict.error}")  # config whose model comes from its own script
            elif verdict.values["dyn_bsz"]:  # otherwise the dataset length decides
                assert verdict.values["train_steps"] == irs[key].get("train.steps"), key
                compared += 1
    assert compared >= 40 and len(refused) <= 5, refused


def test_option_files_read_as_veomnis_argparse_reads_them() -> None:
    need("veomni")
    options: list[str] = []
    for line in (VEOMNI / "overrides.args").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            options += line.split()
    settings: dict[str, Any] = {}
    key = None
    for word in options:  # the option file's `--a.b value...` lines as the check program's `set`
        if word.startswith("--"):
            key = word[2:]
            settings[key] = []
        elif key is not None:
            settings[key].append(word)
    names = [
        "train.optimizer.lr",
        "train.gradient_checkpointing.enable",
        "train.optimizer.no_decay_modules",
        "data.max_seq_len",
        "train.wandb.enable",
    ]
    job = {
        "id": "overrides",
        "files": [str(VEOMNI / "tinyllama-nested.yaml")],
        "world": 1,
        "fields": names,
        "set": {k: v[0] if len(v) == 1 else v for k, v in settings.items()},
    }
    got = check("veomni", [job])["overrides"]
    assert got.accepted, got.error
    fields = got.values["fields"]
    ours = flatten(
        read_ir([str(VEOMNI / "tinyllama-nested.yaml"), str(VEOMNI / "overrides.args")], "veomni").source.tree
    )
    assert fields["train.optimizer.lr"] == ours["train.optimizer.lr"] == 2e-4
    assert fields["train.gradient_checkpointing.enable"] is ours["train.gradient_checkpointing.enable"] is False
    assert (
        fields["train.optimizer.no_decay_modules"]
        == ours["train.optimizer.no_decay_modules"]
        == ["LlamaRMSNorm", "Embedding"]
    )
    assert fields["data.max_seq_len"] == ours["data.max_seq_len"] == 4096
    assert fields["train.wandb.enable"] is ours["train.wandb.enable"] is True


@pytest.mark.parametrize("name", ["text/llama3.yaml", "text/qwen3.yaml", "multimodal/qwen2_vl/qwen2_vl.yaml"])
def test_migrated_legacy_configs_parse_at_head(name: str, tmp_path: Path) -> None:
    need("veomni", "veomni-flat")
    path = CORPUS / "veomni-legacy" / name
    if not path.exists():
        pytest.skip("the shared corpus is not present")
    migrated = translate(path, "veomni", "veomni", layout="nested")
    out = write(migrated, tmp_path / "migrated.yaml")
    world = migrated.ir.get("parallel.sequence_size") or 1
    fields = ["train.accelerator.fsdp_config.fsdp_mode", "train.init_device"]
    new = check("veomni", [{"id": "new", "files": [str(out)], "world": world, "fields": fields}])["new"]
    old = check("veomni-flat", [{"id": "old", "files": [str(path)], "world": world}])["old"]
    assert new.accepted and old.accepted, (new.error, old.error)
    assert new.values["fields"] == {"train.accelerator.fsdp_config.fsdp_mode": "fsdp2", "train.init_device": "meta"}
    for key in ("lr", "train_size", "train_steps", "global_batch_size"):
        assert new.values[key] == old.values[key], key
