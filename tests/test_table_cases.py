"""The `cases` shape (schemas/mapping.schema.json): a decision table over several keys that decide one
field, or several fields, together, on the rules that replaced formula classes (each section names the formula it
replaced): every case read and written with real values, the errors, the approximations and the
release boundaries, translations through them, and the tables the shape refuses."""

from __future__ import annotations

from typing import Any

import pytest

from neoconv.api import translate
from neoconv.core.errors import InputError, MappingTableError
from neoconv.knowledge.formula import Approx, Extension, UnknownValue, Unexpressible, ident
from neoconv.knowledge.mapping import Rule, build_rule, load_table
from neoconv.core.report import Status

from conftest import FIXTURES

PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"


def _rule(fmt: str, field: str, layout: str | None = None) -> Rule:
    rules = load_table(fmt).for_layout(layout).rules_for_field(field)
    assert len(rules) == 1 and rules[0].shape == "cases"
    return rules[0]


def _read(rule: Rule, given: dict[str, Any], version: str = "") -> Any:
    """What the rule reads from these key values (every other key absent; no defaults applied)."""
    assert rule.formula is not None and set(given) <= set(rule.keys) | set(rule.peek)
    kwargs = {ident(key): given.get(key) for key in (*rule.keys, *rule.peek)}
    if "version" in rule.formula.read_params():
        kwargs["version"] = version
    return rule.formula.read(**kwargs)


def _write(rule: Rule, value: Any, version: str = "") -> Any:
    assert rule.formula is not None
    return rule.formula.write(value=value, **({"version": version} if "version" in rule.formula.write_params() else {}))


def _write_fields(rule: Rule, version: str = "", **fields: Any) -> Any:
    """What a rule over several fields writes for these fields' values (by their last part; others none)."""
    assert rule.formula is not None and len(rule.fields) > 1
    kwargs = {name.rsplit(".", 1)[-1]: None for name in rule.fields} | fields
    return rule.formula.write(**kwargs, **({"version": version} if "version" in rule.formula.write_params() else {}))


def _approx(result: Any, value: Any, words: str, fields: tuple[str, ...] | None = None) -> None:
    assert isinstance(result, Approx) and result.value == value and words in result.detail, result
    assert fields is None or result.fields == fields, result.fields


# ---- DeepSpeed (was deepspeed.precision): fp16 / bf16 / bfloat16 / amp / torch_autocast --------


DS = "deepspeed"


@pytest.mark.parametrize(
    "given,value",
    [
        ({"fp16.enabled": True}, "fp16"),
        ({"fp16.enabled": False}, "fp32"),
        ({}, "fp32"),
        ({"bf16.enabled": True}, "bf16"),
        ({"bfloat16.enabled": True}, "bf16"),  # the old name
        (
            {"fp16.enabled": True, "bf16.enabled": False, "bfloat16.enabled": True},
            "fp16",
        ),  # bf16 says no: the old name is not read
        ({"fp16.enabled": True, "fp16.type": "float16"}, "fp16"),
    ],
)
def test_deepspeed_precision_reads(given: dict[str, Any], value: str) -> None:
    assert _read(_rule(DS, "precision.dtype"), given) == value


def test_deepspeed_precision_approximate_readings() -> None:
    rule = _rule(DS, "precision.dtype")
    for spelled in ("bfloat16", "BFloat16", "bf16"):  # DeeperSpeed's fp16.type (any case)
        _approx(_read(rule, {"fp16.enabled": True, "fp16.type": spelled}), "bf16", "DeeperSpeed's bf16")
    _approx(_read(rule, {"amp.enabled": True}), "fp16", "apex AMP")
    _approx(_read(rule, {"torch_autocast.enabled": True}), "fp16", "torch.autocast")  # no dtype: float16 on CUDA
    for spelled, value in (
        ("torch.bfloat16", "bf16"),
        ("bf16", "bf16"),
        ("torch.float16", "fp16"),
        ("half", "fp16"),
        ("torch.BFloat16", "bf16"),
    ):
        _approx(_read(rule, {"torch_autocast.enabled": True, "torch_autocast.dtype": spelled}), value, "torch.autocast")
    assert _read(rule, {"torch_autocast.enabled": False, "torch_autocast.dtype": "bfloat16"}) == "fp32"


def test_deepspeed_precision_refuses_what_deepspeed_refuses() -> None:
    rule = _rule(DS, "precision.dtype")
    for given in ({"fp16.enabled": True, "bf16.enabled": True}, {"fp16.enabled": True, "bfloat16.enabled": True}):
        with pytest.raises(ValueError, match="fp16 and bf16 are both enabled"):
            _read(rule, given)
    with pytest.raises(ValueError, match=r"^torch_autocast.dtype 'float32' is not fp16 or bf16$"):
        _read(rule, {"torch_autocast.enabled": True, "torch_autocast.dtype": "float32"})


def test_deepspeed_precision_writes() -> None:
    rule = _rule(DS, "precision.dtype")
    assert _write(rule, "fp16") == {"fp16_enabled": True}
    assert _write(rule, "bf16") == {"bf16_enabled": True}
    assert _write(rule, "fp32") == {"fp16_enabled": False}
    _approx(_write(rule, "cbf16"), {"bf16_enabled": True}, "cbfloat16 is Cerebras-only")


