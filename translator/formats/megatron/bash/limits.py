"""How deep the bash reader follows constructs inside one another. Every construct it reads by recursion
(quotes and expansions, `$(( ))` parentheses, blocks, `[ ( ) ]` tests, brace expansions, function calls,
`eval` strings, sourced files) stops at a fixed depth with one clear error, long before Python's own stack
would: a hostile file (a 5,000-deep `$(echo $(echo ...))`) is refused, never an internal error."""

from __future__ import annotations

NESTING_LIMIT = 32  # constructs inside one another in one text: scripts people write nest under 10
RUN_LIMIT = 128  # commands read inside one another in all (blocks, calls, evals, sourced files)
# characters read as shell from `eval` / `bash -c` strings in one script: each level of `eval eval ...`
# reads the rest again, so a long chain would cost seconds; launch scripts' strings are a few lines
STRING_BUDGET = 200_000


class TooDeep(Exception):
    """Raised where no file and line are known (an arithmetic expression, a test's words); the script
    reader turns it into an InputError at the command it reads."""

    def __init__(self, what: str) -> None:
        super().__init__(what)
        self.what = what


def too_deep(what: str, limit: int = NESTING_LIMIT) -> str:
    """The message: what nests, the limit, what to do."""
    return (
        f"{what} nested more than {limit} deep: neoconv reads no deeper (a generated or hostile script?); "
        "write the values out, or split them into variables set one after another"
    )
