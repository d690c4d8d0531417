"""The grammar's shapes (`fixed`, `flags`, `list`, `product` + `fill`, `pick`), each proved by a
test-only table under tests/tables/ that rewrites one of today's formula uses in the shape: the
translation with it is compared with the translation with the formula, and where they differ the
difference is asserted and said (it is what a table converted later would change)."""

from __future__ import annotations

import itertools
import shutil
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml

from neoconv.services import pipeline as api  # the pipeline (its check too), whose table lookups the tests patch
from neoconv.api import translate
from neoconv.engine import ingest
from neoconv.core.errors import InputError
from neoconv.knowledge.formula import UnknownValue, Unexpressible
from neoconv.core.ir import Origin
from neoconv.knowledge.mapping import Table, load_table, load_table_file
from neoconv.core.report import Status
from neoconv.knowledge.schema import schema_index
from neoconv.knowledge.source import Source

from conftest import FIXTURES, ROOT

TABLES = Path(__file__).resolve().parent / "tables"
PYTHIA = FIXTURES / "inputs" / "neox" / "pythia-160m.yml"
LLAMA = FIXTURES / "inputs" / "neox" / "llama-1b.yml"


def overlay(name: str, tmp_path: Path) -> Table:
    """tests/tables/<name>.yaml, extending a copy of the real table it names. A real rule over
    several fields that the overlay's rules take apart (the batch's three) is left out of the copy:
    `extends` replaces rules by their whole field list."""
    fmt = name.split("-")[0]
    for table in (ROOT / "mappings").glob("*.yaml"):  # the tables the base extends (veomni: hf)
        shutil.copy(table, tmp_path / table.name)
    mine = yaml.safe_load((TABLES / f"{name}.yaml").read_text())
    lists = [rule.get("fields", [rule.get("field")]) for rule in mine.get("rules", [])]
    taken = {f for fields in lists for f in fields}
    base = yaml.safe_load((ROOT / "mappings" / f"{fmt}.yaml").read_text())
    base["rules"] = [
        r for r in base["rules"] if len(r.get("fields", ())) < 2 or r["fields"] in lists or not taken & set(r["fields"])
    ]
    (tmp_path / f"{fmt}.yaml").write_text(yaml.safe_dump(base, sort_keys=False))
    shutil.copy(TABLES / f"{name}.yaml", tmp_path / f"{name}.yaml")
    return load_table_file(tmp_path / f"{name}.yaml", fmt)