def test_deepspeed_precision_end_to_end() -> None:
    with pytest.raises(InputError, match="both enabled") as caught:
        translate({"fp16": {"enabled": True}, "bf16": {"enabled": True}}, "deepspeed", "neox")
    assert "fp16.enabled" in str(caught.value)
    done = translate({"bf16": {"enabled": True}}, "deepspeed", "cerebras", target_version="2.0.2")
    assert done.config["model"]["use_bfloat16"] is True and done.config["model"]["mixed_precision"] is True


# ---- DeepSpeed (was deepspeed.optimizer): optimizer.type, adam_w_mode, a peek at weight_decay --------


OPT = "optimizer."


@pytest.mark.parametrize(
    "given,value",
    [
        ({}, None),
        ({OPT + "type": "Adam"}, "adamw"),  # adam_w_mode defaults to true
        (
            {OPT + "type": "ADAM", OPT + "params.adam_w_mode": False, OPT + "params.weight_decay": 0.01},
            "adam",
        ),  # coupled L2
        ({OPT + "type": "adam", OPT + "params.adam_w_mode": False}, "adamw"),  # no weight decay: AdamW's algorithm
        ({OPT + "type": "adam", OPT + "params.adam_w_mode": False, OPT + "params.weight_decay": 0.0}, "adamw"),
        ({OPT + "type": "AdamW", OPT + "params.adam_w_mode": False, OPT + "params.weight_decay": 0.1}, "adamw"),
        ({OPT + "type": "onebitadam"}, "onebitadam"),
        ({OPT + "type": "ZeroOneAdam"}, "zerooneadam"),
        ({OPT + "type": "LAMB"}, "lamb"),
        ({OPT + "type": "OneBitLamb"}, "onebitlamb"),
        ({OPT + "type": "Lion"}, "lion"),
        ({OPT + "type": "adagrad"}, "adagrad"),
        ({OPT + "type": "Muon"}, "muon"),
        ({OPT + "type": "SGD"}, "sgd"),
        ({OPT + "type": "Adafactor"}, "adafactor"),  # torch.optim names: exact case
    ],
)
def test_deepspeed_optimizer_reads(given: dict[str, Any], value: str | None) -> None:
    rule = _rule(DS, "optim.type")
    assert rule.peek == (OPT + "params.weight_decay",)
    kwargs = {ident(k): given.get(k) for k in (*rule.keys, *rule.peek)}
    assert rule.formula is not None and rule.formula.read(**kwargs) == value


def test_deepspeed_optimizer_mup_torch_and_unknown_names() -> None:
    rule = _rule(DS, "optim.type")
    assert rule.formula is not None

    def read(name: str) -> Any:
        assert rule.formula is not None
        return rule.formula.read(
            optimizer_type=name, optimizer_params_adam_w_mode=None, optimizer_params_weight_decay=None
        )

    _approx(read("MuAdamW"), "adamw", "MuAdamW is muP's adamw: its per-layer lr scaling is not carried")
    _approx(read("musgd"), "sgd", "musgd is muP's sgd")
    got = read("RMSprop")
    assert isinstance(got, Extension) and got.detail == "torch.optim.RMSprop has no canonical optimizer"
    for unknown in ("sgd", "rmsprop", "Foo"):  # torch's names are exact: getattr(torch.optim, name)
        with pytest.raises(UnknownValue) as foreign:  # no case names it: a fork's? (the engine's one rule)
            read(unknown)
        assert foreign.value.value == unknown and foreign.value.key == "optimizer.type"
        assert {"adamw", "lamb", "SGD", "RMSprop"} <= set(foreign.value.known)


def test_deepspeed_optimizer_writes() -> None:
    rule = _rule(DS, "optim.type")
    assert _write(rule, "adam") == {"optimizer_type": "Adam", "optimizer_params_adam_w_mode": False}
    for value, name in (
        ("adamw", "AdamW"),
        ("sgd", "SGD"),
        ("onebitlamb", "OneBitLamb"),
        ("adafactor", "Adafactor"),
        ("muon", "Muon"),
    ):
        assert _write(rule, value) == {"optimizer_type": name}
    with pytest.raises(Unexpressible, match="^optimizer 'lars' has no DeepSpeed counterpart$"):
        _write(rule, "lars")


def test_deepspeed_optimizer_end_to_end() -> None:
    done = translate(
        {"train_batch_size": 8, "optimizer": {"type": "Adam", "params": {"adam_w_mode": False, "weight_decay": 0.1}}},
        "deepspeed",
        "neox",
    )
    assert done.ir.get("optim.type") == "adam"
    back = translate(PYTHIA, "neox", "deepspeed", set_values={"optim.type": "adam"})
    assert back.config["optimizer"]["type"] == "Adam" and back.config["optimizer"]["params"]["adam_w_mode"] is False


# ---- NeoX (was neox.precision): precision, else the fp16 / bf16 blocks --------------------------


NEOX = "neox"


@pytest.mark.parametrize(
    "given,value",
    [
        ({"precision": "fp16"}, "fp16"),
        ({"precision": "float16"}, "fp16"),
        ({"precision": "half"}, "fp16"),
        ({"precision": "bfloat16"}, "bf16"),
        ({"precision": "BF16"}, "bf16"),
        ({"precision": "fp32"}, "fp32"),
        ({"precision": "bfloat16", "fp16.enabled": True}, "bf16"),  # precision decides
        ({"fp16.enabled": True}, "fp16"),
        ({"fp16.enabled": True, "fp16.fp16": True}, "fp16"),  # Pythia's {"fp16": true, "enabled": true}
        ({"fp16.enabled": None, "fp16.fp16": True}, "fp16"),  # Pythia's {"fp16": true, ...} switch
        ({"fp16.enabled": False, "fp16.fp16": True}, "fp32"),  # enabled says no
        ({"bf16.enabled": True}, "bf16"),
        ({"fp16.enabled": False}, "fp32"),
        ({}, "fp32"),
    ],
)
def test_neox_precision_reads(given: dict[str, Any], value: str) -> None:
    assert _read(_rule(NEOX, "precision.dtype"), given) == value


