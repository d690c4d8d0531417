"""The `cases` shape (schemas/mapping.schema.json): a decision table over several keys that decide one
field together, on the rules that replaced formula classes (each section names the formula it
replaced): every case read and written with real values, the errors, the approximations and the
release boundaries, translations through them, and the tables the shape refuses."""

from __future__ import annotations

from typing import Any

import pytest

from translator.api import translate
from translator.errors import InputError, MappingTableError
from translator.formula import Approx, Unexpressible, ident
from translator.mapping import Rule, build_rule, load_table
from translator.report import Status

from conftest import FIXTURES

PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"


def _rule(fmt: str, field: str, layout: str | None = None) -> Rule:
    rules = load_table(fmt).for_layout(layout).rules_for_field(field)
    assert len(rules) == 1 and rules[0].shape == "cases"
    return rules[0]


def _read(rule: Rule, given: dict[str, Any], version: str = "") -> Any:
    """What the rule reads from these key values (every other key absent; no defaults applied)."""
    assert rule.formula is not None and set(given) <= set(rule.keys)
    kwargs = {ident(key): given.get(key) for key in rule.keys}
    if "version" in rule.formula.read_params():
        kwargs["version"] = version
    return rule.formula.read(**kwargs)


def _write(rule: Rule, value: Any, version: str = "") -> Any:
    assert rule.formula is not None
    return rule.formula.write(value=value, **({"version": version} if "version" in rule.formula.write_params() else {}))


def _approx(result: Any, value: Any, words: str) -> None:
    assert isinstance(result, Approx) and result.value == value and words in result.detail, result


# ---- DeepSpeed (was deepspeed.precision): fp16 / bf16 / bfloat16 / amp / torch_autocast --------


DS = "deepspeed"


@pytest.mark.parametrize("given,value", [
    ({"fp16.enabled": True}, "fp16"),
    ({"fp16.enabled": False}, "fp32"),
    ({}, "fp32"),
    ({"bf16.enabled": True}, "bf16"),
    ({"bfloat16.enabled": True}, "bf16"),  # the old name
    ({"fp16.enabled": True, "bf16.enabled": False, "bfloat16.enabled": True}, "fp16"),  # bf16 says no: the old name is not read
    ({"fp16.enabled": True, "fp16.type": "float16"}, "fp16"),
])  # fmt: skip
def test_deepspeed_precision_reads(given: dict[str, Any], value: str) -> None:
    assert _read(_rule(DS, "precision.dtype"), given) == value


def test_deepspeed_precision_approximate_readings() -> None:
    rule = _rule(DS, "precision.dtype")
    for spelled in ("bfloat16", "BFloat16", "bf16"):  # DeeperSpeed's fp16.type (any case)
        _approx(_read(rule, {"fp16.enabled": True, "fp16.type": spelled}), "bf16", "DeeperSpeed's bf16")
    _approx(_read(rule, {"amp.enabled": True}), "fp16", "apex AMP")
    _approx(_read(rule, {"torch_autocast.enabled": True}), "fp16", "torch.autocast")  # no dtype: float16 on CUDA
    for spelled, value in (("torch.bfloat16", "bf16"), ("bf16", "bf16"), ("torch.float16", "fp16"), ("half", "fp16"),
                           ("torch.BFloat16", "bf16")):  # fmt: skip
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


# ---- NeoX (was neox.precision): precision, else the fp16 / bf16 blocks --------------------------


NEOX = "neox"


@pytest.mark.parametrize("given,value", [
    ({"precision": "fp16"}, "fp16"), ({"precision": "float16"}, "fp16"), ({"precision": "half"}, "fp16"),
    ({"precision": "bfloat16"}, "bf16"), ({"precision": "BF16"}, "bf16"), ({"precision": "fp32"}, "fp32"),
    ({"precision": "bfloat16", "fp16.enabled": True}, "bf16"),  # precision decides
    ({"fp16.enabled": True}, "fp16"),
    ({"fp16.enabled": True, "fp16.fp16": True}, "fp16"),  # Pythia's {"fp16": true, "enabled": true}
    ({"fp16.enabled": None, "fp16.fp16": True}, "fp16"),  # Pythia's {"fp16": true, ...} switch
    ({"fp16.enabled": False, "fp16.fp16": True}, "fp32"),  # enabled says no
    ({"bf16.enabled": True}, "bf16"),
    ({"fp16.enabled": False}, "fp32"),
    ({}, "fp32"),
])  # fmt: skip
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
    with pytest.raises(ValueError, match=r"^param_dtype 'fp8': VeOmni accepts bfloat16, float16 or float32$"):
        _read(rule, {MP + "enable": True, MP + "param_dtype": "fp8"})
    on = ident(MP + "enable")
    dtype = ident(MP + "param_dtype")
    assert _write(rule, "bf16") == {on: True, dtype: "bfloat16"}
    assert _write(rule, "fp32") == {on: True, dtype: "float32"}
    _approx(_write(rule, "fp16"), {on: True, dtype: "float16"}, "no loss scaler")
    _approx(_write(rule, "cbf16"), {on: True, dtype: "bfloat16"}, "no GPU counterpart")


FSDP = "train.accelerator.fsdp_config."


@pytest.mark.parametrize("given,stage", [
    ({FSDP + "fsdp_mode": "ddp"}, 0),
    ({FSDP + "fsdp_mode": "fsdp1", "train.enable_full_shard": True}, 3),
    ({FSDP + "fsdp_mode": "fsdp1"}, 3),  # FULL_SHARD unless enable_full_shard says false
    ({FSDP + "fsdp_mode": "fsdp1", "train.enable_full_shard": False}, 0),  # NO_SHARD
    ({FSDP + "fsdp_mode": "fsdp2", FSDP + "reshard_after_forward": True}, 3),
    ({FSDP + "fsdp_mode": "fsdp2", FSDP + "reshard_after_forward": False}, 2),
])  # fmt: skip
def test_veomni_zero_stage_reads(given: dict[str, Any], stage: int) -> None:
    assert _read(_rule("veomni", "parallel.zero_stage"), given) == stage


