"""Which command of a script launches the training, and which of its words are whose: the wrappers
before the launcher (`srun ...`, `ray job submit ... --`, `numactl ...`, `nsys profile ...`), the
launcher's own options (`torchrun --nproc_per_node 8`, `deepspeed --num_gpus 8`, `python -m
torch.distributed.run ...`), the training script (the first `*.py` word after it) and its arguments.
A shell that runs a string (`bash -c '...'`, `bcprun -c '...'`) hands the string back to be read as
shell itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .values import Chunk

Field = list[Chunk]


@dataclass
class Written:
    """A word after expansion: its value, the shell word it came from (as written; `group` tells the
    words one shell word split into apart), and whether it is that whole word."""

    chunks: Field
    raw: str
    group: int
    whole: bool

    @property
    def shown(self) -> str:
        return self.raw if self.whole else "".join(c.text for c in self.chunks)


PROGRAM = re.compile(r"^(torchrun|deepspeed|msrun|python(\d+(\.\d+)*)?)$")  # msrun: MindSpore's torchrun
SHELLS = frozenset({"bash", "sh", "dash", "zsh", "ksh", "bcprun"})
# commands that print, copy or look at things: a launch line inside them is text, not a launch
NEVER_LAUNCH = frozenset(
    {
        "echo",
        "printf",
        "cat",
        "tee",
        "grep",
        "sed",
        "awk",
        "logger",
        "mkdir",
        "cp",
        "mv",
        "rm",
        "ln",
        "ls",
        "touch",
        "chmod",
        "chown",
        "wc",
        "head",
        "tail",
        "sort",
        "cut",
        "tr",
        "find",
        "xargs",
        "which",
        "type",
        "command",
        "hash",
        "alias",
        "basename",
        "dirname",
        "realpath",
        "readlink",
        "date",
        "sleep",
        "wait",
        "kill",
        "pkill",
        "trap",
        "cd",
        "pushd",
        "popd",
        "ulimit",
        "umask",
        "pip",
        "pip3",
        "conda",
        "module",
        "git",
        "wget",
        "curl",
        "scp",
        "rsync",
        "tar",
        "sbatch",
        "squeue",
        "scontrol",
        "hostname",
        "nvidia-smi",
        "ifconfig",
        "ip",
    }
)
TRAINING = re.compile(r"(pretrain|train|finetune|fine_tune|sft|main)[^/]*\.py$", re.I)


@dataclass
class Launch:
    words: list[Written]
    program_at: int  # -1: the script runs itself (./pretrain_gpt.py)
    script_at: int
    line: int
    through: str = ""  # a wrapper script not given that runs the training script (`bash entry.sh x.py ARGS`)

    @property
    def program(self) -> str:
        return (_basename(self.words[self.program_at].chunks) or "") if self.program_at >= 0 else ""

    @property
    def wrapper(self) -> list[Written]:
        return self.words[: max(self.program_at, 0)]

    @property
    def launcher(self) -> list[Written]:
        return self.words[self.program_at + 1 : self.script_at] if self.program_at >= 0 else []

    @property
    def args(self) -> list[Written]:
        return self.words[self.script_at + 1 :]

    @property
    def script_name(self) -> str:
        return "".join(c.text for c in self.words[self.script_at].chunks)

    @property
    def trains(self) -> bool:
        """A training script by its name (pretrain_gpt.py, train.py, finetune_*.py, a module pretrain_x)."""
        name = self.script_name.rsplit("/", 1)[-1]
        return bool(TRAINING.search(name if name.endswith(".py") else name.rsplit(".", 1)[-1] + ".py"))


def _known(field: Field) -> str | None:
    return "".join(c.text for c in field) if all(c.known for c in field) else None


def _basename(field: Field) -> str | None:
    text = _known(field)
    return text.rsplit("/", 1)[-1] if text else None


def _python_script(field: Field) -> bool:
    """A word that names a Python file: its last piece is known and ends with .py."""
    return bool(field) and field[-1].known and field[-1].text.endswith(".py")


def find(words: list[Written], line: int) -> Launch | None:
    """The launch in a command's words, or None (a command that runs no Python training script)."""
    fields = [w.chunks for w in words]
    for i, field in enumerate(fields):
        name = _basename(field)
        if name is not None and PROGRAM.match(name):
            script = next((k for k in range(i + 1, len(fields)) if _python_script(fields[k])), None)
            if script is None:  # torchrun -m examples.pretrain_x (a module for a script)
                script = _module(fields, i)
            if script is None and not name.startswith("python"):
                script = _unknown_script(fields, i)  # torchrun ... $TRAIN_SCRIPT ...
            if script is None:
                continue  # python -c '...', python -m pip ...: not a launch
            if name.startswith("python") and _runs_code(fields[i + 1 : script]):
                continue
            return Launch(words, i, script, line)
        if i == 0 and _python_script(field):  # ./pretrain_gpt.py ...
            return Launch(words, -1, 0, line)
    for i, field in enumerate(fields[:-2]):  # bash entry.sh pretrain_gpt.py ARGS: a wrapper script runs it
        wrapper = _known(fields[i + 1]) or ""
        if _basename(field) in SHELLS and wrapper.endswith(".sh"):
            script = next((k for k in range(i + 2, len(fields)) if _python_script(fields[k])), None)
            if script is not None and TRAINING.search("".join(c.text for c in fields[script]).rsplit("/", 1)[-1]):
                return Launch(words, i, script, line, through=wrapper)
    return None


