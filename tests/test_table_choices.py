"""The grammar's choice shapes and modifiers — `key_by`, an `enum` with `warn_values` / `unknown` /
`nearest` / `unwritable` / `reads_as`, `fixed_loss`, `same_as` with `implied`, `follows`, and the rename
modifiers `overridden_by` and `written_with` (schemas/mapping.schema.json) — on the table rules that
replaced the formulas neox.norm_eps, cerebras.activation, cerebras.optimizer_type, veomni.optimizer,
veomni.precision_flat, cerebras.dense_attention, follows_attention_bias, neox.mlp_bias, neox.save and
neox.norm_bias: each rule's reading and writing with real values, and translations that go through it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from neoconv.api import translate
from neoconv.core.errors import InputError
from neoconv.knowledge.formula import Approx, Extension, Formula, UnknownValue, Unexpressible
from neoconv.knowledge.mapping import load_table
from neoconv.core.report import Status

from conftest import FIXTURES

PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"
LLAMA = FIXTURES / "inputs" / "neox" / "llama-1b.yml"
CEREBRAS = FIXTURES / "inputs" / "cerebras" / "gpt2-small-legacy.yaml"
VEOMNI_FLAT = FIXTURES / "inputs" / "veomni" / "tinyllama-flat.yaml"
VEOMNI_NESTED = FIXTURES / "inputs" / "veomni" / "tinyllama-nested.yaml"
TINYLLAMA = FIXTURES / "inputs" / "veomni" / "tinyllama" / "config.json"


def _rule_formula(fmt: str, field: str, layout: str | None = None) -> Formula:
    rules = load_table(fmt).for_layout(layout).rules_for_field(field)
    assert len(rules) == 1 and rules[0].formula is not None
    return rules[0].formula


def _entry(done: Any, key: str) -> Any:
    return next(e for e in done.report.entries if key in (e.source_key, e.target_key))


def _about(done: Any, field: str, status: Status) -> Any:
    return next(e for e in done.report.entries if field in e.fields and e.status is status)


# ---- key_by: NeoX's epsilon per norm kind ------------------------------------------------------


@pytest.mark.parametrize(
    "norm,key",
    [
        ("layernorm", "layernorm_epsilon"),
        ("rmsnorm", "rms_norm_epsilon"),
        ("scalenorm", "scalenorm_epsilon"),
        (None, "layernorm_epsilon"),
    ],
)
def test_key_by_neox_norm_eps_reads_and_writes_the_active_norms_key(norm: str | None, key: str) -> None:
    eps = _rule_formula("neox", "model.norm_eps")
    values = {"layernorm_epsilon": 1e-5, "rms_norm_epsilon": 1e-6, "scalenorm_epsilon": 1e-7}
    assert eps.read(by_norm=norm, **values) == values[key]
    assert eps.write(value=3e-6, by_norm=norm) == {key: 3e-6}


def test_key_by_end_to_end_rmsnorm_epsilon(tmp_path: Path) -> None:
    """An rmsnorm NeoX file: rms_norm_epsilon is the model's epsilon, layernorm_epsilon beside it
    says nothing; written back to NeoX under rms_norm_epsilon, to Cerebras as layer_norm_epsilon."""
    text = LLAMA.read_text()
    assert '"norm": "rmsnorm"' in text and "rms_norm_epsilon" in text
    path = tmp_path / "eps.yml"
    path.write_text(text.replace('"norm": "rmsnorm"', '"norm": "rmsnorm",\n  "layernorm_epsilon": 0.01'))
    to_cerebras = translate([str(path)], "neox", "cerebras", world_size=8)
    wanted = yaml.safe_load(text.split("rms_norm_epsilon", 1)[1].split(":", 1)[1].split(",", 1)[0])
    assert yaml.safe_load(to_cerebras.dump())["model"]["layer_norm_epsilon"] == wanted
    to_neox = translate([str(path)], "neox", "neox", world_size=8)
    written = yaml.safe_load(to_neox.dump())
    assert written["rms_norm_epsilon"] == wanted and written.get("layernorm_epsilon", 0.01) == 0.01


# ---- enum modifiers ------------------------------------------------------------------------------


def test_enum_cerebras_nonlinearity_names() -> None:
    act = _rule_formula("cerebras", "model.activation")
    assert act.read(model_nonlinearity="GELU_new") == "gelu_tanh"  # case-insensitive
    assert act.read(model_nonlinearity="swiglu") == "swiglu" and act.read(model_nonlinearity=None) is None
    other = act.read(model_nonlinearity="squared_relu")
    assert other == Extension("nonlinearity 'squared_relu' has no counterpart outside Cerebras")
    assert act.write(value="gelu_tanh") == {"model_nonlinearity": "gelu_new"}
    near = act.write(value="geglu_tanh")
    assert isinstance(near, Approx) and near.value == {"model_nonlinearity": "geglu"}
    assert near.detail == "Model Zoo's geglu gates with the exact GELU, not its tanh approximation"
    lost = act.write(value="mish")
    assert isinstance(lost, Approx) and lost.value == {} and lost.detail == "Model Zoo has no mish nonlinearity"


def test_enum_cerebras_nonlinearity_end_to_end(tmp_path: Path) -> None:
    """A Cerebras squared_relu stays a Model Zoo extension (dropped for NeoX, with the reason); a
    nonlinearity Model Zoo lacks is lost, said."""
    tree = yaml.safe_load(CEREBRAS.read_text())
    tree["model"]["nonlinearity"] = "squared_relu"
    path = tmp_path / "sq.yaml"
    path.write_text(yaml.safe_dump(tree))
    done = translate([str(path)], "cerebras", "neox", world_size=8)
    entry = _entry(done, "model.nonlinearity")
    assert entry.status is Status.DROPPED and "has no counterpart outside Cerebras" in entry.detail
    assert "activation" not in yaml.safe_load(done.dump())
    done = translate([str(PYTHIA)], "neox", "cerebras", world_size=8, set_values={"model.activation": "mish"})
    assert "Model Zoo has no mish nonlinearity" in _about(done, "model.activation", Status.LOSSY).detail
    assert "nonlinearity" not in yaml.safe_load(done.dump())["model"]


def test_enum_veomni_optimizer() -> None:
    opt = _rule_formula("veomni", "optim.type")
    assert opt.read(train_optimizer_type="adamw") == "adamw" and opt.read(train_optimizer_type="muon") == "muon"
    approx = opt.read(train_optimizer_type="anyprecision_adamw")
    assert isinstance(approx, Approx) and approx.value == "adamw"
    assert approx.detail == "AnyPrecisionAdamW (bf16 states, Kahan-compensated updates) is read as AdamW"
    with pytest.raises(UnknownValue) as foreign:  # a fork's optimizer: the engine's one rule, not bad input
        opt.read(train_optimizer_type="sgd")
    assert foreign.value.value == "sgd" and foreign.value.known == ("adamw", "anyprecision_adamw", "muon")
    assert opt.write(value="adamw") == {"train_optimizer_type": "adamw"}
    assert opt.write(value="muon") == {"train_optimizer_type": "muon"}
    with pytest.raises(
        Unexpressible, match="VeOmni has adamw, anyprecision_adamw and muon only: lion is not expressible"
    ):
        opt.write(value="lion")


def test_enum_veomni_optimizer_end_to_end(tmp_path: Path) -> None:
    text = VEOMNI_NESTED.read_text()
    tree = yaml.safe_load(text)
    tree["train"].setdefault("optimizer", {})["type"] = "anyprecision_adamw"
    path = tmp_path / "any.yaml"
    path.write_text(yaml.safe_dump(tree))
    done = translate([str(path)], "veomni", "neox", model_config=str(TINYLLAMA), world_size=8)
    entry = _entry(done, "train.optimizer.type")
    assert entry.status is Status.LOSSY and "AnyPrecisionAdamW" in entry.detail
    assert yaml.safe_load(done.dump())["optimizer"]["type"] == "Adam"
    tree["train"]["optimizer"]["type"] = "sgd"
    path.write_text(yaml.safe_dump(tree))
    forked = translate([str(path)], "veomni", "neox", model_config=str(TINYLLAMA), world_size=8)
    entry = _entry(forked, "train.optimizer.type")
    assert entry.status is Status.UNKNOWN and entry.kind == "not_a_value" and entry.fields == ("optim.type",)
    assert entry.values["value"] == "sgd" and entry.values["title"] == "VeOmni"
    lion = translate([str(PYTHIA)], "neox", "veomni", world_size=8, set_values={"optim.type": "lion"})
    entry = _entry(lion, "optimizer.type")
    assert "VeOmni has adamw, anyprecision_adamw and muon only: lion is not expressible" in entry.detail


def test_enum_veomni_flat_precision() -> None:
    """The flat layout's enable_mixed_precision: bf16 either way (off: pure bf16, approximately)."""
    prec = _rule_formula("veomni", "precision.dtype", "flat")
    key = "train_accelerator_fsdp_config_mixed_precision_enable"
    assert prec.read(**{key: True}) == "bf16"
    pure = prec.read(**{key: False})
    assert isinstance(pure, Approx) and pure.value == "bf16" and "no fp32 master copy" in pure.detail
    assert prec.write(value="bf16") == {key: True}
    for other in ("fp16", "fp32", "cbf16"):
        near = prec.write(value=other)
        assert isinstance(near, Approx) and near.value == {key: True}
        assert near.detail == f"the flat layout (before PR #538) always computes in bf16: {other} is not expressible"