def test_neox_precision_deeperspeed_bfloat16_and_errors() -> None:
    rule = _rule(NEOX, "precision.dtype")
    _approx(_read(rule, {"fp16.enabled": True, "fp16.type": "bfloat16"}), "bf16", "DeeperSpeed (2021)")  # Pythia 1B
    _approx(_read(rule, {"fp16.fp16": True, "fp16.type": "bf16"}), "bf16", "DeeperSpeed (2021)")
    with pytest.raises(ValueError, match=r"^unknown precision 'fp8'; expected fp16, bfloat16 or fp32$"):
        _read(rule, {"precision": "fp8"})


def test_neox_precision_writes() -> None:
    rule = _rule(NEOX, "precision.dtype")
    assert _write(rule, "fp16") == {"precision": "fp16", "fp16_enabled": True}
    assert _write(rule, "bf16") == {"precision": "bfloat16", "bf16_enabled": True}
    assert _write(rule, "fp32") == {"precision": "fp32"}
    _approx(_write(rule, "cbf16"), {"precision": "bfloat16", "bf16_enabled": True}, "no GPU counterpart")


def test_neox_precision_end_to_end_pythia() -> None:
    done = translate(PYTHIA, "neox", "deepspeed")  # its fp16 block, enabled
    assert done.ir.get("precision.dtype") == "fp16" and done.config["fp16"]["enabled"] is True


# ---- VeOmni (was veomni.precision, veomni.zero_stage, veomni.packed) ----------------------------


MP = "train.accelerator.fsdp_config.mixed_precision."


def test_veomni_precision_reads_and_writes() -> None:
    rule = _rule("veomni", "precision.dtype", "nested")
    _approx(_read(rule, {MP + "enable": False, MP + "param_dtype": "float32"}), "bf16", "no fp32 master copy")
    assert _read(rule, {MP + "enable": True, MP + "param_dtype": "bfloat16"}) == "bf16"
    assert _read(rule, {MP + "enable": True}) == "bf16"  # no dtype: bfloat16
    assert _read(rule, {MP + "enable": True, MP + "param_dtype": "float16"}) == "fp16"
    assert _read(rule, {MP + "enable": True, MP + "param_dtype": "float32"}) == "fp32"
    with pytest.raises(UnknownValue) as foreign:  # no case names it: a fork's? (the engine's one rule)
        _read(rule, {MP + "enable": True, MP + "param_dtype": "fp8"})
    assert foreign.value.value == "fp8" and foreign.value.known == ("bfloat16", "float16", "float32")
    on = ident(MP + "enable")
    dtype = ident(MP + "param_dtype")
    assert _write(rule, "bf16") == {on: True, dtype: "bfloat16"}
    assert _write(rule, "fp32") == {on: True, dtype: "float32"}
    _approx(_write(rule, "fp16"), {on: True, dtype: "float16"}, "no loss scaler")
    _approx(_write(rule, "cbf16"), {on: True, dtype: "bfloat16"}, "no GPU counterpart")


FSDP = "train.accelerator.fsdp_config."


@pytest.mark.parametrize(
    "given,stage",
    [
        ({FSDP + "fsdp_mode": "ddp"}, 0),
        ({FSDP + "fsdp_mode": "fsdp1", "train.enable_full_shard": True}, 3),
        ({FSDP + "fsdp_mode": "fsdp1"}, 3),  # FULL_SHARD unless enable_full_shard says false
        ({FSDP + "fsdp_mode": "fsdp1", "train.enable_full_shard": False}, 0),  # NO_SHARD
        ({FSDP + "fsdp_mode": "fsdp2", FSDP + "reshard_after_forward": True}, 3),
        ({FSDP + "fsdp_mode": "fsdp2", FSDP + "reshard_after_forward": False}, 2),
    ],
)
def test_veomni_zero_stage_reads(given: dict[str, Any], stage: int) -> None:
    assert _read(_rule("veomni", "parallel.zero_stage"), given) == stage


def test_veomni_zero_stage_writes_and_refuses() -> None:
    rule = _rule("veomni", "parallel.zero_stage")
    with pytest.raises(UnknownValue) as foreign:
        _read(rule, {FSDP + "fsdp_mode": "zero3"})
    assert foreign.value.value == "zero3" and foreign.value.known == ("ddp", "fsdp1", "fsdp2")
    mode, device, reshard = ident(FSDP + "fsdp_mode"), "train_init_device", ident(FSDP + "reshard_after_forward")
    assert _write(rule, 0) == {mode: "ddp", device: "cuda"}
    _approx(_write(rule, 1), {mode: "fsdp2", device: "meta", reshard: False}, "ZeRO-1 shards only the optimizer states")
    assert _write(rule, 2) == {mode: "fsdp2", device: "meta", reshard: False}
    assert _write(rule, 3) == {mode: "fsdp2", device: "meta"}


def test_veomni_zero_stage_end_to_end_from_deepspeed() -> None:
    done = translate({"train_batch_size": 8, "zero_optimization": {"stage": 2}}, "deepspeed", "veomni")
    fsdp = done.config["train"]["accelerator"]["fsdp_config"]
    assert fsdp["fsdp_mode"] == "fsdp2" and fsdp["reshard_after_forward"] is False
    assert done.config["train"]["init_device"] == "meta"


