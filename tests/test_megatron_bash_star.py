"""`"${A[*]}"` and `"$*"` in double quotes are ONE word, the elements joined by the first character of
IFS (a space unless the script sets IFS; nothing when it sets it empty), where `"${A[@]}"` and `"$@"`
are one word per element (issue 27: a launcher's `--data-path "${DATA[*]}"`)."""

from __future__ import annotations

import pytest

from neoconv.formats.megatron.syntax import words_of

ARRAY = "DATA=(/d/a_text_document /d/b_text_document /d/c_text_document)\n"


def args(script: str) -> list[tuple[str, bool]]:
    return [(a.text, a.resolved) for a in words_of(script, "run.sh").args]


@pytest.mark.parametrize(
    ("setting", "joined"),
    [
        ("", "/d/a_text_document /d/b_text_document /d/c_text_document"),
        ("IFS=,\n", "/d/a_text_document,/d/b_text_document,/d/c_text_document"),
        ("IFS=';x'\n", "/d/a_text_document;/d/b_text_document;/d/c_text_document"),
        ("IFS=\n", "/d/a_text_document/d/b_text_document/d/c_text_document"),
    ],
    ids=["default", "comma", "first-character", "empty"],
)
def test_star_in_quotes_is_one_word_joined_by_ifs(setting: str, joined: str) -> None:
    script = ARRAY + setting + 'torchrun pretrain_gpt.py --data-path "${DATA[*]}" --lr 1e-4\n'
    assert args(script) == [("--data-path", True), (joined, True), ("--lr", True), ("1e-4", True)]


def test_at_in_quotes_is_one_word_per_element_whatever_ifs_is() -> None:
    script = ARRAY + "IFS=,\n" + 'torchrun pretrain_gpt.py --data-path "${DATA[@]}"\n'
    assert args(script) == [
        ("--data-path", True),
        ("/d/a_text_document", True),
        ("/d/b_text_document", True),
        ("/d/c_text_document", True),
    ]


def test_star_joins_inside_a_longer_quoted_word_and_in_an_assignment() -> None:
    script = (
        'W=(1 2)\nBEFORE="${W[*]}"\nIFS=,\nAFTER="${W[*]}"\n'
        'torchrun pretrain_gpt.py --save "$BEFORE" --load "$AFTER" --data-path "w:${W[*]}:"\n'
    )
    assert args(script) == [
        ("--save", True),
        ("1 2", True),  # IFS was still bash's own when BEFORE was set
        ("--load", True),
        ("1,2", True),
        ("--data-path", True),
        ("w:1,2:", True),
    ]


def test_dollar_star_and_dollar_at_of_the_script_s_own_arguments() -> None:
    script = 'set -- 0.1 0.2\ntorchrun pretrain_gpt.py --split "$*" --lr "$@"\n'
    assert args(script) == [("--split", True), ("0.1 0.2", True), ("--lr", True), ("0.1", True), ("0.2", True)]


def test_an_empty_array_in_quotes_with_star_is_one_empty_word_with_at_none() -> None:
    script = 'E=()\ntorchrun pretrain_gpt.py --data-path "${E[*]}" --save "${E[@]}" --lr 1\n'
    assert args(script) == [("--data-path", True), ("", True), ("--save", True), ("--lr", True), ("1", True)]


def test_an_ifs_not_known_here_leaves_the_joined_word_unknown() -> None:
    script = ARRAY + 'IFS=$1\ntorchrun pretrain_gpt.py --data-path "${DATA[*]}"\n'
    found = words_of(script, "run.sh").args
    assert [a.resolved for a in found] == [True, False]
    assert "argument" in found[1].why  # IFS comes from the script's first argument