def test_enum_veomni_flat_precision_end_to_end() -> None:
    done = translate([str(PYTHIA)], "neox", "veomni", world_size=8, layout="flat")
    assert "fp16" in PYTHIA.read_text()
    entry = _entry(done, "fp16.enabled")
    assert entry.target_key == "train.enable_mixed_precision" and entry.status is Status.LOSSY
    assert entry.detail == "the flat layout (before PR #538) always computes in bf16: fp16 is not expressible"


# ---- fixed_loss: Cerebras' dense attention ------------------------------------------------------


def test_fixed_loss_cerebras_dense_attention() -> None:
    rule = load_table("cerebras").rules_for_field("model.attention_kind")[0]
    assert rule.key is None and rule.shape == "fixed" and rule.formula is not None
    assert rule.formula.read() == "dense" and rule.formula.write(value="dense") == {}
    lost = rule.formula.write(value="global+local")
    assert isinstance(lost, Approx) and lost.value == {}
    assert (
        lost.detail
        == "Cerebras models only have dense causal attention: the global+local blocks become attention layers"
    )


# ---- same_as implied: NeoX's one attention bias switch ------------------------------------------


def test_same_as_implied_neox_attention_output_bias() -> None:
    rule = load_table("neox").rules_for_field("model.attention_output_bias")[0]
    assert rule.key is None and rule.shape == "same_as" and rule.formula is not None
    out = rule.formula
    assert out.read() is None  # absent means "as attention_bias": nothing read, nothing it depends on
    assert out.write(value=True, same_attention_bias=True) == {}
    assert out.write(value=False, same_attention_bias=None) == {}  # the other unknown: nothing to compare
    lost = out.write(value=False, same_attention_bias=True)
    assert isinstance(lost, Approx) and lost.value == {}
    assert lost.detail == (
        "one switch biases every attention projection: an output bias False with "
        "query/key/value bias True is not expressible"
    )