PACK = {"train.dyn_bsz": True}


@pytest.mark.parametrize(
    "given,packed",
    [
        ({}, None),  # (the engine reads an absent dyn_bsz at its default, true)
        (PACK, True),  # rmpad at its default: padding-free
        ({**PACK, "train.rmpad": True, "train.rmpad_with_pos_ids": False}, True),
        ({**PACK, "train.rmpad": False, "train.rmpad_with_pos_ids": True}, True),
        ({**PACK, "train.rmpad": False, "train.rmpad_with_pos_ids": False}, False),  # padded batches
        ({**PACK, "train.rmpad": False}, False),
        ({"train.dyn_bsz": False, "train.rmpad": True}, False),
    ],
)
def test_veomni_packed_reads(given: dict[str, Any], packed: bool | None) -> None:
    assert _read(_rule("veomni", "batch.packed"), given) is packed


def test_veomni_packed_refuses_both_padding_free_modes_and_writes_rmpad_before_458() -> None:
    rule = _rule("veomni", "batch.packed")
    with pytest.raises(ValueError, match=r"^rmpad and rmpad_with_pos_ids are both true: VeOmni refuses that"):
        _read(rule, {**PACK, "train.rmpad": True, "train.rmpad_with_pos_ids": True})
    assert _write(rule, True, "#445") == {"train_dyn_bsz": True, "train_rmpad": True}  # before #458
    assert _write(rule, True, "#458") == {"train_dyn_bsz": True}
    assert _write(rule, True, "") == {"train_dyn_bsz": True}
    assert _write(rule, False, "#445") == {"train_dyn_bsz": False}


# ---- Cerebras (was cerebras.precision): the keys changed at 1.7 and 2.1 --------------------------


CB = "cerebras"


@pytest.mark.parametrize(
    "given,version,value",
    [
        ({}, "2.10.0", None),  # no key: no value
        ({"model.mixed_precision": False, "model.use_bfloat16": True}, "2.0.2", "fp32"),
        ({"model.mixed_precision": True, "model.use_bfloat16": True}, "2.0.2", "bf16"),
        ({"model.mixed_precision": True, "model.use_bfloat16": False}, "2.0.2", "fp16"),
        ({"model.mixed_precision": True, "model.fp16_type": "float16"}, "2.10.0", "fp16"),
        ({"model.mixed_precision": True, "model.fp16_type": "cbfloat16"}, "2.10.0", "cbf16"),
        ({"model.mixed_precision": True, "model.fp16_type": "bfloat16"}, "2.4.0", "bf16"),
        ({"model.mixed_precision": True}, "1.6.1", "fp16"),  # before 1.7: float16 only
        ({"model.mixed_precision": True}, "1.7.0", "bf16"),  # from 1.7: bfloat16 by default
        ({"model.mixed_precision": True}, "", "bf16"),  # an unknown release counts as the newest
        # 1.x's TensorFlow models: Keras' mixed_float16 whatever use_bfloat16 says; gone from 2.0
        ({"model.mixed_precision": True, "train_input.data_processor": "GptTfRecordsProcessor"}, "1.9.1", "fp16"),
        (
            {
                "model.mixed_precision": True,
                "model.use_bfloat16": True,
                "train_input.data_processor": "GptTfRecordsProcessor",
            },
            "1.7.0",
            "fp16",
        ),
        ({"model.mixed_precision": True, "train_input.data_processor": "GptTfRecordsProcessor"}, "2.10.0", "bf16"),
        ({"model.mixed_precision": True, "train_input.data_processor": "GptHDF5DataProcessor"}, "1.9.1", "bf16"),
    ],
)
def test_cerebras_precision_reads(given: dict[str, Any], version: str, value: str | None) -> None:
    assert _read(_rule(CB, "precision.dtype"), given, version) == value


def test_cerebras_precision_names_an_fp16_type_no_release_has() -> None:
    with pytest.raises(UnknownValue) as foreign:  # a fork's? the engine's one rule, not bad input
        _read(_rule(CB, "precision.dtype"), {"model.mixed_precision": True, "model.fp16_type": "float8"}, "2.10.0")
    assert foreign.value.value == "float8" and foreign.value.known == ("float16", "bfloat16", "cbfloat16")


def test_cerebras_precision_writes_each_releases_keys() -> None:
    rule = _rule(CB, "precision.dtype")
    on = {"model_mixed_precision": True}
    for version in ("1.6.0", "2.0.2", "2.10.0", ""):
        assert _write(rule, "fp32", version) == {"model_mixed_precision": False}
    assert _write(rule, "fp16", "1.6.1") == on
    _approx(_write(rule, "bf16", "1.6.1"), on, "Model Zoo 1.6.1 mixed precision is float16 only")
    assert _write(rule, "bf16", "1.7.0") == {**on, "model_use_bfloat16": True}
    assert _write(rule, "fp16", "2.0.3") == {**on, "model_use_bfloat16": False}  # the GPT default is true
    _approx(_write(rule, "cbf16", "2.0.3"), {**on, "model_use_bfloat16": True}, "Model Zoo 2.0.3 has no cbfloat16")
    assert _write(rule, "fp16", "2.1.0") == {**on, "model_fp16_type": "float16"}
    assert _write(rule, "bf16", "2.10.0") == {**on, "model_fp16_type": "bfloat16"}
    assert _write(rule, "cbf16", "") == {**on, "model_fp16_type": "cbfloat16"}


