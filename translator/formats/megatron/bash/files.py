"""Scripts a launcher writes and then runs, read statically: a here-document handed to a shell or to
Slurm (`sbatch <<EOF ... srun python pretrain_gpt.py ... EOF`), and a file the script writes with one
(`cat > job.sh <<EOF ... EOF`) that it later runs (`bash job.sh`, `sbatch job.sh`, `source job.sh`).
Nothing is written or run: the text is read as shell where bash would run it."""

from __future__ import annotations

from .control import Script
from .launch import Written
from .lexer import tokenize
from .nodes import Redirect
from .values import Chunk, Value

RUNNERS = frozenset({"bash", "sh", "zsh", "dash", "ksh", "sbatch", "srun", "salloc"})
WRITERS = frozenset({"cat", "tee"})
HANDLED, NOT_MINE = True, False


def _name(word: Written) -> str | None:
    text = "".join(c.text for c in word.chunks) if all(c.known for c in word.chunks) else None
    return text.rsplit("/", 1)[-1] if text else None


def body_value(sc: Script, redirect: Redirect) -> Value:
    """A here-document's text after bash's expansions (none when its delimiter is quoted), each
    character with its line in the file."""
    lines = redirect.body.split("\n")
    if not redirect.expand:
        out: list[Chunk] = []
        for k, text in enumerate(lines):
            line = redirect.body_line + k
            out.append(Chunk(text + ("\n" if k < len(lines) - 1 else ""), True, (line,) * (len(text) + 1)))
        return tuple(out)
    escaped = redirect.body.replace("\\", "\\\\").replace("\\\\$", "\\$").replace("\\\\`", "\\`").replace('"', '\\"')
    try:
        tokens = tokenize(f'"{escaped}"', sc.name)
    except Exception:
        return (Chunk(redirect.body, True, (redirect.body_line,) * max(1, len(redirect.body))),)
    words = [t.word for t in tokens if t.word is not None]
    if len(words) != 1:
        return (Chunk(redirect.body, True, (redirect.body_line,) * max(1, len(redirect.body))),)
    shift = redirect.body_line - 1
    for part in words[0].parts:
        part.line += shift
        part.lines = [n + shift for n in part.lines]
    return sc.expander.value(words[0])


def run_written(sc: Script, fields: list[Written], redirects: list[Redirect], line: int) -> tuple[bool, int | None]:
    """(HANDLED, status) when the command writes a script or runs one the file wrote or holds."""
    name = _name(fields[0])
    here = next((r for r in redirects if r.op in ("<<", "<<-")), None)
    if here is not None and name == "read":  # read -r -d '' CMD <<EOF: the text into a variable
        return HANDLED, _read_into(sc, fields, here)
    if here is not None and name in WRITERS:
        target = next((r.target for r in redirects if r.op in (">", ">>", ">|") and r.target is not None), None)
        path = "".join(c.text for c in sc.expander.value(target)) if target is not None else None
        if name == "tee" and len(fields) > 1 and all(c.known for c in fields[1].chunks):
            path = "".join(c.text for c in fields[1].chunks)
        if path:
            sc.files[path] = body_value(sc, here)
        return HANDLED, None
    if here is not None and name in RUNNERS:
        return HANDLED, _read(
            sc, [list(body_value(sc, here))], line, f"the here-document of `{name}`", name == "source"
        )
    if name in RUNNERS or name in ("source", "."):
        for word in fields[1:]:
            path = "".join(c.text for c in word.chunks) if all(c.known for c in word.chunks) else None
            if path and path in sc.files:
                return HANDLED, _read(
                    sc, [list(sc.files[path])], line, f"{path}, which the script writes", name in ("source", ".")
                )
    return NOT_MINE, None


def _read_into(sc: Script, fields: list[Written], here: Redirect) -> int:
    """`read [-r] [-d ''] NAME <<EOF`: NAME holds the here-document (its first line without -d '')."""
    words = ["".join(c.text for c in w.chunks) if all(c.known for c in w.chunks) else None for w in fields[1:]]
    names = [w for k, w in enumerate(words) if w and not w.startswith("-") and not (k and words[k - 1] == "-d")]
    if not names:
        return 0
    value = body_value(sc, here)
    whole = any(w == "-d" for w in words)
    if not whole:  # the first line only
        cut: list[Chunk] = []
        for chunk in value:
            if chunk.known and "\n" in chunk.text:
                head = chunk.text.split("\n", 1)[0]
                cut.append(Chunk(head, True, chunk.lines[: len(head)] or (chunk.line,)))
                break
            cut.append(chunk)
        value = tuple(cut)
    sc.state.set_scalar(names[-1], value)
    return 0


def _read(sc: Script, text: list[list[Chunk]], line: int, what: str, here: bool) -> int | None:
    """Read as shell: in this shell (`source`) or in a shell of its own (`bash`, `sbatch`)."""
    sc.choose(f"line {line}: {what} is read as the shell it runs")
    if here:
        return sc.read_string(text, line, what)
    saved = sc.state.fork()
    try:
        return sc.read_string(text, line, what)
    finally:
        sc.state.adopt(saved)
