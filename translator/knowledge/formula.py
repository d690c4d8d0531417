"""Formulas: named pairs of pure functions between framework values and canonical values.

Simple transforms (rename, invert, enum map, scale) are declared in the mapping tables and built
here. A formula is a pair of pure functions registered under a name:

* ``read(**kwargs)`` gets the rule's framework keys (dots become ``_``: ``fp16.type`` ->
  ``fp16_type``) and its ``with`` canonical fields (by last segment: ``model.hidden_size`` ->
  ``hidden_size``) and returns the canonical value, or a dict of values for multi-field rules.
* ``write(**kwargs)`` gets the canonical value as ``value`` (or each field by last segment) plus
  the ``with`` fields, and returns ``{key_ident: framework_value}``.

Either side may wrap a result in :class:`Approx` to say the value is only approximated; the
report then marks the entry ``lossy`` with the reason.

Where formulas live: a name ``fmt.name`` is registered by the ``formulas`` module of format ``fmt``'s
package (``translator/formats/<fmt>/formulas.py``: a format's own knowledge; the format registry knows
the package), imported on the first lookup of one of its names, so start-up and a translation pay
only for the tables they load; a plain name is one of the formulas (and helpers) every table may
share, below: named for the maths, naming no framework.

Batch identities: global batch = micro batch x accumulation x data-parallel size. A target whose
data-parallel size differs from the source's at the same world size (a parallel dimension it lacks
or adds: Ulysses sequence, tensor, pipeline) keeps the global batch, the meaning of the run, and
re-derives micro batch and accumulation; when the global batch does not split over its ranks, the
exact --set that makes it hold is the answer. Names no framework: each target says how its
data-parallel size is made (its formulas).
"""

from __future__ import annotations

import importlib
import inspect
import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, NamedTuple

if TYPE_CHECKING:
    from ..schedule.fields import Reading, Rendering


class Split(NamedTuple):
    global_batch: int | None
    micro: int | None
    accum: int | None
    note: str = ""  # why micro or accumulation differ from the source's (the report's words)


def ranks(world: int | None, parts: list[tuple[str, int | None]]) -> tuple[int | None, str]:
    """The data-parallel size world / (product of the parts) and how it was made ("world 8 / tensor 2").
    None when the world size is unknown or the parts do not divide it."""
    if not world:
        return None, ""
    used = [(name, size) for name, size in parts if size and size > 1]
    divisor = 1
    for _, size in used:
        divisor *= size  # type: ignore[operator]
    where = " / ".join([f"world {world}", *(f"{name} {size}" for name, size in used)])
    if world % divisor:
        return None, where
    return world // divisor, where


def largest_divisor_at_most(n: int, cap: int) -> int:
    """The largest divisor of n (>= 1) that is at most cap (>= 1), from n's prime factors: a few
    operations for any n below 2**63 (the catalogue's bound on a batch), where counting down from
    cap took up to cap tries (a prime global batch of 10^12 samples: a hang)."""
    if cap >= n:
        return n
    divisors = [1]
    for prime, power in _factors(n).items():
        divisors = [d * prime**k for d in divisors for k in range(power + 1) if d * prime**k <= cap]
    return max(divisors)