def test_cerebras_precision_end_to_end_old_release() -> None:
    done = translate(
        {"fp16": {"enabled": True}, "train_batch_size": 8}, "deepspeed", "cerebras", target_version="2.0.2"
    )
    assert done.config["model"]["use_bfloat16"] is False
    old = translate({"bf16": {"enabled": True}, "train_batch_size": 8}, "deepspeed", "cerebras", target_version="1.6.0")
    assert "use_bfloat16" not in old.config["model"]
    entry = next(e for e in old.report.entries if "precision.dtype" in e.fields and e.status is Status.LOSSY)
    assert "float16 only" in entry.detail


# ---- Cerebras (was cerebras.norm): norm_type from 2.0.2, 1.9.1's switches --------------------------


NORM = ("model.norm", "model.norm_bias")


@pytest.mark.parametrize(
    "given,version,value",
    [
        (
            {"model.norm_type": "layernorm"},
            "2.10.0",
            {"norm": "layernorm", "norm_bias": True},
        ),  # torch LayerNorm: a bias
        ({"model.norm_type": "LayerNorm"}, "2.10.0", {"norm": "layernorm", "norm_bias": True}),  # any case
        ({"model.norm_type": "biasless-layernorm"}, "2.10.0", {"norm": "layernorm", "norm_bias": False}),
        ({"model.norm_type": "RMSNorm"}, "2.4.0", {"norm": "rmsnorm", "norm_bias": False}),
        (
            {"model.norm_type": "nonparametric-layernorm"},
            "2.4.0",
            {"norm": "non_parametric_layernorm", "norm_bias": False},
        ),
        ({}, "2.10.0", {}),  # explicitly null, no default: no value
        # 1.9.1's switches where norm_type is at its default (the engine passes "layernorm" when absent)
        (
            {"model.norm_type": "layernorm", "model.use_rms_norm": True},
            "1.9.1",
            {"norm": "rmsnorm", "norm_bias": False},
        ),
        (
            {"model.norm_type": "layernorm", "model.use_biasless_norm": True},
            "1.9.1",
            {"norm": "layernorm", "norm_bias": False},
        ),
        (
            {"model.use_rms_norm": 1},
            "1.9.1",
            {"norm": "rmsnorm", "norm_bias": False},
        ),  # `if use_rms_norm`: any true value
        ({"model.norm_type": "layernorm", "model.use_rms_norm": []}, "1.9.1", {"norm": "layernorm", "norm_bias": True}),
        (
            {"model.norm_type": "layernorm", "model.use_rms_norm": False, "model.use_biasless_norm": "yes"},
            "1.9.1",
            {"norm": "layernorm", "norm_bias": False},
        ),
        # norm_type says otherwise: the switches are not read (a respelled LayerNorm is not the default)
        (
            {"model.norm_type": "rmsnorm", "model.use_biasless_norm": True},
            "2.0.2",
            {"norm": "rmsnorm", "norm_bias": False},
        ),
        (
            {"model.norm_type": "LayerNorm", "model.use_rms_norm": True},
            "2.0.2",
            {"norm": "layernorm", "norm_bias": True},
        ),
    ],
)
def test_cerebras_norm_reads(given: dict[str, Any], version: str, value: dict[str, Any]) -> None:
    assert _read(_rule(CB, "model.norm"), given, version) == value


def test_cerebras_norm_unknown_type_is_an_extension() -> None:
    got = _read(_rule(CB, "model.norm"), {"model.norm_type": "groupnorm"})
    assert isinstance(got, Extension) and got.detail == "norm_type 'groupnorm' has no counterpart outside Cerebras"


def test_cerebras_norm_writes_norm_type_from_2_0_2() -> None:
    rule = _rule(CB, "model.norm")
    for version in ("2.0.2", "2.10.0", ""):
        assert _write_fields(rule, version, norm="layernorm", norm_bias=True) == {"model_norm_type": "layernorm"}
        assert _write_fields(rule, version, norm="layernorm") == {"model_norm_type": "layernorm"}
        assert _write_fields(rule, version, norm="layernorm", norm_bias=False) == {
            "model_norm_type": "biasless-layernorm"
        }
        assert _write_fields(rule, version, norm="rmsnorm", norm_bias=False) == {"model_norm_type": "rmsnorm"}
    assert _write_fields(rule, "2.4.0", norm="non_parametric_layernorm") == {
        "model_norm_type": "nonparametric-layernorm"
    }
    _approx(
        _write_fields(rule, "2.4.0", norm="rmsnorm", norm_bias=True),
        {"model_norm_type": "rmsnorm"},
        "Cerebras' rmsnorm has no bias",
        ("model.norm_bias",),
    )
    _approx(
        _write_fields(rule, "", norm="non_parametric_layernorm", norm_bias=True),
        {"model_norm_type": "nonparametric-layernorm"},
        "Cerebras' nonparametric-layernorm has no bias",
        ("model.norm_bias",),
    )
    with pytest.raises(Unexpressible, match="^Cerebras has no scalenorm norm_type$"):
        _write_fields(rule, "2.10.0", norm="scalenorm")


