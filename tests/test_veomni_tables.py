"""The VeOmni data: generated schema, layout renames, the HF table and the mapping table agree."""

from __future__ import annotations


import pytest
import yaml
from conftest import ROOT

from neoconv.knowledge.catalogue import catalogue
from neoconv.formats.veomni.fields import fields as veomni_fields
from neoconv.formats.hf import model_types as hf_config
from neoconv.knowledge.mapping import load_table

# read from files of the releases that had them, never written: FSDP1's switch, the padding-free modes and
# the dynamic-batch margin of VeOmni before #458
READ_ONLY = {"train.enable_full_shard", "train.rmpad", "train.rmpad_with_pos_ids", "train.dyn_bsz_margin"}


def test_schema_knows_both_layouts_of_the_seed_docs() -> None:
    fields = veomni_fields()
    assert fields.layouts_of("train.lr") == ("flat",)
    assert fields.layouts_of("train.optimizer.lr") == ("nested",)
    assert fields.layouts_of("train.optimizer", "adamw") == ("flat",)  # one scalar before PR #538
    assert set(fields.layouts_of("train.micro_batch_size")) == {"flat", "nested"}
    assert (
        fields.default("train.init_device", "flat") == "cuda"
        and fields.default("train.init_device", "nested") == "meta"
    )
    # the seed docs disagree with the code they describe; the code is what runs
    assert fields.node("train.lr_decay_style")["x-doc-default"] == "cosine"
    assert fields.node("train.lr_decay_style")["default"] == "constant"


def test_every_rename_joins_a_flat_field_to_a_nested_one() -> None:
    fields = veomni_fields()
    for old, new in fields.renames.items():
        assert "flat" in fields.layouts_of(old, "x"), old
        assert "nested" in fields.layouts_of(new), new
    for key in fields.carry_defaults:
        assert key in fields.renames or key in fields.nodes


@pytest.mark.parametrize("layout", ["nested", "flat"])
def test_every_key_a_rule_writes_has_a_place_in_its_layout(layout: str) -> None:
    fields = veomni_fields()
    for rule in load_table("veomni").for_layout(layout).rules:
        for key in rule.keys:
            if key.startswith("hf.") or key in READ_ONLY:
                continue
            placed = fields.back.get(key, key) if layout == "flat" else key
            assert layout in fields.layouts_of(placed), f"{key} ({rule.label}) has no {layout} place"


def test_hf_table_is_consistent() -> None:
    hf = hf_config.table()
    known = catalogue()
    rule_keys = {k for rule in load_table("veomni").rules for k in rule.keys}
    for mt in hf.types.values():
        for name in (*mt.keys, *mt.fixed, *mt.same_as, *mt.same_as.values()):
            assert name in known, f"{mt.name}: {name} is no canonical field"
        for key in mt.keys.values():
            assert f"hf.{key}" in rule_keys, f"mappings/veomni.yaml has no rule for {mt.name}'s {key}"
        for canonical in mt.activations:
            assert canonical in known["model.activation"].enum
    # every family the catalogue names writes some model_type
    for family in known["model.family"].enum:
        assert hf.model_type(family, "rotary") is not None


def test_model_type_choice_follows_the_block() -> None:
    hf = hf_config.table()
    assert hf.model_type("gpt2", "learned").name == "gpt2"
    assert hf.model_type("gpt2", "rotary").name == "gpt_neox"  # sequential rotary: GPTNeoX, no parallel residual
    assert hf.model_type("gpt-neox", "rotary").name == "gpt_neox"
    assert hf.model_type("gptj", "rotary").name == "gptj"
    assert hf.model_type("llama", "rotary").name == "llama"
    assert hf.model_type(None, "rotary") is None


def test_layout_data_is_plain_yaml() -> None:
    for name in ("veomni-layouts.yaml", "hf.yaml"):
        assert isinstance(yaml.safe_load((ROOT / "mappings" / name).read_text()), dict)