@pytest.fixture
def use(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """use(table): translations read and write that table's format with it."""

    def install(table: Table) -> None:
        real = load_table

        def patched(fmt: str) -> Table:
            return table if fmt == table.format else real(fmt)

        monkeypatch.setattr(api, "load_table", patched)

    yield install


def _shape(done: Any) -> tuple[str, list[tuple[Any, ...]]]:
    """A translation without its prose: the document and each entry's keys, status and fields."""
    return done.dump(), [(e.source_key, e.target_key, e.status, e.fields) for e in done.report.entries]


def _both(use: Any, table: Table, run: Any) -> tuple[Any, Any]:
    before = run()
    use(table)
    return before, run()


# ---- fixed ---------------------------------------------------------------------------------


def _other_adam(tmp_path: Path) -> Path:
    """Pythia with Adam betas and eps VeOmni cannot take."""
    text = PYTHIA.read_text().replace('"betas": [0.9, 0.95], "eps": 1e-8', '"betas": [0.9, 0.999], "eps": 1e-6')
    assert "0.999" in text
    path = tmp_path / "adam.yml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("name", ["pythia", "llama", "other-adam"])
def test_fixed_veomni_betas_and_eps(name: str, tmp_path: Path) -> None:
    """mappings/veomni.yaml: VeOmni's hard-coded AdamW betas and eps are `fixed:` rules (they were
    the formulas veomni.betas / veomni.eps): its values carry, others are lossy with the reason."""
    path = {"pythia": PYTHIA, "llama": LLAMA}.get(name) or _other_adam(tmp_path)
    rule = load_table("veomni").rules_for_field("optim.eps")[0]
    assert rule.key is None and rule.shape == "fixed" and rule.formula is not None
    done = translate([str(path)], "neox", "veomni", world_size=8)
    betas, eps = (
        next(e for e in done.report.entries if e.source_key == k)
        for k in ("optimizer.params.betas", "optimizer.params.eps")
    )
    if name == "other-adam":
        assert betas.status is eps.status is Status.LOSSY
        assert betas.detail.endswith(
            "hard-codes AdamW betas (0.9, 0.95) and eps 1e-8: optim.betas [0.9, 0.999] cannot be set"
        )
        assert "eps 1e-8: optim.eps 1e-06 cannot be set" in eps.detail
    else:
        assert betas.status is eps.status is Status.CONVERTED and "hard-coded" in betas.detail
    assert "betas" not in done.dump() and "eps" not in done.dump().replace("steps", "")


def test_fixed_reads_its_value_as_a_default() -> None:
    source = api.load(
        FIXTURES / "inputs" / "veomni" / "tinyllama-nested.yaml",
        "veomni",
        model_config=FIXTURES / "inputs" / "veomni" / "tinyllama" / "config.json",
    )
    read = ingest(source, load_table("veomni").for_layout(source.layout), schema_index("veomni"))
    for name in ("optim.eps", "optim.betas"):
        assert read.ir.fields[name].origin is Origin.DEFAULT
    assert read.ir.get("optim.betas") == [0.9, 0.95] and read.ir.get("optim.eps") == 1e-8


def test_fixed_writes_nothing_for_its_value_and_loses_another() -> None:
    formula = load_table("veomni").rules_for_field("optim.eps")[0].formula
    assert formula is not None
    assert formula.write(value=1.0e-8) == {} and formula.write(value=1.00000000001e-8) == {}
    lost = formula.write(value=1e-6)
    assert lost.value == {} and lost.detail.endswith("eps 1e-8: optim.eps 1e-06 cannot be set")


def test_fixed_replaces_dense_attention(use: Any, tmp_path: Path) -> None:
    """Cerebras' dense attention reads and writes the same as a plain `fixed:` rule (the real table's
    is one too, with fixed_loss's message: tests/test_table_choices.py)."""
    cerebras = overlay("cerebras-fixed", tmp_path)
    before, after = _both(use, cerebras, lambda: translate([str(PYTHIA)], "neox", "cerebras", world_size=8))
    assert _shape(before) == _shape(after)


# ---- product ------------------------------------------------------------------------------


def _deepspeed(values: dict[str, Any]) -> Source:
    tree = {k: v for k, v in values.items() if v is not None}
    return Source("deepspeed", tree, ["ds.json"], {}, {k: "ds.json" for k in tree})


BATCH = ("batch.global", "batch.micro", "batch.grad_accum", "parallel.data_parallel_size")


def _read(source: Source, table: Table, world: int | None) -> Any:
    try:
        done = ingest(source, table, schema_index(source.format), {"parallel.world_size": world} if world else None)
    except InputError:
        return "error"
    return tuple(done.ir.get(n) for n in BATCH)


def _solved(total: int, divisor: int) -> Any:
    return total // divisor if total % divisor == 0 else "error"


def test_product_replaces_deepspeed_batch_resolution(tmp_path: Path) -> None:
    """Every combination of the three DeepSpeed batch keys, with and without a world size: the
    product gives what DeepSpeed's resolution (the three formulas) gives, errors included. One
    difference: with all three given and no world size, the product solves the data-parallel size
    (DeepSpeed's batch assertion admits only that one), where the formulas leave it unknown. A config no
    whole data-parallel size satisfies (30 over micro 4) is refused by the formulas even without a world
    size, as DeepSpeed refuses it at every one (the product shape does not know that yet)."""
    real, shaped = load_table("deepspeed"), overlay("deepspeed-product", tmp_path)
    compared = differ = refused = 0
    for tb, mb, ga, world in itertools.product((None, 32, 30, 8), (None, 4, 3), (None, 1, 2, 4), (None, 1, 4)):
        source = _deepspeed(
            {"train_batch_size": tb, "train_micro_batch_size_per_gpu": mb, "gradient_accumulation_steps": ga}
        )
        before, after = _read(source, real, world), _read(source, shaped, world)
        if world is None and tb and _solved(tb, (mb or 1) * (ga or 1)) == "error":
            assert before == "error", (tb, mb, ga)  # no whole data-parallel size: DeepSpeed refuses at every one
            refused += 1
        elif tb and mb and ga and world is None:
            assert before == (tb, mb, ga, None)
            dp = _solved(tb, mb * ga)
            assert after == ("error" if dp == "error" else (tb, mb, ga, dp)), (tb, mb, ga)
            differ += 1
        else:
            assert after == before, (tb, mb, ga, world)
        compared += 1
    assert (compared, differ, refused) == (144, 7, 15)


def test_product_solves_and_refuses_with_the_keys_named(tmp_path: Path) -> None:
    shaped = overlay("deepspeed-product", tmp_path)
    source = _deepspeed({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4})
    done = ingest(source, shaped, schema_index("deepspeed"), {"parallel.world_size": 4})
    accum = done.ir.fields["batch.grad_accum"]
    assert accum.value == 2 and accum.origin is Origin.DERIVED
    assert accum.source_keys == ("train_batch_size", "train_micro_batch_size_per_gpu")
    with pytest.raises(
        InputError, match=r"train_batch_size 30 is not a multiple of train_micro_batch_size_per_gpu 4 x "
    ):
        ingest(
            _deepspeed({"train_batch_size": 30, "train_micro_batch_size_per_gpu": 4}),
            shaped,
            schema_index("deepspeed"),
            {"parallel.world_size": 4},
        )
    with pytest.raises(InputError, match=r"train_batch_size 32 is not train_micro_batch_size_per_gpu 4 x gradient_acc"):
        ingest(
            _deepspeed({"train_batch_size": 32, "train_micro_batch_size_per_gpu": 4, "gradient_accumulation_steps": 1}),
            shaped,
            schema_index("deepspeed"),
            {"parallel.world_size": 4},
        )
    only = ingest(_deepspeed({"train_batch_size": 32}), shaped, schema_index("deepspeed"))  # no world size
    assert only.ir.get("batch.grad_accum") == 1 and only.ir.fields["batch.grad_accum"].origin is Origin.DEFAULT
    assert only.ir.get("batch.micro") is None  # the data-parallel size is not known: nothing more is solved


def _neox(extra: dict[str, Any]) -> Source:
    tree = {
        "num_layers": 2,
        "hidden_size": 64,
        "num_attention_heads": 4,
        "seq_length": 128,
        "max_position_embeddings": 128,
        **{k: v for k, v in extra.items() if v is not None},
    }
    return Source("neox", tree, ["c.yml"], {}, {k: "c.yml" for k in tree})


def test_product_replaces_neox_global_batch_and_data_parallel(tmp_path: Path) -> None:
    """NeoX's batch identity and dp = world / (tp x pp) as products. Given the global batch without
    the micro batch, both solve the micro batch as NeoX does (calculate_batch_parameters: micro =
    train_batch // dp // grad_acc, then its assertion refuses a global batch no whole micro batch
    gives). Two differences: given global and micro batch without a world size, the product solves
    the data-parallel size (accumulation defaults to 1), and the world size from it; and given
    neither, the product keeps the accumulation (or its default 1). neox.batch leaves both unknown:
    a NeoX file without a batch is a part of a run whose batch another file gives (--with)."""
    real, shaped = load_table("neox"), overlay("neox-product", tmp_path)
    differ = 0
    for tb, mb, ga, tp, world in itertools.product((None, 64, 48), (None, 4), (None, 2), (None, 2), (None, 8, 6)):
        source = _neox(
            {
                "train_batch_size": tb,
                "train_micro_batch_size_per_gpu": mb,
                "gradient_accumulation_steps": ga,
                "model_parallel_size": tp,
            }
        )
        before, after = _read(source, real, world), _read(source, shaped, world)
        accum = ga or 1
        if tb and not mb and world:
            dp = world // (tp or 1)
            assert after == before and after in ("error", (tb, _solved(tb, accum * dp), accum, dp))
            assert (after == "error") == (tb % (accum * dp) != 0)
        elif tb and mb and not world:
            assert before[3] is None and after == (tb, mb, accum, _solved(tb, mb * accum))
            differ += 1
        elif not tb and not mb:
            assert before[:3] == (None, None, None) and after[:3] == (None, None, accum) and after[3] == before[3]
            differ += 1
        else:
            assert after == before, (tb, mb, ga, tp, world)
    assert differ == 8 + 12
    world = ingest(_neox({"global_num_gpus": 16, "model_parallel_size": 2}), shaped, schema_index("neox"))
    assert world.ir.get("parallel.data_parallel_size") == 8
    implied = ingest(
        _neox({"train_batch_size": 64, "train_micro_batch_size_per_gpu": 4, "model_parallel_size": 2}),
        shaped,
        schema_index("neox"),
    )
    assert (
        implied.ir.get("parallel.world_size") == 32
        and implied.ir.fields["parallel.world_size"].origin is Origin.DERIVED
    )


@pytest.mark.parametrize("world", [None, 8])
def test_product_replaces_veomni_accumulation_and_data_parallel(world: int | None, use: Any, tmp_path: Path) -> None:
    """The product table writes the batch veomni.batch writes (global and micro batch) and reads it
    back alike. What differs is what the formula adds: dyn_bsz's token budgets said as a loss, and,
    without a world size, no `missing` global batch when VeOmni's own (micro x GPUs, accumulation 1)
    is the source's (Pythia: accumulation 1)."""
    table = overlay("veomni-product", tmp_path)
    before, after = _both(use, table, lambda: translate([str(PYTHIA)], "neox", "veomni", world_size=world))
    docs = [yaml.safe_load(done.dump())["train"] for done in (before, after)]
    assert [(d.get("global_batch_size"), d["micro_batch_size"]) for d in docs] == [(256 if world else None, 32)] * 2
    batch = ("batch.global", "batch.micro", "batch.grad_accum", "parallel.data_parallel_size")
    assert [before.ir.get(n) for n in batch] == [after.ir.get(n) for n in batch]
    micro_before, micro_after = (
        next(e for e in done.report.entries if e.source_key == "train_micro_batch_size_per_gpu")
        for done in (before, after)
    )
    assert micro_before.status is Status.LOSSY and "dyn_bsz" in micro_before.detail
    assert micro_after.status is Status.CONVERTED
    missing = [
        [
            e.target_key
            for e in done.report.entries
            if e.status is Status.MISSING and e.target_key == "train.global_batch_size"
        ]
        for done in (before, after)
    ]
    assert missing == ([[], ["train.global_batch_size"]] if world is None else [[], []])


def test_product_of_veomni_output_reads_back(use: Any, tmp_path: Path) -> None:
    """VeOmni -> NeoX with the product table: the accumulation solved from global / (micro x dp)."""
    use(overlay("veomni-product", tmp_path))
    folder = FIXTURES / "inputs" / "veomni"
    done = translate(
        [str(folder / "tinyllama-nested.yaml")],
        "veomni",
        "neox",
        world_size=4,
        model_config=str(folder / "tinyllama" / "config.json"),
    )
    global_, micro, dp = (done.ir.get(n) for n in ("batch.global", "batch.micro", "parallel.data_parallel_size"))
    assert done.ir.get("batch.grad_accum") == global_ // (micro * dp)


@pytest.mark.parametrize("accum, lost", [(1, False), (2, True)])
def test_a_factor_at_its_fill_value_reads_back_as_it_is(accum: int, lost: bool, use: Any, tmp_path: Path) -> None:
    """VeOmni fills accumulation 1 when only the micro batch is given: written without a global batch
    (no world size), an accumulation of 1 reads back as 1; another is lost, and said."""
    use(overlay("veomni-product", tmp_path))
    source = tmp_path / "micro.yml"
    source.write_text(
        f"num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nseq_length: 128\n"
        f"max_position_embeddings: 128\ntrain_micro_batch_size_per_gpu: 4\ngradient_accumulation_steps: {accum}\n"
    )
    done = translate([str(source)], "neox", "veomni")
    said = [e for e in done.report.entries if "derives batch.grad_accum" in e.detail]
    assert bool(said) is lost and done.report.target["added_by_verification"] == 0


# ---- flags --------------------------------------------------------------------------------


def test_flags_replace_deepspeed_fp16_bf16_switches(use: Any, tmp_path: Path) -> None:
    real, shaped = load_table("deepspeed"), overlay("deepspeed-flags", tmp_path)
    for fp16, bf16 in itertools.product((None, True, False), repeat=2):
        tree = {
            "train_batch_size": 8,
            **({"fp16": {"enabled": fp16}} if fp16 is not None else {}),
            **({"bf16": {"enabled": bf16}} if bf16 is not None else {}),
        }
        source = Source("deepspeed", tree, ["ds.json"], {}, {k: "ds.json" for k in tree})
        results = []
        for table in (real, shaped):
            try:
                results.append(ingest(source, table, schema_index("deepspeed")).ir.fields["precision.dtype"][:2])
            except InputError as exc:
                results.append(("error", "both enabled" in str(exc) or "are all true" in str(exc)))
        assert results[0] == results[1], (fp16, bf16)
    for path in (PYTHIA, LLAMA):  # fp16 and bf16 sources written with the switches
        before, after = _both(use, shaped, lambda: translate([str(path)], "neox", "deepspeed", world_size=8))
        assert _shape(before) == _shape(after)
        use(real)


def test_flags_write_one_switch_and_refuse_a_value_with_none(tmp_path: Path) -> None:
    formula = overlay("deepspeed-flags", tmp_path).rules_for_field("precision.dtype")[0].formula
    assert formula is not None
    assert formula.write(value="bf16") == {"bf16_enabled": True}
    assert formula.write(value="fp32") == {"fp16_enabled": False}
    from neoconv.knowledge.formula import Unexpressible

    with pytest.raises(
        Unexpressible, match="precision.dtype='cbf16' has no counterpart among fp16.enabled, bf16.enabled"
    ):
        formula.write(value="cbf16")
    with pytest.raises(ValueError, match="expected true or false"):
        formula.read(fp16_enabled="yes", bf16_enabled=None)


# ---- list ---------------------------------------------------------------------------------


def _zoo_r1(params: dict[str, Any]) -> Source:
    tree = {
        "model": {
            "hidden_size": 64,
            "num_hidden_layers": 2,
            "num_heads": 4,
            "filter_size": 256,
            "max_position_embeddings": 128,
            "vocab_size": 1000,
        },
        "optimizer": {"optimizer_type": "adamw", "learning_rate": 1e-4, **params},
    }
    return Source("cerebras", tree, ["r1.yaml"], {}, {k: "r1.yaml" for k in tree}, layout="legacy")


def test_list_reads_model_zoo_r1_betas(tmp_path: Path) -> None:
    table = overlay("cerebras-list", tmp_path).for_layout("legacy")
    given = ingest(_zoo_r1({"beta1": 0.8, "beta2": 0.99}), table, schema_index("cerebras"))
    assert given.ir.fields["optim.betas"].value == [0.8, 0.99]
    assert given.ir.fields["optim.betas"].origin is Origin.EXPLICIT
    assert given.fates["optimizer.beta2"].rule is given.fates["optimizer.beta1"].rule
    half = ingest(_zoo_r1({"beta2": 0.95}), table, schema_index("cerebras"))
    assert half.ir.get("optim.betas") == [0.9, 0.95]  # beta1 at PyTorchBaseModel's default
    none = ingest(_zoo_r1({}), table, schema_index("cerebras"))
    assert none.ir.get("optim.betas") == [0.9, 0.999] and none.ir.fields["optim.betas"].origin is Origin.DEFAULT


def test_list_writes_one_key_per_item(use: Any, tmp_path: Path) -> None:
    use(overlay("cerebras-list", tmp_path))
    # beta1/beta2: the keys Model Zoo read until 2.0 renamed them (a newer release refuses them: test_output_valid)
    done = translate([str(PYTHIA)], "neox", "cerebras", world_size=8, target_version="1.9")
    assert done.config["optimizer"]["beta1"] == 0.9 and done.config["optimizer"]["beta2"] == 0.95
    entry = next(e for e in done.report.entries if e.source_key == "optimizer.params.betas")
    assert entry.target_key == "optimizer.beta1, optimizer.beta2" and entry.status is Status.CONVERTED
    formula = overlay("cerebras-list", tmp_path).rules_for_field("optim.betas")[0].formula
    assert formula is not None
    from neoconv.knowledge.formula import Unexpressible

    with pytest.raises(Unexpressible, match="take exactly 2 items"):
        formula.write(value=[0.9])


# ---- pick (one key feeding several fields) ------------------------------------------------


@pytest.mark.parametrize("norm_type", ["layernorm", "biasless-layernorm", "rmsnorm", "nonparametric-layernorm"])
def test_pick_replaces_cerebras_norm_reading(norm_type: str, tmp_path: Path) -> None:
    tree = {"model": {"norm_type": norm_type, "hidden_size": 64}}
    source = Source("cerebras", tree, ["c.yaml"], {}, {"model": "c.yaml"}, layout="legacy")
    real = ingest(source, load_table("cerebras").for_layout("legacy"), schema_index("cerebras"))
    shaped = ingest(source, overlay("cerebras-pick", tmp_path).for_layout("legacy"), schema_index("cerebras"))
    for name in ("model.norm", "model.norm_bias"):
        assert shaped.ir.fields[name][:3] == real.ir.fields[name][:3]


@pytest.mark.parametrize("path", [PYTHIA, LLAMA], ids=lambda p: p.stem)
def test_pick_replaces_cerebras_norm_writing(path: Path, use: Any, tmp_path: Path) -> None:
    before, after = _both(
        use, overlay("cerebras-pick", tmp_path), lambda: translate([str(path)], "neox", "cerebras", world_size=8)
    )
    assert _shape(before) == _shape(after)


def test_pick_says_which_field_is_lost(tmp_path: Path) -> None:
    formula = overlay("cerebras-pick", tmp_path).rules_for_field("model.norm")[0].formula
    assert formula is not None
    assert formula.write(norm="layernorm", norm_bias=False) == {"model_norm_type": "biasless-layernorm"}
    lost = formula.write(norm="rmsnorm", norm_bias=True)
    assert lost.value == {"model_norm_type": "rmsnorm"} and lost.fields == ("model.norm_bias",)
    assert (
        lost.detail == "model.norm_type 'rmsnorm' means model.norm_bias=false: model.norm_bias=true is not expressible"
    )
    # a difference: cerebras_norm reads any case and keeps an unknown norm_type as an extension;
    # pick names it a value the release does not know, listing the values it knows
    with pytest.raises(UnknownValue) as foreign:
        formula.read(model_norm_type="groupnorm")
    assert foreign.value.value == "groupnorm" and foreign.value.known[:2] == ("layernorm", "biasless-layernorm")


def test_a_shaped_table_names_values_no_release_has(tmp_path: Path) -> None:
    """The engine's one rule reaches every shape: the leaf is unknown, its field unset, nothing refused."""
    tree = {"model": {"norm_type": "groupnorm"}}
    source = Source(
        "cerebras",
        tree,
        ["c.yaml"],
        {"c.yaml": "model:\n  norm_type: groupnorm\n"},
        {"model": "c.yaml"},
        layout="legacy",
    )
    done = ingest(source, overlay("cerebras-pick", tmp_path).for_layout("legacy"), schema_index("cerebras"))
    fate = done.fates["model.norm_type"]
    assert fate.kind == "unknown" and fate.notes[0][0] == "not_a_value" and fate.notes[0][1]["value"] == "groupnorm"
    assert done.ir.get("model.norm") is None


# ---- modifiers of a rename (read_when, off, read_only) ------------------------------------------

OPTIM = ("optim.betas", "optim.eps", "optim.weight_decay")


@pytest.mark.parametrize(
    "optimizer,expected",
    [
        ({"type": "Adam", "params": {"betas": [0.8, 0.9], "eps": 1e-6}}, ([0.8, 0.9], 1e-6, 0.0)),
        ({"type": "Lion", "params": {"betas": [0.8, 0.9], "eps": 1e-6}}, ([0.8, 0.9], None, 0.0)),  # Lion: no eps
        ({"type": "SGD", "params": {"betas": [0.8, 0.9], "weight_decay": 0.1}}, (None, None, 0.1)),
        (None, (None, None, None)),  # no block: the training script builds the optimizer, no default holds
    ],
)
def test_read_when_reads_deepspeed_optimizer_params_only_for_optimizers_that_take_them(
    optimizer: dict[str, Any] | None, expected: tuple[Any, ...]
) -> None:
    """mappings/deepspeed.yaml: optimizer.params.betas / eps / weight_decay are renames with
    `read_when: {optim.type: [...]}` (they were the formulas deepspeed.betas / eps / weight_decay)."""
    table = load_table("deepspeed")
    assert all(
        r.formula is not None and r.formula.name.startswith("rename optimizer.params.")
        for n in OPTIM
        for r in table.rules_for_field(n)
    )
    source = _deepspeed({"optimizer": optimizer, "train_batch_size": 8})
    done = ingest(source, table, schema_index("deepspeed"))
    assert tuple(done.ir.get(n) for n in OPTIM) == expected
    for name, value in zip(OPTIM, expected):
        if value is None and optimizer and name.split(".")[1] in optimizer["params"]:
            assert f"optimizer.params.{name.split('.')[1]}" in done.fates  # the leaf is the rule's, not unknown


@pytest.mark.parametrize("steps,expected", [(0, None), (500, 500), (None, None)])
def test_off_value_reads_veomni_zero_intervals_as_unset(steps: int | None, expected: int | None) -> None:
    """mappings/veomni.yaml: save_steps / eval_steps 0 turn saving / evaluating off (they were the
    formulas veomni.save_steps / veomni.eval_steps); a canonical interval is written as given."""
    table = load_table("veomni")
    rule = table.rules_for_field("checkpoint.interval")[0]
    assert rule.formula is not None and rule.formula.name == "rename train.checkpoint.save_steps; off 0"
    assert rule.formula.read(train_checkpoint_save_steps=steps) == expected
    assert rule.formula.write(value=250) == {"train_checkpoint_save_steps": 250}
    evals = table.rules_for_field("train.eval_interval")[0].formula
    assert evals is not None and evals.read(train_eval_steps=steps) == expected


def test_read_only_reads_cerebras_sequence_length_and_refuses_to_write_it() -> None:
    """mappings/cerebras.yaml: train_input.max_sequence_length is read, never written (it was the
    formula cerebras.seq_length): the data's preprocessing fixes it."""
    formula = load_table("cerebras").rules_for_field("model.seq_length")[0].formula
    assert formula is not None and formula.read(train_input_max_sequence_length=2048) == 2048
    with pytest.raises(Unexpressible, match="preprocess with max sequence length 4096$"):
        formula.write(value=4096)
    done = translate([str(PYTHIA)], "neox", "cerebras", world_size=8)
    entry = next(e for e in done.report.entries if e.source_key == "seq_length")
    assert entry.status is Status.DROPPED and "preprocess with max sequence length 2048" in entry.detail
    assert "max_sequence_length" not in done.dump()


# ---- same_as ------------------------------------------------------------------------------------


def test_same_as_neox_embedding_dropout_is_hidden_dropout() -> None:
    """mappings/neox.yaml: NeoX applies hidden_dropout to the embeddings (it was the formula
    neox.embedding_dropout): read as that value; another value is lost, with the reason."""
    rule = load_table("neox").rules_for_field("model.embedding_dropout")[0]
    assert rule.key is None and rule.shape == "same_as" and rule.formula is not None
    assert rule.with_fields == {"same_hidden_dropout": "model.hidden_dropout"}
    formula = rule.formula
    assert formula.read(same_hidden_dropout=0.1) == 0.1
    assert formula.write(value=0.1, same_hidden_dropout=0.1) == {}
    assert formula.write(value=0.0, same_hidden_dropout=None) == {}  # NeoX's default hidden_dropout 0
    lost = formula.write(value=0.2, same_hidden_dropout=0.1)
    assert (
        lost.value == {}
        and lost.detail == "NeoX applies hidden_dropout 0.1 to the embeddings; embedding dropout 0.2 is lost"
    )
    done = translate([str(PYTHIA)], "neox", "neox", set_values={"model.embedding_dropout": 0.2})
    assert any(
        e.status is Status.LOSSY
        and "NeoX applies hidden_dropout 0 to the embeddings; embedding dropout 0.2 is lost" in e.detail
        for e in done.report.entries
    )
    read = ingest(api.load(PYTHIA, "neox"), load_table("neox"), schema_index("neox"))
    assert read.ir.get("model.embedding_dropout") == read.ir.get("model.hidden_dropout") is not None
