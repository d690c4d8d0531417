"""Release labels (--from-version / --to-version) and telling a file's release from its keys."""

from __future__ import annotations

import pytest

from neoconv import translate
from neoconv.core.errors import UsageError
from neoconv.knowledge.schema import NO_DEFAULT, load_history
from neoconv.knowledge.versions import detect, resolve, versions


@pytest.mark.parametrize(
    "fmt, name, label",
    [
        ("cerebras", "1.9", "1.9.1"),  # a minor release is its newest patch
        ("cerebras", "2.0", "2.0.3"),
        ("cerebras", "2.0.1", "2.0.3"),  # a patch release the mirror has no tag of: its minor release
        ("cerebras", "2.4.0", "2.4.0"),
        ("cerebras", "r2", "2.1.1"),  # the reference documents of earlier neoconv versions
        ("neox", "configs-readme", "2023-03-10"),
        ("neox", "v2.0", "2023-03-09"),
        ("neox", "2023-06-15", "2023-06-07"),  # a day between two argument changes: the one before
        ("neox", "current", "2026-05-19"),
        ("veomni", "538", "#538"),
        ("veomni", "#603", "#603"),
        ("veomni", "flat", "#458"),
        ("veomni", "v0.1.8", "#627"),
        ("deepspeed", "v0.14.4", "0.14.4"),
        ("deepspeed", "0.8.0", "0.8.0"),
    ],
)
def test_labels_users_know(fmt: str, name: str, label: str) -> None:
    assert resolve(fmt, name) == label


@pytest.mark.parametrize(
    "fmt, name, hint",
    [
        ("neox", "configs_readme", "did you mean configs-readme?"),
        ("cerebras", "3.1", "known: 1.6.0, 1.6.1"),
        ("veomni", "#99999", "; also HEAD"),  # no such PR was merged (#999 was: it reads as the release then)
    ],
)
def test_an_unknown_label_is_a_usage_error_listing_the_valid_ones(fmt: str, name: str, hint: str) -> None:
    with pytest.raises(UsageError) as caught:
        resolve(fmt, name, "--to-version")
    assert caught.value.message.startswith(f"--to-version {name!r}: not a ") and hint in caught.value.message


@pytest.mark.parametrize(
    "fmt, day, message",
    [
        ("neox", "2021-04-07", "--from-version '2021-04-07': before 2021-04-26, the first GPT-NeoX release"),
        (
            "veomni",
            "2020-01-01",
            "--from-version '2020-01-01': before fb1b0b2d (of 2025-04-03), the first VeOmni release",
        ),
    ],
)
def test_a_day_before_the_first_release_names_that_release(fmt: str, day: str, message: str) -> None:
    # not "did you mean" some later day: no release was in force then
    with pytest.raises(UsageError) as caught:
        resolve(fmt, day)
    assert caught.value.message.startswith(message)