def test_cerebras_norm_writes_before_2_0_2() -> None:
    rule = _rule(CB, "model.norm")
    assert _write_fields(rule, "1.9.1", norm="rmsnorm", norm_bias=False) == {"model_use_rms_norm": True}
    assert _write_fields(rule, "1.9.1", norm="layernorm", norm_bias=True) == {}  # LayerNorm: the default
    assert _write_fields(rule, "1.8.0", norm="layernorm") == {}
    _approx(
        _write_fields(rule, "1.8.0", norm="rmsnorm", norm_bias=False),
        {},
        "Model Zoo 1.8.0 has no rmsnorm without bias norm (norm_type came with 2.0)",
        NORM,
    )  # before use_rms_norm
    _approx(
        _write_fields(rule, "1.9.1", norm="layernorm", norm_bias=False),
        {},
        "Model Zoo 1.9.1 has no layernorm without bias norm",
        NORM,
    )  # use_biasless_norm: gptj only, not written
    _approx(
        _write_fields(rule, "1.9.1", norm="scalenorm"),
        {},
        "Model Zoo 1.9.1 has no scalenorm norm (norm_type came",
        NORM,
    )


def test_cerebras_norm_end_to_end() -> None:
    old = translate(PYTHIA, "neox", "cerebras", target_version="1.9.1", set_values={"model.norm": "rmsnorm"})
    assert old.config["model"]["use_rms_norm"] is True and "norm_type" not in old.config["model"]
    new = translate(PYTHIA, "neox", "cerebras", target_version="2.0.2", set_values={"model.norm": "rmsnorm"})
    assert new.config["model"]["norm_type"] == "rmsnorm" and "use_rms_norm" not in new.config["model"]
    back = translate(old.config, "cerebras", "neox", source_version="1.9.1")
    assert back.config["norm"] == "rmsnorm"


# ---- Cerebras (was cerebras.attention_bias): q/k/v and output projection biases ------------------


QKV, OUT = "model.use_projection_bias_in_attention", "model.use_ffn_bias_in_attention"


@pytest.mark.parametrize(
    "qkv,out,value",
    [
        (True, True, {"attention_bias": True}),
        (False, False, {"attention_bias": False}),
        (True, False, {"attention_bias": True, "attention_output_bias": False}),  # Qwen2: q, k, v biased, o not
        (False, True, {"attention_bias": False, "attention_output_bias": True}),
        (True, None, {"attention_bias": True}),  # a lone key says both (the output bias: as attention_bias)
        (None, False, {"attention_bias": False}),
        (None, True, {"attention_bias": True}),
        (None, None, {"attention_bias": None}),
    ],
)
def test_cerebras_attention_bias_reads(qkv: bool | None, out: bool | None, value: dict[str, Any]) -> None:
    assert _read(_rule(CB, "model.attention_bias"), {QKV: qkv, OUT: out}) == value


@pytest.mark.parametrize(
    "bias,output,written",
    [
        (True, None, (True, True)),
        (True, True, (True, True)),
        (False, None, (False, False)),
        (False, False, (False, False)),
        (True, False, (True, False)),
        (False, True, (False, True)),
        (None, True, (None, True)),
        (None, False, (None, False)),
        (None, None, (None, None)),
    ],
)
def test_cerebras_attention_bias_writes(bias: bool | None, output: bool | None, written: tuple[Any, Any]) -> None:
    got = _write_fields(_rule(CB, "model.attention_bias"), attention_bias=bias, attention_output_bias=output)
    assert got == {k: v for k, v in zip((ident(QKV), ident(OUT)), written) if v is not None}


def test_cerebras_attention_bias_end_to_end_qwen2_style() -> None:
    done = translate(
        PYTHIA, "neox", "cerebras", set_values={"model.attention_bias": True, "model.attention_output_bias": False}
    )
    assert done.config["model"]["use_projection_bias_in_attention"] is True
    assert done.config["model"]["use_ffn_bias_in_attention"] is False


# ---- Cerebras (was cerebras.parallel_residual): a rule that only peeks -------------------------------


@pytest.mark.parametrize(
    "given,parallel",
    [
        ({"model.name": "gptj"}, True),
        ({"model.name": "GPT-NeoX"}, True),
        ({"model.name": "falcon"}, True),  # any case
        ({"model.name": "llama", "model.use_untied_layer_norm": True}, False),  # the trainer layout's class decides
        ({"model.name": "", "model.residual_dropout_rate": 0.0}, True),  # no name: the keys
        ({"model.use_untied_layer_norm": False}, True),  # GPT-J's backbone keys, whatever their value
        ({"model.residual_dropout_rate": 0.1}, True),
        ({"model.rotary_dim": 64}, False),  # rotary_dim alone: any family
        ({}, False),
    ],
)
def test_cerebras_parallel_residual_reads(given: dict[str, Any], parallel: bool) -> None:
    rule = _rule(CB, "model.parallel_residual", "legacy")
    assert rule.key is None and rule.keys == () and rule.formula is not None
    assert rule.formula.read(**{ident(k): given.get(k) for k in rule.peek}) is parallel
    assert rule.formula.write(value=parallel) == {}  # the model family says it


# ---- VeOmni (was veomni.model_parallel): tp_size / pp_size / cp_size must be 1 -------------------


ACC = "train.accelerator."


@pytest.mark.parametrize(
    "given", [{}, {ACC + "tp_size": 1, ACC + "pp_size": 1, ACC + "cp_size": 1}, {ACC + "pp_size": 1.0}]
)
def test_veomni_model_parallel_reads_one(given: dict[str, Any]) -> None:
    assert _read(_rule("veomni", "parallel.tensor_size", "nested"), given) == {"tensor_size": 1, "pipeline_size": 1}


