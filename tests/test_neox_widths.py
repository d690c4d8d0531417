"""translator/formats/neox/formulas.py (the MLP widths): the widths GPT-NeoX's ParallelMLP builds, and the ones it cannot run."""

from __future__ import annotations

import pytest
import yaml

from neoconv.formats.neox.formulas import intermediate_size_for, mlp_shape, runnable_at_least, width_problem

from conftest import CORPUS


def test_mistral_7b_yml_builds_an_unrunnable_mlp() -> None:
    """NeoX's configs/mistral/7B.yml: 14336 with swiglu, mlp_multiple_of 1."""
    shape = mlp_shape(14336, gated=True)
    assert (shape.fused, shape.activated, shape.down_in) == (9558, 4779, 4778)
    assert not shape.runs
    assert width_problem(14336, "swiglu") == (
        "intermediate_size: 14336 with the gated activation swiglu builds a 4779-wide gate but a 4778-wide output "
        "layer (NeoX scales a gated width by 2/3): NeoX cannot run it; intermediate_size: 43008 gives a 14336-wide "
        "gated MLP, or intermediate_size: 14334 gives a 4778-wide gated MLP"
    )


def test_values_that_give_mistral_and_llama_widths() -> None:
    """Exhaustive over the formula: which intermediate_size builds a runnable MLP of a given width."""

    def giving(width: int, multiple: int) -> list[int]:
        return [
            i
            for i in range(3 * width - 1500, 3 * width + 1500)
            if (s := mlp_shape(i, True, multiple)).runs and s.activated == width
        ]

    assert giving(14336, 1) == [43008, 43009]
    assert giving(14336, 256) == list(range(42243, 43010))
    assert giving(11008, 1) == [33024, 33025]
    assert giving(11008, 256) == list(range(32259, 33026))
    assert mlp_shape(32768, True, 256).activated == 11008  # NeoX's llama2/7B.yml builds Llama-2's width


def test_plain_widths() -> None:
    assert mlp_shape(8192, gated=False).runs and mlp_shape(8192, gated=False).activated == 8192
    odd = mlp_shape(4097, gated=False)  # linear1 rounds to a multiple of 2, linear2 does not
    assert (odd.fused, odd.down_in, odd.runs) == (4098, 4097, False)
    assert not mlp_shape(768, gated=False, multiple_of=256).runs  # 1024 vs 768
    assert width_problem(4097, "gelu") == (
        "intermediate_size: 4097 builds a 4098-wide first MLP layer but a 4097-wide second one (NeoX rounds them to "
        "multiples of 2 and 1): NeoX cannot run it; intermediate_size: 4098 gives a 4098-wide MLP"
    )
    assert width_problem(8192, "gelu") is None and width_problem(8192, None) is None


def test_model_parallel_split() -> None:
    assert mlp_shape(43008, True, 1, model_parallel=2).runs
    shape = mlp_shape(43008, True, 1, model_parallel=3)  # 28672 does not split over 3 ranks
    assert not shape.split_evenly and not shape.runs
    problem = width_problem(43008, "swiglu", 1, 3)
    assert problem is not None and problem.startswith(
        "intermediate_size: 43008 builds MLP layers 28672 and 14336 wide, which do not divide evenly over "
        "model_parallel_size=3"
    )
    assert problem.endswith("intermediate_size: 43011 gives a 14337-wide gated MLP")
    assert mlp_shape(43011, True, 1, 3).runs


def test_inverse() -> None:
    assert intermediate_size_for(14336, gated=True) == 43008
    assert intermediate_size_for(11008, gated=True, multiple_of=256) == 33024
    assert intermediate_size_for(11008, gated=True, multiple_of=512) is None  # 11008 is no multiple of 512
    assert intermediate_size_for(4096, gated=False) == 4096
    assert intermediate_size_for(4097, gated=False) is None
    assert runnable_at_least(4097, gated=False) == (4098, 4098)
    assert runnable_at_least(14336, gated=True, multiple_of=512) == (3 * 14336, 14336)  # 14336 = 28 x 512
    assert runnable_at_least(14337, gated=True, multiple_of=512) == (3 * 14848, 14848)


@pytest.mark.parametrize("activation", ["swiglu", "geglu", "reglu", "bilinear", "glu"])
def test_every_gated_activation_is_checked(activation: str) -> None:
    assert width_problem(14336, activation) is not None
    assert width_problem(43008, activation) is None