def test_same_as_implied_end_to_end_qwen2_biases() -> None:
    """Qwen2-style biases (q, k, v biased, the output projection not) into NeoX: lossy, said."""
    done = translate(
        [str(LLAMA)],
        "neox",
        "neox",
        world_size=8,
        set_values={"model.attention_bias": True, "model.attention_output_bias": False},
    )
    assert yaml.safe_load(done.dump())["use_bias_in_attn_linear"] is True
    lost = [e for e in done.report.entries if "model.attention_output_bias" in e.fields]
    assert lost and lost[0].status is Status.LOSSY and "one switch biases every attention projection" in lost[0].detail


# ---- reads_as: Model Zoo's Adam without weight decay ---------------------------------------------


@pytest.mark.parametrize(
    "name,decay,read",
    [
        ("Adam", 0.0, "adamw"),
        ("adam", None, "adamw"),
        ("Adam", 0.01, "adam"),
        ("ADAMW", 0.1, "adamw"),
        ("AdaFactor", None, "adafactor"),
    ],
)
def test_reads_as_cerebras_adam_without_weight_decay_is_adamw(name: str, decay: float | None, read: str) -> None:
    opt = _rule_formula("cerebras", "optim.type")
    assert opt.read(optimizer_optimizer_type=name, when_weight_decay=decay) == read