@pytest.mark.parametrize(
    "given,message",
    [
        ({ACC + "tp_size": 2}, "tp_size 2"),
        ({ACC + "tp_size": 0, ACC + "pp_size": 4}, "tp_size 0"),  # the first key that is not 1
        ({ACC + "pp_size": 4, ACC + "cp_size": 2}, "pp_size 4"),
        ({ACC + "cp_size": 2}, "cp_size 2"),
    ],
)
def test_veomni_model_parallel_refuses_what_veomni_asserts(given: dict[str, Any], message: str) -> None:
    with pytest.raises(
        ValueError, match=f"^{message}: VeOmni asserts it is 1 \\(not supported yet\\); this config cannot run$"
    ):
        _read(_rule("veomni", "parallel.tensor_size", "nested"), given)


def test_veomni_model_parallel_writes() -> None:
    rule = _rule("veomni", "parallel.tensor_size", "nested")
    for tensor, pipeline in ((1, 1), (1, None), (None, 0), (1, 0)):  # pipeline 0 is none, as 1
        assert _write_fields(rule, tensor_size=tensor, pipeline_size=pipeline) == {}
    for tensor, pipeline, said in (
        (4, None, "tensor 4 x pipeline 1"),
        (None, 2, "tensor 1 x pipeline 2"),
        (4, 0, "tensor 4 x pipeline 1"),
        (2, 4, "tensor 2 x pipeline 4"),
    ):
        with pytest.raises(
            Unexpressible, match=f"^VeOmni has no tensor or pipeline parallelism .*: run the {said} ranks data-parallel"
        ):
            _write_fields(rule, tensor_size=tensor, pipeline_size=pipeline)


def test_veomni_model_parallel_end_to_end() -> None:
    with pytest.raises(InputError, match="tp_size 2: VeOmni asserts it is 1") as caught:
        translate({"train": {"accelerator": {"tp_size": 2}}}, "veomni", "neox")
    assert caught.value.key == "train.accelerator.tp_size"
    done = translate(PYTHIA, "neox", "veomni", set_values={"parallel.tensor_size": 2})
    entry = next(e for e in done.report.entries if "parallel.tensor_size" in e.fields)
    assert entry.status is Status.DROPPED and "tensor 2 x pipeline 1 ranks data-parallel" in entry.detail


# ---- the shape's own rules ----------------------------------------------------------------------


RULE = {"field": "precision.dtype", "key": "a", "also": ["b"]}


@pytest.mark.parametrize(
    "cases,message",
    [
        ({"read": [{"value": "fp16"}]}, r"cases is \{read"),
        (
            {"read": [{"match": {"c": True}, "value": "fp16"}], "write": [{"keys": {"a": True}}]},
            "not the rule's: \\['c'\\]",
        ),
        ({"read": [{"value": "fp16"}], "write": [{"keys": {"c": True}}]}, "not the rule's"),
        ({"read": [{"value": "fp16", "error": "no"}], "write": [{"keys": {}}]}, "one of value"),
        ({"read": [{"error": "no", "lossy": "why"}], "write": [{"keys": {}}]}, "one of value"),
        ({"read": [{"value": "fp16"}], "write": [{"value": "fp16"}]}, "gives the keys it writes"),
        ({"read": [{"match": {"a": {"is": 1}}, "value": "fp16"}], "write": [{"keys": {}}]}, "a pattern is"),
        ({"read": [{"before": "9.9.9", "value": "fp16"}], "write": [{"keys": {}}]}, "no release of"),
        ({"read": [{"value": "fp16", "lossy": True}], "write": [{"keys": {}}]}, "are messages"),
    ],
)
def test_the_shape_refuses_malformed_cases(cases: dict[str, Any], message: str) -> None:
    with pytest.raises(MappingTableError, match=message):
        build_rule("t.yaml", 0, {**RULE, "cases": cases}, "cerebras")


def test_a_value_no_case_matches_is_bad_input_and_a_value_no_entry_writes_is_unexpressible() -> None:
    """A name no case names is a value the release does not know (UnknownValue, the engine's one rule);
    a combination no case takes, of values the cases do name (or that are no names), is bad input."""
    rule = build_rule(
        "t.yaml",
        0,
        {
            **RULE,
            "cases": {
                "read": [{"match": {"a": True}, "value": "fp16"}, {"match": {"a": "on", "b": "x"}, "value": "bf16"}],
                "write": [{"value": "fp16", "keys": {"a": True}}],
            },
        },
    )
    assert rule.formula is not None
    assert rule.formula.read(a=True, b=None) == "fp16"
    with pytest.raises(ValueError, match="no case for a=false, b=null"):
        rule.formula.read(a=False, b=None)
    with pytest.raises(ValueError, match="no case for a='on', b=null"):
        rule.formula.read(a="on", b=None)
    with pytest.raises(UnknownValue) as foreign:
        rule.formula.read(a="fp8", b=None)
    assert (foreign.value.value, foreign.value.known, foreign.value.key) == ("fp8", ("on",), "a")
    with pytest.raises(Unexpressible):
        rule.formula.write(value="bf16")


def test_an_extension_case_and_a_negated_pattern() -> None:
    """A reading may be the framework's own setting (an extension, dropped elsewhere with its reason);
    {not: ...} matches every other value, an absent key too when it negates a value."""
    rule = build_rule(
        "t.yaml",
        0,
        {
            **RULE,
            "cases": {
                "read": [
                    {"match": {"a": "fp8"}, "extension": "a={a!r} is the framework's own"},
                    {"match": {"a": {"not": [None, "off"]}}, "value": "fp16"},
                    {"value": "fp32"},
                ],
                "write": [{"keys": {"a": "on"}}],
            },
        },
    )
    assert rule.formula is not None
    got = rule.formula.read(a="fp8", b=None)
    assert type(got).__name__ == "Extension" and got.detail == "a='fp8' is the framework's own"
    assert rule.formula.read(a="on", b=None) == "fp16"
    assert rule.formula.read(a="off", b=None) == "fp32" and rule.formula.read(a=None, b=None) == "fp32"
    assert rule.formula.write(value="bf16") == {"a": "on"}  # an entry without value takes every value