def _factors(n: int) -> dict[int, int]:
    """n's prime factorization (Pollard's rho after the small primes; Miller-Rabin decides primes)."""
    found: dict[int, int] = {}
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        while n % p == 0:
            found[p] = found.get(p, 0) + 1
            n //= p
    stack = [n] if n > 1 else []
    while stack:
        m = stack.pop()
        if _is_prime(m):
            found[m] = found.get(m, 0) + 1
        else:
            d = _rho(m)
            stack += [d, m // d]
    return found


def _is_prime(n: int) -> bool:
    # these bases decide every n below 3.3e24 (Sorenson and Webster)
    d, r = n - 1, 0
    while d % 2 == 0:
        d, r = d // 2, r + 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41):
        if a % n == 0:
            continue
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


def _rho(n: int) -> int:
    """A proper divisor of the odd composite n (Pollard's rho, Floyd's cycle finding)."""
    for c in range(1, n):
        x = y = 2
        d = 1
        while d == 1:
            x = (x * x + c) % n
            y = (y * y + c) % n
            y = (y * y + c) % n
            d = math.gcd(abs(x - y), n)
        if d != n:
            return d
    raise ValueError(f"no factor of {n}")  # unreachable for a composite n


def split(global_batch: int | None, micro: int | None, accum: int | None, dp: int | None, where: str) -> Split | str:
    """The target's micro batch and accumulation for the same global batch at dp data-parallel ranks;
    a str says why no whole split exists (with the --set that makes one). Unknown dp or global batch:
    the values as they are."""
    if dp is None or global_batch is None:
        return Split(global_batch, micro, accum)
    if micro and accum and micro * accum * dp == global_batch:
        return Split(global_batch, micro, accum)
    if global_batch % dp:
        low = global_batch // dp * dp
        options = " or ".join(f"--set batch.global={n}" for n in dict.fromkeys((low, low + dp)) if n > 0)
        return (
            f"the global batch {global_batch} does not split over {dp} data-parallel ranks ({where}): give "
            f"{options} (a multiple of {dp}), or --world-size N of a run it splits over"
        )
    per_rank = global_batch // dp
    if micro:
        m = largest_divisor_at_most(per_rank, micro)
    elif accum and per_rank % accum == 0:
        m = per_rank // accum
    else:
        m = per_rank
    ga = per_rank // m
    if m == micro and ga == accum:
        return Split(global_batch, m, ga)
    was = f"micro {micro} x accumulation {accum}" if micro or accum else "no micro batch"
    return Split(
        global_batch,
        m,
        ga,
        f"the global batch {global_batch} at {dp} data-parallel ranks ({where}) is micro {m} x "
        f"accumulation {ga} (the source: {was})",
    )


def written(done: Split | str, keys: tuple[str, str, str]) -> Any:
    """A split as a target's (global, micro, accumulation) keys: the reason as the global key's
    missing value when there is no whole split; an approximation when micro or accumulation changed."""
    total, micro, accum = keys
    if isinstance(done, str):
        return {total: Missing(done)}
    out = {total: done.global_batch, micro: done.micro, accum: done.accum}
    return Approx(out, done.note, ("batch.micro", "batch.grad_accum")) if done.note else out


@dataclass(frozen=True)
class Approx:
    """A value that only approximates the source's meaning, with the reason.

    `fields`: the canonical fields that lose something, when a multi-field formula knows (the
    cosine's missing clamp concerns the decay, not the peak lr); empty = all of the rule's fields.
    """

    value: Any
    detail: str
    fields: tuple[str, ...] = ()
    parts: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (why, its fields) when the reasons differ per field

    def detail_for(self, name: str) -> str:
        """The reasons that concern canonical field `name` ("" when none does)."""
        if self.parts:
            return "; ".join(why for why, names in self.parts if not names or name in names)
        return self.detail if not self.fields or name in self.fields else ""


@dataclass(frozen=True)
class Missing:
    """A key a write formula cannot give a value that the target needs: reported `missing` with the
    hint (the exact --set that gives it); the rule's leaves say why it is not written."""

    hint: str


@dataclass(frozen=True)
class Absent:
    """A reading whose keys say on purpose that the rule's fields have no value (an explicit null, a
    switch that is off: Mixtral's `sliding_window: null`, Qwen's `use_sliding_window: false`).

    The fields stay out of the IR, as when the file omits the keys, but the leaves are carried with
    this detail (what they mean), not dropped as values nothing could be derived from.
    """

    detail: str


@dataclass(frozen=True)
class Extension:
    """A formula's reading of a value with no canonical form (a cyclic lr schedule, ...).

    The rule's leaves stay framework extensions: carried by a same-format translation, dropped
    with this detail elsewhere.
    """

    detail: str


class UnknownValue(ValueError):
    """A value outside the names the framework's release knows (a fork's optimizer, norm or lr
    schedule): not bad input. Every table and formula raises this one exception for it, and the
    engine reads it as a `Foreign` value: an `unknown` entry for the field, the rest translates.
    `key`: the key holding it, when the raiser knows (a formula reading several keys)."""

    def __init__(self, value: Any, known: Any = (), key: str | None = None) -> None:
        self.value, self.known, self.key = value, tuple(str(k) for k in known), key
        super().__init__(f"unknown value {value!r}; expected one of {', '.join(self.known)}")


@dataclass(frozen=True)
class Foreign:
    """A reading that met a value the release does not know (see UnknownValue): the rule's fields
    get no value, the leaf holding it is reported `unknown` (carried by a same-format translation),
    the rule's other leaves are said to be read with it."""

    value: Any
    known: tuple[str, ...] | list[str] = ()
    key: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "known", tuple(str(k) for k in self.known))  # (hashable: readings are remembered)

    @classmethod
    def of(cls, exc: UnknownValue) -> "Foreign":
        return cls(exc.value, exc.known, exc.key)


