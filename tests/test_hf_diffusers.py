"""A diffusers model's config.json (ConfigMixin writes `_class_name` and `_diffusers_version` into every one it
saves) is no transformers config: read as a HF config.json it was copied as "remote code"; it is refused, exit 2,
one line naming the file, the line and what it is, nothing written."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from neoconv import InputError, translate
from neoconv.cli import main

from conftest import cli_runner

# the shape of a Flux transformer's config (diffusers FluxTransformer2DModel): facts, written here
FLUX = {
    "_class_name": "FluxTransformer2DModel",
    "_diffusers_version": "0.30.0",
    "attention_head_dim": 128,
    "guidance_embeds": True,
    "in_channels": 64,
    "joint_attention_dim": 4096,
    "num_attention_heads": 24,
    "num_layers": 19,
    "num_single_layers": 38,
    "patch_size": 1,
    "pooled_projection_dim": 768,
}


@pytest.mark.parametrize("dst", ["hf", "neox", "veomni"])
def test_a_diffusers_config_is_refused_naming_what_it_is(tmp_path: Path, dst: str) -> None:
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"model_type": "flux", **FLUX}, indent=2))
    with pytest.raises(InputError) as caught:
        translate([path], "hf", dst, world_size=8)
    assert caught.value.line == 3 and caught.value.key == "_class_name"
    assert "FluxTransformer2DModel" in str(caught.value) and "0.30.0" in str(caught.value)


def test_the_cli_exits_2_and_writes_nothing(tmp_path: Path) -> None:
    path, out = tmp_path / "config.json", tmp_path / "out.json"
    path.write_text(json.dumps({"architectures": "WanModel", "_diffusers_version": "0.30.0", "dim": 5120}, indent=2))
    result = cli_runner().invoke(main, ["hf2hf", str(path), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{path}:3:" in lines[0] and "diffusers" in lines[0]