def test_a_typo_in_from_version_changes_nothing_silently() -> None:
    # the case: `configs_readme` used to read a NeoX file with other dropout defaults
    with pytest.raises(UsageError, match="did you mean configs-readme"):
        translate(
            {"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4},
            "neox",
            "cerebras",
            source_version="configs_readme",
        )


@pytest.mark.parametrize(
    "fmt, keys, first, last",
    [
        ("neox", ["mlp_type", "num_layers"], "2023-05-02", "2024-09-09"),
        ("neox", ["save_interval"], "2021-04-26", "2022-12-06"),
        ("veomni", ["train.enable_mixed_precision", "train.optimizer.lr"], "#538", "#603"),
        ("veomni", ["train.rmpad", "train.lr"], "fb1b0b2d", "#498"),
        ("deepspeed", ["zero_optimization.cpu_offload_params"], "0.3.12", "0.6.7"),
        ("cerebras", ["model.use_rms_norm", "optimizer.weight_decay_rate"], "1.9.1", "1.9.1"),
        ("cerebras", ["model.use_bfloat16", "model.norm_type"], "2.0.2", "2.0.3"),  # 2.1 refuses use_bfloat16
    ],
)
def test_the_keys_of_a_file_tell_its_release(fmt: str, keys: list[str], first: str, last: str) -> None:
    history = load_history(fmt)
    assert history is not None
    found = detect(history, keys)
    assert (found.first, found.last, found.label) == (first, last, last)
    assert found.how == "keys" and found.keys


def test_keys_of_different_releases_are_read_as_the_release_reading_most() -> None:
    history = load_history("neox")
    assert history is not None
    # gas went on 2024-02-05, intermediate_size came on 2024-02-23: no release reads both
    found = detect(history, ["gas", "intermediate_size", "num_kv_heads"])
    assert found.label == "2026-05-19" and found.unread == ("gas",)
    assert "no neox release reads all of this file's keys" in found.detail


def test_a_file_pinning_nothing_is_read_as_the_newest_release_and_says_what_it_assumed() -> None:
    history = load_history("neox")
    assert history is not None
    found = detect(history, ["num_layers", "hidden_size"], ["hidden_dropout", "weight_decay", "seq_length"])
    assert found.label == "2026-05-19" and found.how == "newest"
    assert found.assumed == {"hidden_dropout": 0.0, "weight_decay": 0.1}  # 0.1 and 0.01 before 2023-12-26
    assert "assumed its defaults for hidden_dropout=0.0, weight_decay=0.1" in found.detail


def test_per_release_defaults_come_from_the_history() -> None:
    from neoconv.knowledge.mapping import load_table

    rule = next(r for r in load_table("neox").rules if r.key == "hidden_dropout")
    assert rule.default_for("2023-12-22") == 0.1 and rule.default_for("2023-12-26") == 0.0
    clip = next(r for r in load_table("deepspeed").rules if r.key == "gradient_clipping")
    assert clip.default_for("0.19.2") == 0.0 and clip.default_for("0.19.3") == 1.0
    scale = next(r for r in load_table("deepspeed").rules if r.key == "fp16.initial_scale_power")
    assert scale.default_for("0.7.7") == 32 and scale.default_for("0.8.0") == 16
    # a flat VeOmni key read under its nested name takes the flat field's default (data_parallel_mode)
    mode = next(r for r in load_table("veomni").rules if r.key == "train.accelerator.fsdp_config.fsdp_mode")
    assert (
        mode.default_for("#458") == "ddp" and mode.default_for("#744") == "ddp" and mode.default_for("#756") == "fsdp2"
    )
    assert load_history("neox").default_at("mlp_type", "2026-05-19") is NO_DEFAULT  # type: ignore[union-attr]


def test_the_report_says_which_release_and_why(tmp_path) -> None:  # type: ignore[no-untyped-def]
    path = tmp_path / "llama.yml"
    path.write_text(
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nmlp_type: llama\n"
        "max_position_embeddings: 128\nseq_length: 128\noptimizer: {type: Adam, params: {lr: 0.001}}\n"
    )
    source = translate(path, "neox", "deepspeed").report.source
    assert source["version"] == "2024-09-09" and source["version_basis"] == "keys"
    assert source["version_range"] == ["2023-05-02", "2024-09-09"] and "mlp_type" in source["version_detail"]
    given = translate(path, "neox", "deepspeed", source_version="v2.0").report.source
    assert (given["version"], given["version_basis"], given["version_detail"]) == (
        "2023-03-09",
        "given",
        "as given (v2.0)",
    )


def test_every_table_alias_names_a_release() -> None:
    for fmt in ("cerebras", "neox", "veomni", "deepspeed"):
        known = versions(fmt)
        assert all(label in known.labels for label in known.aliases.values())


def test_a_key_of_another_release_is_known_not_unknown(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # a nested VeOmni file (#538 on) with the flat-era train.dyn_bsz_buffer_size (read until #498)
    path = tmp_path / "run.yaml"
    path.write_text(
        "model: {model_path: m}\ndata: {train_path: d, max_seq_len: 128, train_size: 100000}\n"
        "train: {optimizer: {lr: 1.0e-4, lr_min: 1.0e-6}, checkpoint: {output_dir: o, save_steps: 10},\n"
        "        pad_packed_input: true, dyn_bsz_margin: 10, dyn_bsz_bufer: 3}\n"
    )
    (tmp_path / "config.json").write_text('{"model_type": "llama"}')
    entries = translate(path, "veomni", "neox", model_config=tmp_path / "config.json").report.by_source()
    old = entries["train.pad_packed_input"]  # gone with #458
    assert old.status.value == "dropped" and "does not read it (read by #410..#498)" in old.detail
    # a key a rule reads with its old meaning, which the file's release (the newest reading most) no longer has
    margin = entries["train.dyn_bsz_margin"]
    assert (
        margin.status.value == "dropped"
        and "#1021 does not read train.dyn_bsz_margin (read by fb1b0b2d..#498)" in margin.detail
    )
    typo = entries["train.dyn_bsz_bufer"]  # no release ever had it
    assert typo.status.value == "unknown" and "did you mean train.dyn_bsz_buffer_size" in typo.detail