class Unrunnable(ValueError):
    """A reading finds a config its own framework could not run (NeoX's gated widths): the message
    says what is wrong and the fix, as it stands (the engine adds only file, line and key).
    `arg`: the formula argument holding the value at fault, when one is, so the message names the key
    the user wrote (not the first key the rule reads)."""

    def __init__(self, message: str, arg: str | None = None) -> None:
        super().__init__(message)
        self.arg = arg


class Unexpressible(Exception):
    """The target has the key but not this value (e.g. an enum member it lacks); a write may raise it."""


def unwrap(value: Any) -> tuple[Any, str | None]:
    if isinstance(value, Approx):
        return value.value, value.detail
    return value, None


def ident(name: str) -> str:
    """Python identifier a formula sees for a framework key path."""
    return name.replace(".", "_").replace("-", "_")


def field_ident(name: str) -> str:
    """Python identifier a formula sees for a canonical field."""
    return name.rsplit(".", 1)[-1]


@dataclass(frozen=True)
class Formula:
    name: str
    read: Callable[..., Any]
    write: Callable[..., dict[str, Any]]
    # signatures are read once at registration: the engine asks for them on every file
    _read_params: frozenset[str] = frozenset()
    _write_params: frozenset[str] = frozenset()

    def read_params(self) -> frozenset[str]:
        return self._read_params

    def write_params(self) -> frozenset[str]:
        return self._write_params


class _Registry(dict):  # type: ignore[type-arg]
    """Named formulas, imported on first use: `FORMULAS["fmt.name"]` imports format fmt's
    formulas.py; a plain name is one of this module's own."""

    def __init__(self) -> None:
        super().__init__()
        self.tried: set[str] = set()  # modules already imported (or found missing)

    def __missing__(self, name: str) -> Formula:
        module = _module_of(name)
        if module is not None and module not in self.tried:
            try:
                importlib.import_module(module)
            except ModuleNotFoundError as exc:  # a namespace no format has: an unknown formula
                if not module.startswith(str(exc.name)):
                    raise
            self.tried.add(module)
            if name in self:
                return self[name]  # type: ignore[no-any-return]
        raise KeyError(name)

    def every(self) -> list[str]:
        """All names: every format's formulas imported (for an error message listing them)."""
        from .registry import FORMATS

        for namespace in ("", *FORMATS):
            try:
                self[f"{namespace}.?" if namespace else "?"]  # a miss that imports the namespace
            except KeyError:
                pass
        return sorted(self)


def _module_of(name: Any) -> str | None:
    """The module that registers a formula name, or None for a name no module can hold: `fmt.name`
    the formulas module of format `fmt` (the registry knows its package), a plain name this module."""
    if not isinstance(name, str):
        return None
    namespace, dot, rest = name.partition(".")
    if not dot:
        return __name__  # the formulas every table may share: this module's own
    if not namespace.isidentifier() or not rest:
        return None
    from .registry import module_of

    return module_of(namespace, "formulas")


FORMULAS: _Registry = _Registry()


def formula(name: str) -> Callable[[type], type]:
    """Register a class holding static ``read`` and ``write`` functions as a named formula."""

    def register(cls: type) -> type:
        read, write = cls.read, cls.write  # type: ignore[attr-defined]
        FORMULAS[name] = Formula(name, read, write, parameters(read), parameters(write))
        return cls

    return register


def parameters(func: Callable[..., Any]) -> frozenset[str]:
    """A function's parameter names, read from its code object (inspect.signature costs ~30 µs a
    call, paid for ~140 functions at every start); a generated function's declared signature wins."""
    if hasattr(func, "__signature__"):
        return frozenset(inspect.signature(func).parameters)
    code = func.__code__
    return frozenset(code.co_varnames[: code.co_argcount + code.co_kwonlyargcount])


# --------------------------------------------------------------------------------------------
# Simple transforms declared inline in the tables