def test_enum_cerebras_optimizer_type_names_and_refusals() -> None:
    opt = _rule_formula("cerebras", "optim.type")
    assert opt.write(value="adam") == {"optimizer_optimizer_type": "Adam"}
    assert opt.write(value="adafactor") == {"optimizer_optimizer_type": "AdaFactor"}
    with pytest.raises(
        ValueError,
        match=r"^unknown value 'Adamax'; expected one of AdamW, Adam, SGD, Lamb, Lion, AdaFactor, Adagrad, Muon$",
    ):
        opt.read(optimizer_optimizer_type="Adamax", when_weight_decay=None)
    with pytest.raises(
        Unexpressible, match=r"^optim.type='onebitadam' has no counterpart in optimizer.optimizer_type$"
    ):
        opt.write(value="onebitadam")


def test_reads_as_end_to_end(tmp_path: Path) -> None:
    """Model Zoo Adam with weight decay stays coupled Adam for NeoX (lossy: NeoX's Adam decouples);
    without it, it is AdamW, NeoX's Adam, exactly."""
    tree = yaml.safe_load(CEREBRAS.read_text())
    tree["optimizer"]["optimizer_type"] = "Adam"
    for decay, status in ((0.0, Status.EXACT), (0.01, Status.LOSSY)):
        tree["optimizer"]["weight_decay"] = decay
        path = tmp_path / f"adam-{decay}.yaml"
        path.write_text(yaml.safe_dump(tree))
        done = translate([str(path)], "cerebras", "neox", world_size=8)
        assert yaml.safe_load(done.dump())["optimizer"]["type"] == "Adam"
        entry = _entry(done, "optimizer.optimizer_type")
        assert entry.status is status and (
            decay == 0.0 or entry.detail.startswith("adam adds weight decay to the gradient")
        )


# ---- NeoX's optimizer: extensions, reads_as on writing, a nearest reason per value ----------------


@pytest.mark.parametrize(
    "name,read",
    [
        ("Adam", "adamw"),
        ("adam", "adamw"),
        ("CPU_Adam", "adamw"),
        ("cpu_torch_adam", "adamw"),
        ("OneBitAdam", "onebitadam"),
        ("lion", "lion"),
    ],
)
def test_enum_neox_optimizer_names(name: str, read: str) -> None:
    """NeoX's Adam is FusedAdam in AdamW mode: adamw whatever the weight decay."""
    opt = _rule_formula("neox", "optim.type")
    assert opt.read(optimizer_type=name) == read  # (the reading does not look at the weight decay)


def test_enum_neox_optimizer_extensions_and_fork_names() -> None:
    opt = _rule_formula("neox", "optim.type")
    assert opt.read(optimizer_type="SM3") == Extension("NeoX optimizer SM3 has no counterpart elsewhere")
    assert opt.read(optimizer_type="madgrad_wd") == Extension("NeoX optimizer madgrad_wd has no counterpart elsewhere")
    with pytest.raises(UnknownValue) as foreign:  # a fork's optimizer (lamb, SOAP): unknown, not bad input
        opt.read(optimizer_type="lamb")
    assert foreign.value.value == "lamb"
    assert foreign.value.known == (
        "Adam",
        "cpu_adam",
        "cpu_torch_adam",
        "onebitadam",
        "sgd",
        "lion",
        "sm3",
        "madgrad_wd",
    )


