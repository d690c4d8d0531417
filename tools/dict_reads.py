"""Which config keys a program reads from a nested dict, found with `ast` (nothing is executed).

Frameworks that read their config as a plain dict (Cerebras Model Zoo before the trainer layout,
DeepSpeed's runtime config) spread the reads over many functions:

    oparams = params["optimizer"]                              # oparams is the path ("optimizer",)
    wd = oparams.get("weight_decay_rate", 0.0)                  # read optimizer.weight_decay_rate = 0.0
    get_scalar_param(param_dict[FP16], FP16_LOSS_SCALE, 0)      # read fp16.loss_scale = 0 (constants resolved)
    DeepSpeedZeroConfig(**param_dict["zero_optimization"])      # every field of that model, under the path

The analysis is flow-insensitive and per function: a local name stands for every path ever
assigned to it. Paths flow into other functions through call arguments (module functions, methods
of the same class, class constructors) and into `self.<attr>`, repeated until nothing changes.
Pydantic models and dataclasses built with `**dict` contribute their fields (with type, default,
alias and deprecation), nested models as sub-paths. Reads with keys that are not constants are
ignored: the result is what the source names, not everything a file could hold.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from history_common import NO_DEFAULT, JSON, NotLiteral, literal, type_text, value_of

Path = tuple[str, ...]

# Accessor helpers that read dict[key] with a default: name -> (dict arg, key arg, default arg)
ACCESSORS = {
    "get_scalar_param": (0, 1, 2),
    "get_dict_param": (0, 1, 2),
    "get_list_param": (0, 1, 2),
}
MODEL_BASES = {"BaseModel", "DeepSpeedConfigModel", "BaseConfig"}
MAX_DEPTH = 8  # deeper paths come from generic tree walkers, not from named keys


@dataclass
class Read:
    path: Path
    default: JSON
    where: str  # module path
    type: str | None = None
    extra: dict[str, JSON] = field(default_factory=dict)
    function: str = ""  # qualified name of the reading function ("" for model fields)


@dataclass
class Function:
    module: str
    qualname: str
    node: ast.FunctionDef | ast.AsyncFunctionDef
    cls: str | None  # enclosing class name, for self.<method>() and self.<attr>
    params: list[str]
    env: dict[str, set[Path]] = field(default_factory=dict)
    key: str = ""
    consts: dict[str, JSON] = field(default_factory=dict)
    returns: set[Path] = field(default_factory=set)  # paths the function returns
    seeds: dict[str, set[Path]] = field(default_factory=dict)  # assumed by the caller of Program.seed
    incoming: dict[str, set[Path]] = field(default_factory=dict)  # what call sites pass
    # Calls that pass a module constant by keyword (a key/default table) are analysed per call site:
    # (caller, line) -> (paths per parameter, constants per parameter)
    sites: dict[tuple[str, int], tuple[dict[str, set[Path]], dict[str, JSON]]] = field(default_factory=dict)


@dataclass
class ClassInfo:
    module: str
    name: str
    node: ast.ClassDef
    bases: list[str]


class Program:
    """The modules of one release, their constants, functions and classes."""

    def __init__(self, modules: Mapping[str, ast.Module], package_roots: Iterable[str] = ()) -> None:
        self.modules = dict(modules)
        self.package_roots = tuple(package_roots)  # e.g. "src/" stripped to get dotted module names
        self.dotted = {self._dotted(path): path for path in self.modules}
        self._consts: dict[str, dict[str, JSON]] = {}
        self.functions: dict[str, Function] = {}
        self.by_name: dict[str, list[Function]] = {}
        self.classes: dict[str, list[ClassInfo]] = {}
        self.imports: dict[str, dict[str, str]] = {}  # module -> local name -> imported simple name
        for path, tree in sorted(self.modules.items()):
            self._index(path, tree)
        self.attrs: dict[tuple[str, str, str], set[Path]] = {}  # (module, class, attr) -> paths
        self.method_paths: dict[str, Path] = {}  # self.<name>() accessors known to return a config section
        self.fixed_attrs: set[tuple[str, str, str]] = set()  # attrs set by the caller (kept across reruns)
        self.opaque: tuple[str, ...] = ()  # module path parts whose functions are not followed into
        self.reads: list[Read] = []

    # -- indexing ---------------------------------------------------------------------------

    def _dotted(self, path: str) -> str:
        for root in self.package_roots:
            if path.startswith(root):
                path = path[len(root) :]
        name = path[:-3] if path.endswith(".py") else path
        if name.endswith("/__init__"):
            name = name[: -len("/__init__")]
        return name.replace("/", ".")

    def _index(self, path: str, tree: ast.Module) -> None:
        names: dict[str, str] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom):
                for alias in stmt.names:
                    if alias.name != "*":
                        names[alias.asname or alias.name] = alias.name
            elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._add_function(path, stmt, None, stmt.name)
            elif isinstance(stmt, ast.ClassDef):
                bases = [ast.unparse(b.value if isinstance(b, ast.Subscript) else b).split(".")[-1] for b in stmt.bases]
                self.classes.setdefault(stmt.name, []).append(ClassInfo(path, stmt.name, stmt, bases))
                for item in stmt.body:
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        self._add_function(path, item, stmt.name, f"{stmt.name}.{item.name}")
        self.imports[path] = names

    def _add_function(
        self,
        module: str,
        node: ast.FunctionDef | ast.AsyncFunctionDef,
        cls: str | None,
        qual: str,
        nested: bool = False,
    ) -> None:
        args = node.args
        params = [a.arg for a in args.posonlyargs + args.args + args.kwonlyargs]
        fn = Function(module, qual, node, cls, params, key=f"{module}:{qual}")
        self.functions[fn.key] = fn
        if not nested:
            self.by_name.setdefault(node.name if cls is None else qual, []).append(fn)
        for stmt in _inner_functions(node):  # helpers defined inside: called by name from the enclosing body
            if f"{module}:{qual}.{stmt.name}" not in self.functions:
                self._add_function(module, stmt, cls, f"{qual}.{stmt.name}", nested=True)

    def constants(self, module: str, seen: frozenset[str] = frozenset()) -> dict[str, JSON]:
        """Module-level literal constants, including those imported from scanned modules."""
        if module in self._consts:
            return self._consts[module]
        if module in seen:
            return {}
        tree = self.modules[module]
        names: dict[str, JSON] = {}
        for stmt in tree.body:
            if isinstance(stmt, ast.ImportFrom):
                source = self._resolve_import(module, stmt)
                if source is None:
                    continue
                theirs = self.constants(source, seen | {module})
                for alias in stmt.names:
                    if alias.name == "*":
                        names.update(theirs)
                    elif alias.name in theirs:
                        names[alias.asname or alias.name] = theirs[alias.name]
            elif isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
                try:
                    names[stmt.targets[0].id] = literal(stmt.value, names)
                except NotLiteral:
                    pass
        self._consts[module] = names
        return names

    def _resolve_import(self, module: str, stmt: ast.ImportFrom) -> str | None:
        if stmt.level:
            base = self._dotted(module).split(".")
            is_package = module.endswith("__init__.py")
            base = base if is_package else base[:-1]
            if stmt.level > 1:
                base = base[: len(base) - (stmt.level - 1)]
            dotted = ".".join(base + ([stmt.module] if stmt.module else []))
        else:
            dotted = stmt.module or ""
        return self.dotted.get(dotted)

    def model_class(self, name: str) -> ClassInfo | None:
        """A pydantic model / config dataclass by simple name (the first one indexed)."""
        for info in self.classes.get(name, []):
            if self._is_model(info, set()):
                return info
        return None

    def _is_model(self, info: ClassInfo, seen: set[str]) -> bool:
        if any(ast.unparse(d).split("(")[0].split(".")[-1] == "dataclass" for d in info.node.decorator_list):
            return True
        for base in info.bases:
            if base in MODEL_BASES:
                return True
            if base in seen:
                continue
            seen.add(base)
            if any(self._is_model(b, seen) for b in self.classes.get(base, [])):
                return True
        return False

    # -- the analysis ------------------------------------------------------------------------

    def seed(self, predicate: Callable[[Function], Mapping[str, Path]]) -> None:
        """Assumed paths for parameters: predicate(function) -> {param: path}.

        An assumption is dropped when every call site that passes a config path for that parameter
        passes a different one (a helper named `params` that its callers give one section)."""
        for fn in self.functions.values():
            for param, path in predicate(fn).items():
                if param in fn.params:
                    fn.seeds.setdefault(param, set()).add(path)

    def run(self, rounds: int = 12) -> list[Read]:
        dropped: set[tuple[str, str, Path]] = set()
        for _ in range(4):
            self._fixpoint(rounds, dropped)
            contradicted = {
                (key, param, path)
                for key, fn in self.functions.items()
                for param, paths in fn.seeds.items()
                for path in paths
                if fn.incoming.get(param) and path not in fn.incoming[param]
            } - dropped
            if not contradicted:
                break
            dropped |= contradicted
        self.reads = []
        self._model_reads_seen: set[tuple[str, Path]] = set()
        for fn in self.functions.values():
            if fn.env or fn.cls and (self.method_paths or any(k[:2] == (fn.module, fn.cls) for k in self.attrs)):
                _FunctionPass(self, fn).collect()
            for site_env, site_consts in fn.sites.values():
                clone = Function(
                    fn.module,
                    fn.qualname,
                    fn.node,
                    fn.cls,
                    fn.params,
                    env={k: set(v) for k, v in site_env.items()},
                    consts=dict(site_consts),
                )
                for _ in range(3):
                    _FunctionPass(self, clone).propagate_locally()
                _FunctionPass(self, clone).collect()
        return self.reads

    def _fixpoint(self, rounds: int, dropped: set[tuple[str, str, Path]]) -> None:
        self.attrs = {k: v for k, v in self.attrs.items() if k in self.fixed_attrs}
        for key, fn in self.functions.items():
            fn.env, fn.returns, fn.sites, fn.incoming, fn.consts = {}, set(), {}, {}, {}
            for param, paths in fn.seeds.items():
                kept = {p for p in paths if (key, param, p) not in dropped}
                if kept:
                    fn.env[param] = set(kept)
        self.dirty: dict[str, None] = {}  # worklist (insertion-ordered set) of function keys
        self.class_functions: dict[tuple[str, str | None], list[str]] = {}
        for key, fn in self.functions.items():
            self.class_functions.setdefault((fn.module, fn.cls), []).append(key)
            if fn.env or (self.method_paths and fn.cls) or (fn.module, fn.cls) in {(m, c) for m, c, _ in self.attrs}:
                self.dirty[key] = None
        budget = rounds * max(1, len(self.functions))
        while self.dirty and budget > 0:
            key = next(iter(self.dirty))
            del self.dirty[key]
            budget -= 1
            _FunctionPass(self, self.functions[key]).propagate()

    def touch(self, key: str) -> None:
        self.dirty[key] = None

    def touch_class(self, module: str, cls: str | None) -> None:
        for key in self.class_functions.get((module, cls), ()):
            self.dirty[key] = None

    def touch_all(self) -> None:
        for key, fn in self.functions.items():
            if fn.env or fn.cls:
                self.dirty[key] = None

    def _state(self) -> int:
        return (
            sum(len(v) for fn in self.functions.values() for v in fn.env.values())
            + sum(len(v) for v in self.attrs.values())
            + sum(len(fn.returns) for fn in self.functions.values())
        )

    def attach_model(self, info: ClassInfo, path: Path, depth: int = 0) -> None:
        """Every field of a model class (and its bases) as a read under path."""
        marker = (info.module + ":" + info.name, path)
        if marker in self._model_reads_seen or depth > 8:
            return
        self._model_reads_seen.add(marker)
        consts = self.constants(info.module)
        for name, annotation, value in self.model_fields(info):
            default, extra = _field_default(value, consts)
            nested = self._nested_model(annotation)
            key = path + (name,)
            self.reads.append(Read(key, default, info.module, type_text(annotation), {"model": info.name, **extra}))
            alias = extra.get("alias")
            if isinstance(alias, str) and alias != name:
                self.reads.append(
                    Read(
                        path + (alias,),
                        default,
                        info.module,
                        type_text(annotation),
                        {"model": info.name, "alias_of": name},
                    )
                )
            if nested is not None:
                self.attach_model(nested, key, depth + 1)

    def model_fields(
        self, info: ClassInfo, seen: frozenset[str] = frozenset()
    ) -> list[tuple[str, ast.expr, ast.expr | None]]:
        out: list[tuple[str, ast.expr, ast.expr | None]] = []
        for base in info.bases:
            if base in seen:
                continue
            parent = self.model_class(base)
            if parent is not None:
                out.extend(self.model_fields(parent, seen | {info.name}))
        for stmt in info.node.body:
            if isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name):
                name = stmt.target.id
                if name.startswith("_") or "ClassVar" in ast.unparse(stmt.annotation):
                    continue
                out = [f for f in out if f[0] != name]
                out.append((name, stmt.annotation, stmt.value))
        return out

    def _nested_model(self, annotation: ast.expr) -> ClassInfo | None:
        """The model class a field holds: X, Optional[X], Union[X, None], 'X'."""
        node = annotation
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            try:
                node = ast.parse(node.value, mode="eval").body
            except SyntaxError:
                return None
        if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] in ("Optional", "Union"):
            inner = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
            models = [m for m in (self._nested_model(e) for e in inner) if m is not None]
            return models[0] if len(models) == 1 else None
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitOr):
            models = [m for m in (self._nested_model(node.left), self._nested_model(node.right)) if m is not None]
            return models[0] if len(models) == 1 else None
        if isinstance(node, (ast.Name, ast.Attribute)):
            return self.model_class(ast.unparse(node).split(".")[-1])
        return None


def _field_default(value: ast.expr | None, consts: Mapping[str, JSON]) -> tuple[JSON, dict[str, JSON]]:
    """Default and facts of a model field: plain default, Field(default, alias=, deprecated=, ...)."""
    extra: dict[str, JSON] = {}
    if value is None:
        return NO_DEFAULT, extra
    if isinstance(value, ast.Call) and ast.unparse(value.func).split(".")[-1] in ("Field", "field", "config_field"):
        default: JSON = NO_DEFAULT
        if value.args:
            default = _default_value(value.args[0], consts)
        for kw in value.keywords:
            if kw.arg == "default":
                default = _default_value(kw.value, consts)
            elif kw.arg == "default_factory":
                default = _factory(kw.value)
            elif kw.arg in ("alias", "deprecated", "new_param"):
                extra[kw.arg] = value_of(kw.value, consts)
            elif kw.arg == "json_schema_extra" and isinstance(kw.value, ast.Dict):
                for k, v in zip(kw.value.keys, kw.value.values):
                    if isinstance(k, ast.Constant) and k.value in ("deprecated", "new_param"):
                        extra[k.value] = value_of(v, consts)
        return default, extra
    return _default_value(value, consts), extra


def _default_value(node: ast.expr, consts: Mapping[str, JSON]) -> JSON:
    if isinstance(node, ast.Constant) and node.value is Ellipsis:
        return NO_DEFAULT  # Field(...): required
    if isinstance(node, ast.Name) and node.id == "required":
        return NO_DEFAULT  # Cerebras' `required` sentinel
    if isinstance(node, ast.Call) and ast.unparse(node.func).split(".")[-1] == "pp_int" and node.args:
        inner = value_of(node.args[0], consts)  # DeepSpeed's pretty-printed int: the number itself
        return int(inner) if isinstance(inner, float) and inner.is_integer() else inner
    return value_of(node, consts)


def _factory(node: ast.expr) -> JSON:
    if isinstance(node, ast.Name) and node.id in ("list", "dict"):
        return [] if node.id == "list" else {}
    if isinstance(node, ast.Lambda):
        return value_of(node.body)
    return {"expr": ast.unparse(node) + "()"}


def _stutters(path: Path) -> bool:
    """x = x["base"] in a loop walks a chain, not a key: base.base.base"""
    return any(a == b != "*" for a, b in zip(path, path[1:]))


_NODES: dict[int, tuple[ast.AST, list[ast.AST]]] = {}


_INNER: dict[int, tuple[ast.AST, list[ast.FunctionDef | ast.AsyncFunctionDef]]] = {}


def _inner_functions(node: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """Functions defined directly inside a function (cached per parsed function)."""
    cached = _INNER.get(id(node))
    if cached is None or cached[0] is not node:
        found: list[ast.FunctionDef | ast.AsyncFunctionDef] = []
        todo = list(ast.iter_child_nodes(node))
        while todo:
            child = todo.pop()
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found.append(child)  # its own inner functions are found when it is added
            elif not isinstance(child, (ast.ClassDef, ast.Lambda)):
                todo.extend(ast.iter_child_nodes(child))
        found.sort(key=lambda f: (f.lineno, f.col_offset))
        cached = (node, found)
        _INNER[id(node)] = cached
    return cached[1]


def _size(env: dict[str, set[Path]]) -> int:
    return sum(len(v) for v in env.values())


_KINDS = (
    ast.Assign,
    ast.AnnAssign,
    ast.NamedExpr,
    ast.For,
    ast.comprehension,
    ast.Return,
    ast.Call,
    ast.Subscript,
    ast.Compare,
    ast.DictComp,
)


def _nodes(fn_node: ast.AST) -> list[ast.AST]:
    """The nodes of a function the passes look at, computed once per parsed function (trees are
    shared across releases)."""
    cached = _NODES.get(id(fn_node))
    if cached is None or cached[0] is not fn_node:
        cached = (fn_node, [n for n in ast.walk(fn_node) if isinstance(n, _KINDS)])
        _NODES[id(fn_node)] = cached
    return cached[1]


_LOOPS: dict[int, tuple[ast.AST, list[ast.For | ast.comprehension]]] = {}


def _loops(fn_node: ast.AST) -> list[ast.For | ast.comprehension]:
    cached = _LOOPS.get(id(fn_node))
    if cached is None or cached[0] is not fn_node:
        cached = (fn_node, [n for n in _nodes(fn_node) if isinstance(n, (ast.For, ast.comprehension))])
        _LOOPS[id(fn_node)] = cached
    return cached[1]


class _FunctionPass:
    """One walk over a function: propagate paths (propagate) or record reads (collect)."""

    def __init__(self, program: Program, fn: Function) -> None:
        self.p = program
        self.fn = fn
        self.consts = {**program.constants(fn.module), **fn.consts}
        self.collecting = False
        # loop variables over constant keys: for k in (A, B) / for k, v in DEFAULTS.items()
        self.loop_keys: dict[str, list[str]] = {}
        self.loop_values: dict[str, dict[str, JSON]] = {}
        for node in _loops(fn.node):
            self._loop(node.target, node.iter)

    def _loop(self, target: ast.expr, iterable: ast.expr) -> None:
        items = False
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args:
            items = iterable.func.attr == "items"
            if iterable.func.attr in ("items", "keys"):
                iterable = iterable.func.value
        try:
            value = literal(iterable, self.consts)
        except NotLiteral:
            return
        if isinstance(value, dict):
            keys = [k for k in value if isinstance(k, str)]
        elif isinstance(value, list):
            keys = [k for k in value if isinstance(k, str)]
        else:
            return
        if items and isinstance(target, ast.Tuple) and len(target.elts) == 2 and isinstance(value, dict):
            k, v = target.elts
            if isinstance(k, ast.Name):
                self.loop_keys[k.id] = keys
            if isinstance(v, ast.Name):
                self.loop_values[v.id] = {key: value[key] for key in keys}
        elif isinstance(target, ast.Name):
            self.loop_keys[target.id] = keys

    # -- paths of an expression ------------------------------------------------------------

    def keys(self, node: ast.expr) -> list[str]:
        """The constant key(s) an expression names (several for a loop over constant keys)."""
        if isinstance(node, ast.Name) and node.id in self.loop_keys:
            return self.loop_keys[node.id]
        try:
            value = literal(node, self.consts)
        except NotLiteral:
            return []
        return [value] if isinstance(value, str) else []

    def default(self, node: ast.expr, key: str) -> JSON:
        if isinstance(node, ast.Name) and node.id in self.loop_values:
            return self.loop_values[node.id].get(key, NO_DEFAULT)
        return value_of(node, self.consts)

    def sub(self, node: ast.expr, key_node: ast.expr) -> set[Path]:
        return {p + (k,) for p in self.paths(node) for k in self.keys(key_node)}

    def paths(self, node: ast.expr | None) -> set[Path]:
        return {p for p in self._paths(node) if len(p) <= MAX_DEPTH and p.count("*") <= 2 and not _stutters(p)}

    def _paths(self, node: ast.expr | None) -> set[Path]:
        if node is None:
            return set()
        if isinstance(node, ast.Name):
            return set(self.fn.env.get(node.id, ()))
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "self"
            and self.fn.cls
        ):
            found = set(self.p.attrs.get((self.fn.module, self.fn.cls, node.attr), ()))
            prop = self.p.functions.get(f"{self.fn.module}:{self.fn.cls}.{node.attr}")
            if prop is not None and any(ast.unparse(d) == "property" for d in prop.node.decorator_list):
                found |= prop.returns  # a @property that returns a config section
            return found
        if isinstance(node, ast.Subscript):
            return self.sub(node.value, node.slice)
        if isinstance(node, ast.BoolOp):
            return set().union(*(self.paths(v) for v in node.values))
        if isinstance(node, ast.IfExp):
            return self.paths(node.body) | self.paths(node.orelse)
        if isinstance(node, ast.DictComp):
            return self._dictcomp(node)
        if isinstance(node, ast.Dict):
            return self._dict_slice(node)
        if isinstance(node, ast.Call):
            return self._call_paths(node)
        return set()

    def _call_paths(self, node: ast.Call) -> set[Path]:
        func = node.func
        if isinstance(func, ast.Attribute):
            if func.attr in ("get", "pop", "setdefault") and node.args:
                return self.sub(func.value, node.args[0])
            if func.attr == "copy" and not node.args:
                return self.paths(func.value)
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and func.attr in self.p.method_paths
            and not node.args
        ):
            return {self.p.method_paths[func.attr]}
        name = ast.unparse(func).split(".")[-1]
        if name in ("copy", "deepcopy", "dict") and len(node.args) == 1 and not node.keywords:
            return self.paths(node.args[0])
        returned: set[Path] = set()
        for callee, _ in self._callees(node):
            returned |= callee.returns
        if returned:
            return returned
        if name in ACCESSORS:
            d, k, _ = ACCESSORS[name]
            if len(node.args) > k:
                return self.sub(node.args[d], node.args[k])
        return set()

    def _dict_slice(self, node: ast.Dict) -> set[Path]:
        """{"lr": p["lr"], "x": p.get("x", 0)} re-packs keys of p under their own names: it stands for p."""
        parents: set[Path] = set()
        for k, v in zip(node.keys, node.values):
            if k is None or v is None:
                continue
            names = self.keys(k)
            for path in self.paths(v):
                if len(names) == 1 and path and path[-1] == names[0]:
                    parents.add(path[:-1])
        return parents

    def _dictcomp(self, node: ast.DictComp) -> set[Path]:
        """{k: d.get(k, {}) for k in (...)} is a slice of d: it stands for d's path."""
        gen = node.generators[0]
        value = node.value
        if not isinstance(gen.target, ast.Name):
            return set()
        target = gen.target.id
        inner: ast.expr | None = None
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "get"
            and value.args
        ):
            if isinstance(value.args[0], ast.Name) and value.args[0].id == target:
                inner = value.func.value
        elif isinstance(value, ast.Subscript) and isinstance(value.slice, ast.Name) and value.slice.id == target:
            inner = value.value
        out = self.paths(inner)
        if out and self.collecting and isinstance(gen.iter, (ast.Tuple, ast.List)):
            for elt in gen.iter.elts:
                for key in self.keys(elt):
                    for p in out:
                        self.read(p + (key,), NO_DEFAULT)
        return out

    # -- propagation ----------------------------------------------------------------------------

    def propagate(self) -> None:
        before = _size(self.fn.env)
        returns = len(self.fn.returns)
        for node in _nodes(self.fn.node):
            if isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)):
                value = node.value
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                if value is None:
                    continue
                paths = self.paths(value)
                if not paths:
                    continue
                for target in targets:
                    self._bind(target, paths)
            elif isinstance(node, (ast.For, ast.comprehension)):
                self._bind_loop(node.target, node.iter)
            elif isinstance(node, ast.Return) and node.value is not None:
                self.fn.returns |= self.paths(node.value)
            elif isinstance(node, ast.Call):
                self._into_callee(node)
        if _size(self.fn.env) != before and self.fn.key:
            self.p.touch(self.fn.key)  # new local bindings: another pass may find more
        if len(self.fn.returns) != returns:
            self.p.touch_all()  # callers of this function see new paths (rare: coarse is fine)

    def _bind_loop(self, target: ast.expr, iterable: ast.expr) -> None:
        """for x in section (a list of dicts): x is section.*; for k, v in section.items(): v is section.*"""
        items = False
        if (
            isinstance(iterable, ast.Call)
            and not iterable.keywords
            and len(iterable.args) == 1
            and isinstance(iterable.func, ast.Name)
            and iterable.func.id == "enumerate"
        ):
            iterable = iterable.args[0]
            target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else target
        if isinstance(iterable, ast.Call) and isinstance(iterable.func, ast.Attribute) and not iterable.args:
            method = iterable.func
            if method.attr not in ("values", "items"):
                return
            items = method.attr == "items"
            iterable = method.value
        # a loop over the whole config or over items of items is a generic walker, not a list of sections
        paths = {p + ("*",) for p in self.paths(iterable) if p and p[-1] != "*"}
        if not paths:
            return
        if items:
            if isinstance(target, ast.Tuple) and len(target.elts) == 2:
                self._bind(target.elts[1], paths)
        else:
            self._bind(target, paths)

    def propagate_locally(self) -> None:
        """Bindings inside this function only (for a per-call-site copy)."""
        for node in _nodes(self.fn.node):
            if isinstance(node, (ast.Assign, ast.AnnAssign)) and node.value is not None:
                paths = self.paths(node.value)
                if paths:
                    for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                        if isinstance(target, ast.Name):
                            self.fn.env.setdefault(target.id, set()).update(paths)

    def _bind(self, target: ast.expr, paths: set[Path]) -> None:
        if isinstance(target, ast.Name):
            self.fn.env.setdefault(target.id, set()).update(paths)
        elif (
            isinstance(target, ast.Attribute)
            and isinstance(target.value, ast.Name)
            and target.value.id == "self"
            and self.fn.cls
        ):
            known = self.p.attrs.setdefault((self.fn.module, self.fn.cls, target.attr), set())
            if not paths <= known:
                known.update(paths)
                if hasattr(self.p, "dirty"):
                    self.p.touch_class(self.fn.module, self.fn.cls)

    def _callees(self, node: ast.Call) -> list[tuple[Function, int]]:
        """Functions a call may reach, with the offset of the first positional parameter."""
        func = node.func
        out: list[tuple[Function, int]] = []
        if isinstance(func, ast.Name):
            scope = self.fn.qualname
            while True:  # a helper defined in this function or an enclosing one
                inner = self.p.functions.get(f"{self.fn.module}:{scope}.{func.id}")
                if inner is not None:
                    return [(inner, 0)]
                if "." not in scope:
                    break
                scope = scope.rsplit(".", 1)[0]
            name = self.p.imports.get(self.fn.module, {}).get(func.id, func.id)
            local = self.p.functions.get(f"{self.fn.module}:{name}")
            if local is not None:
                return [(local, 0)]
            for fn in self.p.by_name.get(name, []):
                out.append((fn, 0))
            for info in self.p.classes.get(name, []):
                init = self._method(info, "__init__")
                if init is not None:
                    out.append((init, 1))
        elif (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id == "self"
            and self.fn.cls
        ):
            for info in self.p.classes.get(self.fn.cls, []):
                if info.module == self.fn.module:
                    method = self._method(info, func.attr)
                    if method is not None:
                        out.append((method, 1))
        elif isinstance(func, ast.Attribute) and func.attr == "__init__" and isinstance(func.value, ast.Call):
            pass  # super().__init__(...): the base class reads what it is given
        return out

    def _method(self, info: ClassInfo, name: str, depth: int = 0) -> Function | None:
        fn = self.p.functions.get(f"{info.module}:{info.name}.{name}")
        if fn is not None or depth > 5:
            return fn
        for base in info.bases:
            for parent in self.p.classes.get(base, []):
                found = self._method(parent, name, depth + 1)
                if found is not None:
                    return found
        return None

    def _into_callee(self, node: ast.Call) -> None:
        args = [(i, self.paths(a)) for i, a in enumerate(node.args) if not isinstance(a, ast.Starred)]
        kwargs = [(kw.arg, self.paths(kw.value)) for kw in node.keywords if kw.arg is not None]
        if not any(p for _, p in args) and not any(p for _, p in kwargs):
            return
        consts: dict[str, JSON] = {}
        for kw in node.keywords:
            if kw.arg is not None and isinstance(kw.value, ast.Name) and kw.value.id in self.consts:
                consts[kw.arg] = self.consts[kw.value.id]
        for callee, offset in self._callees(node):
            if callee is self.fn or any(part in callee.module for part in self.p.opaque):
                continue  # a recursive walker over the whole tree names no key; opaque code is read otherwise
            if any(name in callee.params for name in consts):
                site_env: dict[str, set[Path]] = {}
                for i, paths in args:
                    if paths and i + offset < len(callee.params):
                        site_env.setdefault(callee.params[i + offset], set()).update(paths)
                for name, paths in kwargs:
                    if paths and name in callee.params:
                        site_env.setdefault(name, set()).update(paths)
                site_consts = {k: v for k, v in consts.items() if k in callee.params}
                callee.sites[(self.fn.module + ":" + self.fn.qualname, node.lineno)] = (site_env, site_consts)
                continue
            before = _size(callee.env)
            for i, paths in args:
                if paths and i + offset < len(callee.params):
                    callee.env.setdefault(callee.params[i + offset], set()).update(paths)
                    callee.incoming.setdefault(callee.params[i + offset], set()).update(paths)
            for name, paths in kwargs:
                if paths and name in callee.params:
                    callee.env.setdefault(name, set()).update(paths)
                    callee.incoming.setdefault(name, set()).update(paths)
            if _size(callee.env) != before and callee.key and hasattr(self.p, "dirty"):
                self.p.touch(callee.key)

    # -- reads --------------------------------------------------------------------------------

    def read(self, path: Path, default: JSON) -> None:
        self.p.reads.append(Read(path, default, self.fn.module, None, {}, self.fn.qualname))

    def collect(self) -> None:
        self.collecting = True
        for node in _nodes(self.fn.node):
            if isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load):
                for path in self.sub(node.value, node.slice):
                    self.read(path, NO_DEFAULT)
            elif isinstance(node, ast.Call):
                self._collect_call(node)
            elif isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.In, ast.NotIn)):
                container = node.comparators[0]
                if (
                    isinstance(container, ast.Call)
                    and isinstance(container.func, ast.Attribute)
                    and container.func.attr == "keys"
                ):
                    container = container.func.value
                for path in self.sub(container, node.left):
                    self.read(path, NO_DEFAULT)
            elif isinstance(node, ast.DictComp):
                self._dictcomp(node)

    def _collect_call(self, node: ast.Call) -> None:
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in ("get", "pop", "setdefault") and node.args:
            bases = self.paths(func.value)
            for key in self.keys(node.args[0]) if bases else []:
                if len(node.args) > 1:
                    default = self.default(node.args[1], key)
                elif func.attr == "get":
                    default = None
                else:
                    default = NO_DEFAULT
                for p in bases:
                    self.read(p + (key,), default)
            return
        name = ast.unparse(func).split(".")[-1]
        if name in ACCESSORS:
            d, k, dflt = ACCESSORS[name]
            if len(node.args) > k:
                for key in self.keys(node.args[k]):
                    default = self.default(node.args[dflt], key) if len(node.args) > dflt else None
                    for p in self.paths(node.args[d]):
                        self.read(p + (key,), default)
            return
        info = self.p.model_class(name) if isinstance(func, (ast.Name, ast.Attribute)) else None
        if info is not None:
            for kw in node.keywords:
                if kw.arg is None:  # Model(**section)
                    for p in self.paths(kw.value):
                        self.p.attach_model(info, p)