@dataclass(frozen=True)
class Simple:
    """One key <-> one field: rename, boolean inversion, enum map or scaling."""

    kind: str  # rename | invert | enum | scale
    table: tuple[tuple[Any, Any], ...] = ()  # enum pairs (framework, canonical)
    factor: float = 1.0
    case_insensitive: bool = False

    def read(self, raw: Any) -> Any:
        if raw is None:
            return None
        if self.kind == "invert":
            if not isinstance(raw, bool):
                raise ValueError(f"expected true or false, got {raw!r}")
            return not raw
        if self.kind == "enum":
            probe = raw.lower() if self.case_insensitive and isinstance(raw, str) else raw
            for framework, canonical in self.table:
                fw = framework.lower() if self.case_insensitive and isinstance(framework, str) else framework
                if fw == probe:
                    return canonical
            raise UnknownValue(raw, [f for f, _ in self.table])
        if self.kind == "scale":
            if isinstance(raw, bool) or not isinstance(raw, (int, float)):
                raise ValueError(f"expected a number, got {raw!r}")
            return raw * self.factor
        return raw

    def write(self, value: Any) -> Any:
        if value is None:
            return None
        if self.kind == "invert":
            return not value
        if self.kind == "enum":
            for framework, canonical in self.table:
                if canonical == value:
                    return framework
            raise LookupError(value)
        if self.kind == "scale":
            out = value / self.factor
            return int(out) if isinstance(out, float) and out.is_integer() and isinstance(value, int) else out
        return value


def is_close(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        try:
            return math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)
        except OverflowError:  # an int beyond any float: only exact equality can hold
            return bool(a == b)
    return bool(a == b)


def approx_of(value: Any, losses: list[tuple[str, tuple[str, ...]]]) -> Any:
    """`value`, or an Approx naming every loss and the fields they concern (all, if one does not say)."""
    if not losses:
        return value
    fields = (
        () if any(not names for _, names in losses) else tuple(dict.fromkeys(n for _, names in losses for n in names))
    )
    return Approx(value, "; ".join(dict.fromkeys(why for why, _ in losses)), fields, tuple(losses))


GATED_ACTIVATIONS = frozenset({"geglu", "geglu_tanh", "reglu", "swiglu", "bilinear", "glu"})


def rotary_dim_for(fraction: float, head_dim: int) -> Any:
    """The rotary dimension of a fraction of the head width: truncated as int() does (Approx then)."""
    exact = head_dim * fraction
    dim = int(exact)
    if dim != exact:
        return Approx(dim, f"{fraction} x head_dim {head_dim} = {exact} truncated to {dim}")
    return dim


def init_method_std(method: str, sigma: float, num_layers: int, hidden_size: int) -> float | None:
    """Standard deviation each canonical init method (GPT-NeoX's names, megatron/model/init_functions.py)
    implies."""
    if method == "normal":
        return sigma
    if method == "scaled_normal":
        return sigma / math.sqrt(2.0 * num_layers)
    if method == "single_residual_scaled_normal":
        return sigma / math.sqrt(num_layers)
    if method == "small_init":
        return math.sqrt(2.0 / (5.0 * hidden_size))
    if method == "wang_init":
        return 2.0 / (num_layers * math.sqrt(hidden_size))
    return None  # xavier/orthogonal depend on each tensor's shape


def structural_family(
    parallel_residual: bool | None,
    parallel_shared_norm: bool | None,
    norm: str | None,
    activation: str | None,
    moe_num_experts: int | None = None,
    sliding_window: int | None = None,
    qk_norm: bool | None = None,
    sandwich_norm: bool | None = None,
    mla_kv_lora_rank: int | None = None,
    position_embedding: str | None = None,
    embedding_norm: bool | None = None,
) -> str:
    """The family a block structure is known by when no key names one: the parallel GPT-J/NeoX blocks;
    latent attention (DeepSeek); Gemma's sandwich norms (Gemma 3 with qk-norm); experts (Qwen3-MoE
    with qk-norm, else Mixtral); qk-norm (Qwen3); a window on a Llama block (Mistral); Llama's RMSNorm
    or gated MLP; BLOOM's ALiBi with an embedding norm; else GPT-2."""
    if parallel_residual:
        return "gptj" if parallel_shared_norm else "gpt-neox"
    if mla_kv_lora_rank:
        return "deepseek_v2"
    if sandwich_norm:
        return "gemma3" if qk_norm else "gemma2"
    if moe_num_experts and moe_num_experts > 1:
        return "qwen3_moe" if qk_norm else "mixtral"
    llama = norm == "rmsnorm" or activation in GATED_ACTIVATIONS
    if llama and qk_norm:
        return "qwen3"
    if llama:
        return "mistral" if sliding_window else "llama"
    if position_embedding == "alibi" and embedding_norm:
        return "bloom"
    return "gpt2"