TWO = {"fields": ["model.norm", "model.norm_bias"], "key": "a", "also": ["b"]}


@pytest.mark.parametrize(
    "cases,message",
    [
        ({"read": [{"value": "rmsnorm"}], "write": [{"keys": {}}]}, "value as \\{field: value\\}"),
        ({"read": [{"value": {"model.eps": 1}}], "write": [{"keys": {}}]}, "value as \\{field: value\\}"),
        ({"read": [{"value": {}}], "write": [{"value": {"model.eps": 1}, "keys": {}}]}, "value as \\{field: value\\}"),
        ({"read": [{"value": {}}], "write": [{"value": {"model.norm": {"is": 1}}, "keys": {}}]}, "a pattern is"),
        ({"read": [{"value": {}}], "write": [{"keys": {}, "error": "no"}]}, "or an error"),
        ({"read": [{"value": {}}], "write": [{"error": "no", "lossy": "why"}]}, "or an error"),
        ({"read": [{"value": {}, "lossy": "why", "lost": ["model.eps"]}], "write": [{"keys": {}}]}, "lost names"),
        ({"read": [{"value": {}, "lost": ["model.norm"]}], "write": [{"keys": {}}]}, "lost names"),
        ({"read": [{"match": {"a": {"truthy": "yes"}}, "value": {}}], "write": [{"keys": {}}]}, "a pattern is"),
        ({"read": [{"value": {}}], "write": [{"keys": {"p": 1}}]}, "not the rule's: \\['p'\\]"),  # a peek is read only
    ],
)
def test_the_shape_refuses_malformed_cases_over_several_fields(cases: dict[str, Any], message: str) -> None:
    with pytest.raises(MappingTableError, match=message):
        build_rule("t.yaml", 0, {**TWO, "peek": ["p"], "cases": cases}, "cerebras")


def test_cases_over_several_fields_read_and_write_each() -> None:
    """A reading case gives some of the fields (the others are not set), approximately naming the
    fields it concerns; a writing entry matches several fields' values (a field left out: any), or
    says why none can be written, naming fields' values in its messages."""
    rule = build_rule(
        "t.yaml",
        0,
        {
            **TWO,
            "cases": {
                "read": [
                    {"match": {"a": "rms"}, "value": {"model.norm": "rmsnorm", "model.norm_bias": False}},
                    {
                        "match": {"a": "plain"},
                        "value": {"model.norm": "layernorm"},
                        "lossy": "a={a!r}: no bias said",
                        "lost": ["model.norm_bias"],
                    },
                    {"value": {}},
                ],
                "write": [
                    {"value": {"model.norm": "rmsnorm", "model.norm_bias": [False, None]}, "keys": {"a": "rms"}},
                    {
                        "value": {"model.norm": "layernorm"},
                        "keys": {"a": "plain", "b": 1},
                        "lossy": "{model.norm_bias} lost",
                        "lost": ["model.norm_bias"],
                    },
                    {"error": "no {model.norm} with bias {model.norm_bias}"},
                ],
            },
        },
    )
    assert rule.formula is not None and rule.formula.write_params() == {"norm", "norm_bias"}
    assert rule.formula.read(a="rms", b=None) == {"norm": "rmsnorm", "norm_bias": False}
    _approx(
        rule.formula.read(a="plain", b=None), {"norm": "layernorm"}, "a='plain': no bias said", ("model.norm_bias",)
    )
    assert rule.formula.read(a="other", b=None) == {}
    assert rule.formula.write(norm="rmsnorm", norm_bias=None) == {"a": "rms"}
    _approx(
        rule.formula.write(norm="layernorm", norm_bias=True), {"a": "plain", "b": 1}, "True lost", ("model.norm_bias",)
    )
    with pytest.raises(Unexpressible, match="^no rmsnorm with bias True$"):
        rule.formula.write(norm="rmsnorm", norm_bias=True)
    assert "a='rms': norm='rmsnorm', norm_bias=false;" in rule.formula.name  # (explain: the fields by their last part)


def test_a_truthy_pattern_and_a_case_that_keeps_the_case() -> None:
    """{truthy: ...} takes a value as the framework's `if key:` does; a case's own case_insensitive
    overrides the table's (a respelled default is not the default)."""
    rule = build_rule(
        "t.yaml",
        0,
        {
            **RULE,
            "cases": {
                "case_insensitive": True,
                "read": [
                    {"match": {"a": "on", "b": {"truthy": True}}, "case_insensitive": False, "value": "bf16"},
                    {"match": {"a": "on"}, "value": "fp16"},
                    {"value": "fp32"},
                ],
                "write": [{"keys": {}}],
            },
        },
    )
    assert rule.formula is not None
    for true in (True, 1, "no", [0], {"x": 1}):
        assert rule.formula.read(a="on", b=true) == "bf16"
    for false in (None, False, 0, 0.0, "", [], {}):
        assert rule.formula.read(a="on", b=false) == "fp16"
    assert rule.formula.read(a="ON", b=True) == "fp16"  # the first case keeps the case; the second folds it