@pytest.mark.parametrize(
    "value,decay,written,why",
    [
        ("adamw", 0.1, "Adam", ""),
        ("sgd", 0.1, "sgd", ""),
        ("adam", 0.0, "Adam", ""),
        ("adam", None, "Adam", ""),
        (
            "adam",
            0.01,
            "Adam",
            "adam adds weight decay to the gradient (L2); NeoX's Adam decouples it (AdamW): wrote NeoX's "
            "Adam so the config loads; choose a NeoX optimizer",
        ),
        (
            "lamb",
            0.0,
            "Adam",
            "lamb is not a NeoX optimizer: wrote NeoX's Adam so the config loads; choose a NeoX optimizer",
        ),
    ],
)
def test_enum_neox_optimizer_writing(value: str, decay: float | None, written: str, why: str) -> None:
    """adam without weight decay is AdamW's algorithm: NeoX's Adam, exactly; with it, or an optimizer
    NeoX lacks, Adam so that the config loads, lossy."""
    out = _rule_formula("neox", "optim.type").write(value=value, when_weight_decay=decay)
    if why:
        assert isinstance(out, Approx) and out.value == {"optimizer_type": written} and out.detail == why
    else:
        assert out == {"optimizer_type": written}


# ---- overridden_by: NeoX's mlp_type: llama, an MLP without biases ---------------------------------


@pytest.mark.parametrize(
    "bias,mlp_type,read",
    [
        (True, None, True),
        (False, None, False),
        (True, "regular", True),
        (False, "regular", False),
        (True, "llama", False),
        (False, "llama", False),
    ],
)
def test_overridden_by_neox_mlp_type_llama(bias: bool, mlp_type: str | None, read: bool) -> None:
    """Before use_bias_in_mlp (2024-09-10) mlp_type: llama built LLaMAParallelMLP, without biases,
    whatever use_bias_in_mlp says; regular leaves the switch to use_bias_in_mlp."""
    mlp = _rule_formula("neox", "model.mlp_bias")
    assert mlp.read(use_bias_in_mlp=bias, mlp_type=mlp_type) is read
    assert mlp.write(value=read) == {"use_bias_in_mlp": read}  # mlp_type is never written


def test_overridden_by_names_what_neox_did_not_know() -> None:
    mlp = _rule_formula("neox", "model.mlp_bias")
    with pytest.raises(UnknownValue) as foreign:
        mlp.read(use_bias_in_mlp=True, mlp_type="gated")
    assert (foreign.value.value, foreign.value.known, foreign.value.key) == ("gated", ("regular", "llama"), "mlp_type")


def test_overridden_by_end_to_end(tmp_path: Path) -> None:
    """Pythia (use_bias_in_mlp absent: true) with mlp_type: llama reads as an MLP without biases, and
    Model Zoo gets use_ffn_bias false; an mlp_type NeoX did not know is a fork's: unknown, the rest translates."""
    text = PYTHIA.read_text().replace('"bias_gelu_fusion": True,', '"bias_gelu_fusion": True,\n  "mlp_type": "llama",')
    assert '"mlp_type": "llama"' in text
    (tmp_path / "llama-mlp.yml").write_text(text)
    done = translate([str(tmp_path / "llama-mlp.yml")], "neox", "cerebras", world_size=8)
    assert done.ir.get("model.mlp_bias") is False
    assert yaml.safe_load(done.dump())["model"]["use_ffn_bias"] is False
    (tmp_path / "bad.yml").write_text(text.replace('"mlp_type": "llama"', '"mlp_type": "gated"'))
    forked = translate([str(tmp_path / "bad.yml")], "neox", "cerebras", world_size=8)
    entry = _entry(forked, "mlp_type")
    assert entry.status is Status.UNKNOWN and entry.values["value"] == "gated" and entry.fields == ("model.mlp_bias",)
    assert forked.ir.get("model.mlp_bias") is None and "use_ffn_bias" not in yaml.safe_load(forked.dump())["model"]


# ---- written_with: NeoX's save needs a checkpoint interval ----------------------------------------


def test_written_with_neox_save() -> None:
    save = _rule_formula("neox", "checkpoint.save_dir")
    assert save.read(save="ck/run") == "ck/run"
    assert save.write(value="ck/run", with_interval=500) == {"save": "ck/run"}
    assert save.write(value="ck/run", with_interval=0) == {}  # no periodic checkpoints: the note says so
    lost = save.write(value="ck/run", with_interval=None)
    assert isinstance(lost, Approx) and lost.value == {}
    assert lost.detail == (
        "save: ck/run not written: NeoX refuses `save` without checkpoint_factor; give --set checkpoint.interval=N"
    )