RUNNER_MODULES = frozenset({"torch.distributed.run", "torch.distributed.launch"})


def _module(fields: list[Field], program: int) -> int | None:
    """The module `-m NAME` runs as the training script (torchrun's, or python's past torch.distributed.run)."""
    for k in range(program + 1, len(fields) - 1):
        if _known(fields[k]) in ("-m", "--module"):
            module = _known(fields[k + 1])
            if module is not None and module not in RUNNER_MODULES and re.fullmatch(r"[\w.]+", module):
                return k + 1
    return None


LAUNCHER_FLAGS = frozenset(
    {
        "--standalone",
        "--no-python",
        "--no_python",
        "--use_env",
        "--use-env",
        "--run-path",
        "--run_path",
        "--no_local_rank",
        "--no-local-rank",
        "--autotuning",
    }
)


def _unknown_script(fields: list[Field], program: int) -> int | None:
    """The script of `torchrun OPTIONS $SCRIPT ARGS` whose name is not known here: the first word
    after the launcher's options (each `--option value` or `--option=value`, its flags alone) that is
    not known, when the words after it hold options."""
    k = program + 1
    while k < len(fields):
        text = _known(fields[k])
        if text is None:
            after = [_known(f) or "" for f in fields[k + 1 :]]
            return k if any(a.startswith("--") for a in after) else None
        if not text.startswith("-"):
            return None  # a known word that is no Python file: not a training launch
        k += 1 if ("=" in text or text in LAUNCHER_FLAGS) else 2
    return None


def _runs_code(options: list[Field]) -> bool:
    """python -c CODE: the .py word after it is an argument of the code, not a script."""
    return any(_known(f) == "-c" for f in options)


def shell_string(fields: list[Field]) -> Field | None:
    """The string a shell wrapper runs (`bash -c STRING`, `srun bash -c STRING`, `bcprun ... -c STRING`)."""
    shell_at = next((i for i, f in enumerate(fields) if _basename(f) in SHELLS), None)
    if shell_at is None:
        return None
    for k in range(shell_at + 1, len(fields)):
        text = _known(fields[k])
        if k + 1 < len(fields) and (text in ("-c", "--cmd") or (text is not None and re.fullmatch(r"-[a-z]*c", text))):
            return fields[k + 1]
        if text is not None and text.startswith("--cmd="):  # bcprun --cmd=STRING
            return [Chunk(text[len("--cmd=") :], True, fields[k][0].lines[6:] or (fields[k][0].line,))] + fields[k][1:]
    return None
