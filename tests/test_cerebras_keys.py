"""tools/cerebras_keys.py on small sources written here: the keys Model Zoo's trainer renames before its
configs see them (2.4+'s validate_trainer_params reads trainer.init.model.model_name as `name`)."""

from __future__ import annotations

import ast
import sys

from conftest import ROOT

sys.path.append(str(ROOT / "tools"))  # the tools import each other by name

from cerebras_keys import trainer_renames  # noqa: E402
from dict_reads import Program  # noqa: E402

VALIDATE = """
def unpack_trainer(t):
    def check(d):
        model_dict = d["trainer"]["init"]["model"]
        if "model_name" in model_dict:
            model_dict["name"] = model_dict.pop("model_name")
        return d["trainer"]

    def unpack_sparsity(s):
        for config in s:
            config["sparsity"] = config.pop("schedule")
        return s

    return tuple(map(check, t))
"""


def renames(source: str, module: str = "src/cerebras/modelzoo/trainer/validate.py") -> dict[str, dict]:
    program = Program({module: ast.parse(source)}, package_roots=("src/",))
    return {".".join(r.path): r.extra for r in trainer_renames(program)}


def test_a_key_the_trainer_renames_is_read_as_an_alias_in_its_legacy_spelling() -> None:
    found = renames(VALIDATE)
    assert found == {"model.model_name": {"alias_of": "name"}}  # the loop's `config` has no known path


def test_renames_outside_the_trainer_package_are_not_the_trainer_s() -> None:
    assert renames(VALIDATE, "src/cerebras/modelzoo/models/nlp/dpo/model.py") == {}