@pytest.mark.parametrize("steps,written", [(2000, "tinyllama-1.1b"), (0, None)])
def test_written_with_end_to_end(tmp_path: Path, steps: int, written: str | None) -> None:
    """VeOmni's output_dir into NeoX: `save` beside checkpoint_factor; without periodic saves
    (save_steps 0, no interval) it is lost, with the --set that keeps it."""
    path = tmp_path / "run.yaml"
    path.write_text(VEOMNI_NESTED.read_text().replace("save_steps: 2000", f"save_steps: {steps}"))
    done = translate([str(path)], "veomni", "neox", world_size=8, model_config=str(TINYLLAMA))
    out = yaml.safe_load(done.dump())
    assert out.get("save") == written and out.get("checkpoint_factor") == (steps or None)
    entry = _entry(done, "train.checkpoint.output_dir")
    if written:
        assert entry.status is Status.EXACT
    else:
        assert entry.status is Status.LOSSY and entry.detail == (
            "save: tinyllama-1.1b not written: NeoX refuses `save` without checkpoint_factor; give --set checkpoint.interval=N"
        )


def test_written_with_unless_end_to_end(tmp_path: Path) -> None:
    """Model Zoo without periodic checkpoints (checkpoint_steps 0: interval 0) into NeoX: no `save`,
    no loss of the formula's own (a NeoX run without `save` saves none either): the rule's note says
    why; reading the output back finds no directory, which the check names."""
    path = tmp_path / "run.yaml"
    path.write_text(CEREBRAS.read_text().replace("checkpoint_steps: 5000", "checkpoint_steps: 0\n  model_dir: ck/run"))
    done = translate([str(path)], "cerebras", "neox", world_size=8)
    assert "save" not in yaml.safe_load(done.dump()) and done.ir.get("checkpoint.interval") == 0
    entry = _entry(done, "runconfig.model_dir")
    assert entry.detail.startswith(
        "no periodic checkpoints (interval 0): save left out, as NeoX refuses it without "
        "checkpoint_factor; checkpoint.save_dir is 'ck/run' in the source, not written"
    )
    assert "NeoX refuses `save` without checkpoint_factor; give --set" not in entry.detail


# ---- follows: NeoX's norm decides its bias --------------------------------------------------------


@pytest.mark.parametrize("norm,bias", [("layernorm", True), ("rmsnorm", False), ("scalenorm", False), (None, None)])
def test_follows_neox_norm_bias(norm: str | None, bias: bool | None) -> None:
    rule = load_table("neox").rules_for_field("model.norm_bias")[0]
    assert rule.key is None and rule.shape == "follows" and rule.formula is not None
    assert rule.formula.read(by_norm=norm) is bias
    if bias is not None:
        assert rule.formula.write(value=bias, by_norm=norm) == {}
        with pytest.raises(
            Unexpressible,
            match=(r"^NeoX's layernorm always" if bias else rf"^NeoX's {norm} never")
            + r" has a learned bias \(use_bias_in_norms is never read\)$",
        ):
            rule.formula.write(value=not bias, by_norm=norm)
    assert rule.formula.write(value=False, by_norm=None) == {}  # the norm unknown: nothing to compare


def test_follows_end_to_end(tmp_path: Path) -> None:
    """Model Zoo's biasless-layernorm into NeoX: its LayerNorm always has a bias, not expressible;
    NeoX's rmsnorm reads as a norm without bias."""
    path = tmp_path / "biasless.yaml"
    path.write_text(CEREBRAS.read_text().replace("model:\n", "model:\n  norm_type: biasless-layernorm\n", 1))
    done = translate([str(path)], "cerebras", "neox", world_size=8)
    assert done.ir.get("model.norm_bias") is False
    entry = _entry(done, "model.norm_type")
    assert entry.status is not Status.EXACT and "NeoX's layernorm always has a learned bias" in entry.detail, entry
    llama = translate([str(LLAMA)], "neox", "neox", world_size=8)
    assert llama.ir.get("model.norm_bias") is False