def test_veomni_zero_stage_writes_and_refuses() -> None:
    rule = _rule("veomni", "parallel.zero_stage")
    with pytest.raises(ValueError, match=r"^unknown data-parallel mode 'zero3'; expected ddp, fsdp1 \(flat layout\) or fsdp2$"):
        _read(rule, {FSDP + "fsdp_mode": "zero3"})
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


@pytest.mark.parametrize("given,packed", [
    ({}, None),  # (the engine reads an absent dyn_bsz at its default, true)
    (PACK, True),  # rmpad at its default: padding-free
    ({**PACK, "train.rmpad": True, "train.rmpad_with_pos_ids": False}, True),
    ({**PACK, "train.rmpad": False, "train.rmpad_with_pos_ids": True}, True),
    ({**PACK, "train.rmpad": False, "train.rmpad_with_pos_ids": False}, False),  # padded batches
    ({**PACK, "train.rmpad": False}, False),
    ({"train.dyn_bsz": False, "train.rmpad": True}, False),
])  # fmt: skip
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


@pytest.mark.parametrize("given,version,value", [
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
])  # fmt: skip
def test_cerebras_precision_reads(given: dict[str, Any], version: str, value: str | None) -> None:
    assert _read(_rule(CB, "precision.dtype"), given, version) == value


def test_cerebras_precision_refuses_unknown_fp16_type() -> None:
    with pytest.raises(ValueError, match=r"^unknown fp16_type 'float8'; expected float16, bfloat16 or cbfloat16$"):
        _read(_rule(CB, "precision.dtype"), {"model.mixed_precision": True, "model.fp16_type": "float8"}, "2.10.0")


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
    done = translate({"fp16": {"enabled": True}, "train_batch_size": 8}, "deepspeed", "cerebras", target_version="2.0.2")
    assert done.config["model"]["use_bfloat16"] is False
    old = translate({"bf16": {"enabled": True}, "train_batch_size": 8}, "deepspeed", "cerebras", target_version="1.6.0")
    assert "use_bfloat16" not in old.config["model"]
    entry = next(e for e in old.report.entries if "precision.dtype" in e.fields and e.status is Status.LOSSY)
    assert "float16 only" in entry.detail


# ---- the shape's own rules ----------------------------------------------------------------------


RULE = {"field": "precision.dtype", "key": "a", "also": ["b"]}


@pytest.mark.parametrize("cases,message", [
    ({"read": [{"value": "fp16"}]}, r"cases is \{read"),
    ({"read": [{"match": {"c": True}, "value": "fp16"}], "write": [{"keys": {"a": True}}]}, "not the rule's: \\['c'\\]"),
    ({"read": [{"value": "fp16"}], "write": [{"keys": {"c": True}}]}, "not the rule's"),
    ({"read": [{"value": "fp16", "error": "no"}], "write": [{"keys": {}}]}, "one of value"),
    ({"read": [{"error": "no", "lossy": "why"}], "write": [{"keys": {}}]}, "one of value"),
    ({"read": [{"value": "fp16"}], "write": [{"value": "fp16"}]}, "gives the keys it writes"),
    ({"read": [{"match": {"a": {"is": 1}}, "value": "fp16"}], "write": [{"keys": {}}]}, "a pattern is"),
    ({"read": [{"before": "9.9.9", "value": "fp16"}], "write": [{"keys": {}}]}, "no release of"),
    ({"read": [{"value": "fp16", "lossy": True}], "write": [{"keys": {}}]}, "are messages"),
])  # fmt: skip
def test_the_shape_refuses_malformed_cases(cases: dict[str, Any], message: str) -> None:
    with pytest.raises(MappingTableError, match=message):
        build_rule("t.yaml", 0, {**RULE, "cases": cases}, "cerebras")


def test_a_value_no_case_matches_is_bad_input_and_a_value_no_entry_writes_is_unexpressible() -> None:
    rule = build_rule("t.yaml", 0, {**RULE, "cases": {"read": [{"match": {"a": True}, "value": "fp16"}],
                                                      "write": [{"value": "fp16", "keys": {"a": True}}]}})  # fmt: skip
    assert rule.formula is not None
    assert rule.formula.read(a=True, b=None) == "fp16"
    with pytest.raises(ValueError, match="no case for a=false, b=null"):
        rule.formula.read(a=False, b=None)
    with pytest.raises(Unexpressible):
        rule.formula.write(value="bf16")


def test_an_extension_case_and_a_negated_pattern() -> None:
    """A reading may be the framework's own setting (an extension, dropped elsewhere with its reason);
    {not: ...} matches every other value, an absent key too when it negates a value."""
    rule = build_rule("t.yaml", 0, {**RULE, "cases": {
        "read": [{"match": {"a": "fp8"}, "extension": "a={a!r} is the framework's own"},
                 {"match": {"a": {"not": [None, "off"]}}, "value": "fp16"}, {"value": "fp32"}],
        "write": [{"keys": {"a": "on"}}]}})  # fmt: skip
    assert rule.formula is not None
    got = rule.formula.read(a="fp8", b=None)
    assert type(got).__name__ == "Extension" and got.detail == "a='fp8' is the framework's own"
    assert rule.formula.read(a="on", b=None) == "fp16"
    assert rule.formula.read(a="off", b=None) == "fp32" and rule.formula.read(a=None, b=None) == "fp32"
    assert rule.formula.write(value="bf16") == {"a": "on"}  # an entry without value takes every value
