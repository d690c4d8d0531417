"""A launcher script nested past a fixed depth (issue 32): every construct the bash reader follows by
recursion (quotes, `$(...)`, `${...}`, arrays, `$(( ))`, blocks, subshells, tests, brace expansions,
function calls, eval strings) is refused with one InputError naming the file, the line, what nests and
what to do, never a RecursionError; up to the depth real scripts use it reads as before."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import cli_runner

from neoconv import InputError, translate
from neoconv.cli import main
from neoconv.formats.megatron.bash.limits import NESTING_LIMIT, RUN_LIMIT, STRING_BUDGET
from neoconv.formats.megatron.bash.script import Script
from neoconv.formats.megatron.syntax import words_of

LAUNCH = "torchrun pretrain_gpt.py --num-layers 2 --hidden-size $X\n"
DEEP = 5_000  # far past Python's stack (1,000 frames): without a bound each of these raised RecursionError


def nest(opening: str, inner: str, closing: str, depth: int) -> str:
    return opening * depth + inner + closing * depth


# (what, the script before the launch line, the line of the nest, the words of the message)
CASES = [
    ("command substitution", "X=" + nest("$(echo ", "1", ")", DEEP), "quotes, expansions and parentheses"),
    ("quoted substitution", 'X="' + nest('$(echo "', "1", '")', DEEP) + '"', "quotes, expansions and parentheses"),
    ("${...} default", "X=" + nest("${A:-", "1", "}", DEEP), "quotes, expansions and parentheses"),
    ("array index", "X=" + nest("${A[", "0", "]}", DEEP), "quotes, expansions and parentheses"),
    ("array element", "A=(" + nest("$(echo ", "1", ")", DEEP) + ")", "quotes, expansions and parentheses"),
    ("$(( )) parentheses", "X=$((" + nest("(", "1", ")", DEEP) + "))", "quotes, expansions and parentheses"),
    ("$(( )) inside $(( ))", "X=" + nest("$((1+", "1", "))", DEEP), "quotes, expansions and parentheses"),
    ("(( )) command", "((" + nest("(", "1", ")", DEEP) + "))", "quotes, expansions and parentheses"),
    ("process substitution", "X=" + nest("<(echo ", "1", ")", DEEP), "quotes, expansions and parentheses"),
    ("arithmetic !", "X=$((" + "!" * DEEP + "1))", "arithmetic parentheses and operators"),
    ("arithmetic ?:", "X=$((" + nest("1?", "1", ":1", DEEP) + "))", "arithmetic parentheses and operators"),
    ("arithmetic a=b=...", "X=$((" + "a=" * DEEP + "1))", "arithmetic parentheses and operators"),
    ("arithmetic **", "X=$((" + "1**" * DEEP + "1))", "arithmetic parentheses and operators"),
    ("subshell", nest("( ", "true", " )", DEEP // 10), "blocks, subshells, loops and functions"),
    ("group", nest("{ ", "true", "; }", DEEP // 10), "blocks, subshells, loops and functions"),
    ("if", nest("if true; then ", "true", "; fi", DEEP // 10), "blocks, subshells, loops and functions"),
    ("while", nest("while false; do ", "true", "; done", DEEP // 10), "blocks, subshells, loops and functions"),
    ("case", nest("case a in a) ", "true", " ;; esac", DEEP // 10), "blocks, subshells, loops and functions"),
    ("function", nest("f() { ", "true", "; }", DEEP // 10), "blocks, subshells, loops and functions"),
    ("[[ ( ) ]]", "[[ " + nest("( ", "a", " )", DEEP // 10) + " ]]", "a test's parentheses and `!`"),
    ("[ \\( \\) ]", "[ " + nest("\\( ", "a", " \\)", DEEP // 10) + " ]", "a test's parentheses and `!`"),
    ("[ ! ! ]", "[ " + "! " * DEEP + "a ]", "a test's parentheses and `!`"),
    ("brace expansion", "for x in " + nest("{a,", "b", "}", DEEP) + "; do true; done", "brace expansions"),
]


@pytest.mark.parametrize(("what", "script", "words"), CASES, ids=[c[0] for c in CASES])
def test_a_nest_past_the_limit_is_one_clear_refusal(what: str, script: str, words: str) -> None:
    text = "# a launcher\nA=1\n" + script + "\n" + LAUNCH
    with pytest.raises(InputError) as caught:
        Script("run.sh").read(text)
    error = caught.value
    assert (error.file, error.line) == ("run.sh", 3)
    assert f"{words}" in error.message and f"nested more than {NESTING_LIMIT} deep" in error.message
    assert "write the values out" in error.message  # the fix


def test_an_arithmetic_nest_held_in_a_variable_is_refused_where_it_is_evaluated() -> None:
    text = "A='" + nest("(", "1", ")", DEEP) + "'\nB=2\nX=$((A + B))\n" + LAUNCH  # the lexer sees one quoted word
    with pytest.raises(InputError) as caught:
        Script("run.sh").read(text)
    assert caught.value.line == 3 and "arithmetic parentheses and operators nested" in caught.value.message


@pytest.mark.parametrize(
    ("script", "value"),
    [
        ("X=" + nest("${A:-", "7", "}", NESTING_LIMIT - 1), "7"),
        ("X=$((" + nest("(", "6", ")", NESTING_LIMIT - 2) + "))", "6"),
        ("X=$((" + "!" * (NESTING_LIMIT - 1) + "0))", "1"),  # an odd number of `!`
        (nest("if true; then ", "X=5", "; fi", NESTING_LIMIT - 1), "5"),
        ("for X in " + nest("{a,", "4", "}", NESTING_LIMIT - 1) + "; do true; done", "4"),  # the last word
    ],
    ids=["${...}", "$(( ))", "!", "if", "braces"],
)
def test_up_to_the_limit_the_script_reads_as_before(script: str, value: str) -> None:
    args = words_of(script + "\n" + LAUNCH, "run.sh").args
    assert [(a.text, a.resolved) for a in args[-2:]] == [("--hidden-size", True), (value, True)]


def test_function_calls_inside_nested_blocks_stop_reading_instead_of_overflowing() -> None:
    """f calls itself from inside 28 blocks, and each call expands a 28-deep `${...}`: the calls stop
    (said in the report), the launch after them is read."""
    body = nest("if true; then ", "X=" + nest("${A:-", "8", "}", 28) + "; f", "; fi", 28)
    reading = Script("run.sh").read("f() { " + body + "; }\nf\n" + LAUNCH)
    assert any("`f` is called inside more than" in c and "not read further" in c for c in reading.choices)
    assert [w.chunks[0].text for w in reading.launches[0].words[-2:]] == ["--hidden-size", "8"]


def test_commands_nested_past_the_run_limit_through_calls_are_refused() -> None:
    body = nest("{ ", "f", "; } >x | cat && true", 28)  # five commands inside one another per block
    with pytest.raises(InputError) as caught:
        Script("run.sh").read("f() { " + body + "; }\nf\n" + LAUNCH)
    assert (
        f"commands (blocks, pipelines, function calls, eval strings, sourced scripts) nested more than {RUN_LIMIT}"
        in (caught.value.message)
    )


def test_nested_eval_strings_stop_reading() -> None:
    reading = Script("run.sh").read("eval " * 300 + "X=3\n" + LAUNCH)
    assert [w.chunks[0].text for w in reading.launches[0].words[-2:]] == ["--hidden-size", "${X}"]
    assert not reading.launches[0].words[-1].chunks[0].known  # X=3 sits deeper than the reader goes


def test_a_long_eval_chain_stops_reading_at_the_strings_budget() -> None:
    """`eval eval ... X=3` of 5,000 words: each level reads the rest again (seconds of CPU before); past the
    characters read as shell from strings in one script the rest is not read, and the reading says so."""
    reading = Script("run.sh").read("eval " * 5000 + "X=3\n" + LAUNCH)
    assert not reading.launches[0].words[-1].chunks[0].known  # X=3 is not reached
    assert any(f"past {STRING_BUDGET:,} characters" in note for note in reading.choices)


def test_brace_expansion_nests_as_bash_reads_it() -> None:
    """Outermost braces first, as bash: `{a,{b,c}}` is three words, `{{a,b}}` keeps the outer braces."""
    reading = Script("run.sh").read("A=({a,{b,c}} {{x,y}} p{1..3..2}q {z})\n")
    assert [v[0].text for v in reading.variables["A"]] == ["a", "b", "c", "{x}", "{y}", "p1q", "p3q", "{z}"]


def test_a_brace_expansion_of_too_many_words_is_a_clear_refusal() -> None:
    with pytest.raises(InputError) as caught:
        Script("run.sh").read("A=1\nfor x in {1..200000}; do true; done\n" + LAUNCH)
    assert caught.value.line == 2
    assert caught.value.message.startswith("{1..200000}: more than 100,000 words") and "write the values out" in (
        caught.value.message
    )


def test_the_cli_refuses_a_deep_nest_with_one_line(tmp_path: Path) -> None:
    src = tmp_path / "run.sh"
    src.write_text("#!/bin/bash\nX=" + nest("$(echo ", "1", ")", DEEP) + "\n" + LAUNCH)
    out = tmp_path / "out.yml"
    result = cli_runner().invoke(main, ["megatron2neox", str(src), "-o", str(out)])
    assert result.exit_code == 2 and not out.exists()
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and f"{src}:2:" in lines[0] and "nested more than" in lines[0]
    assert "internal error" not in lines[0] and "Recursion" not in lines[0]


def test_translate_refuses_it_too(tmp_path: Path) -> None:
    src = tmp_path / "run.sh"
    src.write_text("#!/bin/bash\n" + nest("if true; then ", "true", "; fi", 500) + "\n" + LAUNCH)
    with pytest.raises(InputError) as caught:
        translate([src], "megatron", "neox")
    assert caught.value.line == 2 and "blocks, subshells, loops and functions nested" in caught.value.message