def test_the_corpus_configs() -> None:
    """Of NeoX's own configs, only mistral/7B.yml cannot run (the llama ones use the 3x convention)."""
    folder = CORPUS / "neox"
    if not folder.is_dir():
        pytest.skip("../shared/corpus is not present")
    flagged = []
    for path in sorted(folder.rglob("*.yml")):
        data = yaml.safe_load(path.read_text())
        if not isinstance(data, dict):
            continue
        keys = {str(k).replace("-", "_"): v for k, v in data.items()}
        hidden = keys.get("hidden_size")
        size = keys.get("intermediate_size") or (4 * hidden if isinstance(hidden, int) else None)
        if size is None or keys.get("expansion_factor"):
            continue
        problem = width_problem(
            size, keys.get("activation", "gelu"), keys.get("mlp_multiple_of", 1), keys.get("model_parallel_size", 1)
        )
        if problem:
            flagged.append(str(path.relative_to(folder)))
    assert flagged == ["mistral/7B.yml"]


def test_the_reader_refuses_a_width_neox_cannot_run(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from neoconv import translate
    from neoconv.core.errors import InputError

    path = tmp_path / "7B.yml"
    path.write_text(
        "num_layers: 2\nhidden_size: 4096\nnum_attention_heads: 32\nintermediate_size: 14336\nactivation: swiglu\n"
    )
    with pytest.raises(InputError) as caught:
        translate(path, "neox", "cerebras")
    error = caught.value
    assert (error.key, error.line, error.file) == ("intermediate_size", 4, str(path))
    assert "4779-wide gate but a 4778-wide output layer" in error.message
    assert "intermediate_size: 43008 gives a 14336-wide gated MLP" in error.message
    # the value it names runs, and is Mistral's width
    path.write_text(path.read_text().replace("14336", "43008"))
    assert translate(path, "neox", "neox").ir.get("model.ffn_hidden_size") == 14336


def test_a_width_that_does_not_split_over_the_model_parallel_ranks(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from neoconv import translate
    from neoconv.core.errors import InputError

    path = tmp_path / "mp.yml"
    path.write_text(
        "num_layers: 2\nhidden_size: 64\nnum_attention_heads: 4\nintermediate_size: 258\nmodel_parallel_size: 4\n"
    )
    with pytest.raises(InputError, match="do not divide evenly over model_parallel_size=4"):
        translate(path, "neox", "neox")


def test_an_all_moe_model_builds_no_dense_mlp(tmp_path) -> None:  # type: ignore[no-untyped-def]
    from neoconv import translate

    # every layer is MoE (moe_expert_interval 1): experts take intermediate_size as it stands
    path = tmp_path / "moe.yml"
    path.write_text(
        "num_layers: 2\nhidden_size: 4096\nnum_attention_heads: 32\nintermediate_size: 14336\n"
        "activation: swiglu\nmoe_num_experts: 8\nmoe_top_k: 2\n"
    )
    ir = translate(path, "neox", "neox").ir
    assert ir.get("model.moe_num_experts") == 8 and ir.get("model.moe_ffn_hidden_size") == 14336


def test_the_corpus_mistral_is_refused_naming_the_fix() -> None:
    from neoconv import translate
    from neoconv.core.errors import InputError

    from conftest import UNRUNNABLE

    path = CORPUS / "neox" / "mistral" / "7B.yml"
    if not path.is_file():
        pytest.skip("../shared/corpus is not present")
    for dst in ("cerebras", "veomni", "deepspeed", "neox"):
        with pytest.raises(InputError) as caught:
            translate(path, "neox", dst)
        assert UNRUNNABLE["neox/mistral/7B.yml"] in caught.value.message and caught.value.line == 9


def _narrowest_by_trying(width: int, gated: bool, multiple_of: int, model_parallel: int) -> tuple[int, int] | None:
    for candidate in range(width, width + 4 * multiple_of * model_parallel + 1):
        size = intermediate_size_for(candidate, gated, multiple_of)
        if size is not None and mlp_shape(size, gated, multiple_of, model_parallel).runs:
            return size, candidate
    return None


def test_runnable_at_least_is_the_narrowest_runnable_width() -> None:
    for width in (1, 7, 96, 1000, 4097):
        for gated in (False, True):
            for multiple_of in (1, 3, 64):
                for model_parallel in (1, 2, 3, 6, 8):
                    expected = _narrowest_by_trying(width, gated, multiple_of, model_parallel)
                    assert runnable_at_least(width, gated, multiple_of, model_parallel) == expected


def test_a_huge_model_parallel_size_is_answered_at_once() -> None:
    # the CI run that timed out: a fuzzed model_parallel_size made the search step through 4 x 10^18 widths
    odd = 10**6 + 3  # stepping one width at a time would try millions
    assert runnable_at_least(4096, True, 1, odd) == (3 * odd, odd)
    huge = 10**18 + 9  # beyond a float's exact integers NeoX's 2/3 scaling no longer lands on it: none offered
    assert runnable_at_least(4096, True, 1, huge) is None
    assert width_problem(4096, "swiglu", 1, huge) is not None