STRUCTURE = (
    "parallel_residual",
    "parallel_shared_norm",
    "norm",
    "activation",
    "moe_num_experts",
    "sliding_window",
    "qk_norm",
    "sandwich_norm",
    "mla_kv_lora_rank",
    "position_embedding",
    "embedding_norm",
)


def family_formula(name: str, features: tuple[str, ...]) -> Formula:
    """model.family from the block structure a format holds (`features`, canonical field names without
    `model.`): a family whose telling feature the format cannot hold reads back as another, said on
    writing (NeoX has no sandwich norms: Gemma 2 is Llama's blocks there)."""

    def structural(kw: dict[str, Any]) -> str:
        return structural_family(**{f: kw.get(f) for f in STRUCTURE})

    def read(**kw: Any) -> str:
        return structural(kw)

    def write(**kw: Any) -> Any:
        blocks = structural(kw)
        if blocks != kw["value"]:  # a name the blocks alone do not tell (qwen2 is llama's blocks)
            return Approx({}, f"no key names the model family: its blocks read as {blocks}, not {kw['value']}")
        return {}

    for func, params in ((read, features), (write, ("value", *features))):
        setattr(
            func,
            "__signature__",
            inspect.Signature([inspect.Parameter(p, inspect.Parameter.KEYWORD_ONLY) for p in params]),
        )
    built = Formula(name, read, write, frozenset(features), frozenset({"value", *features}))
    FORMULAS[name] = built
    return built


# the whole structure (a format that holds every telling feature)
DecoderFamily = family_formula("decoder_family", STRUCTURE)


@formula("data_parallel")
class DataParallel:
    """dp = world size / (tensor x pipeline parallel sizes) (a size below 1 counts as 1); must divide evenly."""

    @staticmethod
    def read(world_size: int | None, tensor_size: int | None, pipeline_size: int | None) -> int | None:
        if world_size is None:
            return None
        model_ranks = max(1, tensor_size or 1) * max(1, pipeline_size or 1)
        if world_size % model_ranks:
            raise ValueError(f"world size {world_size} is not divisible by pipe x model parallel size {model_ranks}")
        return world_size // model_ranks

    @staticmethod
    def write(value: int, world_size: int | None, tensor_size: int | None, pipeline_size: int | None) -> Any:
        return ranks_differ(value, *ranks(world_size, [("tensor", tensor_size), ("pipeline", pipeline_size)]))


def ranks_differ(source: int | None, target: int | None, where: str) -> Any:
    """Nothing to write for a derived data-parallel size; a loss when the target splits the world
    differently (the batch rules re-derive micro batch and accumulation for it)."""
    if source is None or target is None or source == target:
        return {}
    return Approx(
        {},
        f"the target runs {target} data-parallel ranks ({where}), the source {source}: micro batch and "
        "accumulation are re-derived for the same global batch",
    )


# ---- a format's scheduler readings and renderings as formula results (schedule.phases)


def as_written(out: dict[str, Any], rendering: Rendering, phases: Any, title: str) -> Any:
    """A writer's keys for a rendering: as they are when exact, else lossy with the largest lr
    difference over the run, where, both lrs (and what the framework does past its own limits)."""
    if rendering.exact:
        return out
    from ..schedule.fields import parse

    detail = "; ".join([rendering.detail(parse(phases), title), *rendering.notes])
    return Approx(out, detail, ("schedule.phases",))


def read_phases(reading: Reading) -> Any:
    """A scheduler's reading as a formula gives schedule.phases: approximate, with the reader's notes,
    when the framework does something its config does not say."""
    phases: Any = reading.schedule.to_json()
    return Approx(phases, "; ".join(reading.notes), ("schedule.phases",)) if reading.notes else phases


def lr_only(out: dict[str, Any], lr: float | None, title: str) -> Any:
    """A writer's keys for an lr whose schedule the source does not determine (its reading says why)."""
    if lr is None:
        return {}
    return Approx(
        out,
        f"the source's lr schedule is unknown: only its lr {lr:g} is written to {title}",
        ("optim.lr", "schedule.phases"),
    )
