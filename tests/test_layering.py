"""The layering of the package, read from its imports (docs/ARCHITECTURE.md draws it).

From the bottom: the foundations (dtypes, devices, backends, hook handles, the runtime settings,
the C modules' loader) import nothing above them; ``_tensor.py`` imports only dtype, device and
size; the autograd core (graph, engine, input buffers, modes) imports no ops, nn, optim or
distributed, and of ``_tensor`` only its public names; the ops build on the tensor and the
autograd core; only ``_C/_configure.py`` reaches into every layer to configure the C. No import
cycle, and few imports inside functions, so that the layers stay what the tree says they are.
"""
from __future__ import annotations

import ast
import os

import pytest

ROOT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "retrograd")

FOUNDATIONS = {"retrograd._dtype", "retrograd._device", "retrograd._size", "retrograd._random", "retrograd._runtime",
               "retrograd._errors", "retrograd.return_types", "retrograd.utils.hooks", "retrograd._C"}
AUTOGRAD_CORE = {f"retrograd.autograd.{m}" for m in ("grad_mode", "anomaly_mode", "graph", "accumulate_grad",
                                                    "variable", "saved_variable", "saved_hooks", "input_buffer",
                                                    "graph_task", "interrupts", "observation", "engine_threads",
                                                    "engine", "watchdog")}
ABOVE_OPS = ("retrograd.nn", "retrograd.optim", "retrograd.distributed", "retrograd.distributions",
             "retrograd.utils.checkpoint", "retrograd.serialization", "retrograd.viz", "retrograd.demo",
             "retrograd.data", "retrograd.__main__")
MAX_FUNCTION_LEVEL_IMPORTS = 30


def _module_name(path):
    rel = os.path.relpath(path, os.path.dirname(ROOT))[:-3].replace(os.sep, ".")
    return rel[:-9] if rel.endswith(".__init__") else rel


def _is_module(name):
    """A Python module or package of the tree, or one of the C extension modules (by their source)."""
    path = os.path.join(os.path.dirname(ROOT), *name.split("."))
    return any(os.path.isfile(p) for p in (path + ".py", os.path.join(path, "__init__.py"), path + ".c"))


def _is_package(name):
    return os.path.isfile(os.path.join(os.path.dirname(ROOT), *name.split("."), "__init__.py"))


def _imports():
    """{module: [(imported module, names taken, in a function?, line)]} for every retrograd module."""
    found = {}
    for dirpath, _, files in os.walk(ROOT):
        for f in files:
            if not f.endswith(".py"):
                continue
            path = os.path.join(dirpath, f)
            name = _module_name(path)
            package = name if f == "__init__.py" else name.rpartition(".")[0]
            tree = ast.parse(open(path, encoding="utf-8").read())
            rows = found[name] = []

            def visit(node, in_function):
                for child in ast.iter_child_nodes(node):
                    inner = in_function or isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                    if isinstance(child, ast.Import):
                        for alias in child.names:
                            if alias.name.startswith("retrograd"):
                                rows.append((alias.name, (), in_function, child.lineno))
                    elif isinstance(child, ast.ImportFrom):
                        if child.level:
                            base = package.split(".")
                            base = base[:len(base) - child.level + 1]
                            target = ".".join(base + ([child.module] if child.module else []))
                        else:
                            target = child.module or ""
                        if target.startswith("retrograd"):
                            for alias in child.names:  # `from pkg import submodule` imports the submodule
                                sub = f"{target}.{alias.name}"
                                if _is_module(sub):
                                    rows.append((sub, (), in_function, child.lineno))
                                else:
                                    rows.append((target, (alias.name,), in_function, child.lineno))
                    visit(child, inner)
            visit(tree, False)
    return found


IMPORTS = _imports()


def _edges(module):
    """The modules that importing ``module`` runs: what it imports, and their enclosing packages outside it."""
    out = set()
    for target, _, _, _ in IMPORTS[module]:
        out.add(target)
        parts = target.split(".")
        for k in range(2, len(parts)):  # a package's __init__ runs first (the root package excepted)
            pkg = ".".join(parts[:k])
            if _is_package(pkg) and not module.startswith(pkg + ".") and module != pkg:
                out.add(pkg)
    return out - {module}


def _violations(modules, allowed):
    return [f"{m} imports {t} (line {line})" for m in sorted(modules) for t, _, _, line in IMPORTS[m]
            if not allowed(t)]


def test_the_imports_are_read():
    assert len(IMPORTS) > 60
    engine = {(t, names) for t, names, _, _ in IMPORTS["retrograd.autograd.engine"]}
    assert ("retrograd.autograd.graph_task", ("CPU_DEVICE",)) in engine  # a name taken from a module
    assert ("retrograd.autograd.grad_mode", ()) in engine  # `from . import grad_mode`: the module itself
    assert ("retrograd._C._engine_loop", ()) in {(t, n) for t, n, _, _ in IMPORTS["retrograd._C"]}


def test_backends_import_nothing_of_retrograd_but_themselves():
    backends = [m for m in IMPORTS if m.startswith("retrograd.backends")]
    assert backends
    assert _violations(backends, lambda t: t.startswith("retrograd.backends")) == []


def test_the_foundations_import_only_foundations():
    allowed = FOUNDATIONS | {m for m in IMPORTS if m.startswith("retrograd.backends")} | {
        "retrograd._C._engine_loop", "retrograd._C._op_call", "retrograd._C._array_pool"}
    assert _violations(FOUNDATIONS, lambda t: t in allowed) == []


def test_the_tensor_imports_only_dtype_device_and_size():
    assert _violations(["retrograd._tensor"],
                       lambda t: t in ("retrograd._dtype", "retrograd._device", "retrograd._size")) == []


def test_the_autograd_core_imports_no_ops_nn_optim_or_distributed_nor_tensor_internals():
    forbidden = ("retrograd.ops", "retrograd._C._configure", "retrograd.autograd.function",
                 "retrograd.autograd.functional", "retrograd.autograd.gradcheck", "retrograd.autograd._api") + ABOVE_OPS
    assert _violations(AUTOGRAD_CORE, lambda t: not t.startswith(forbidden)) == []
    public = {"Tensor", "VersionCounter"}
    internals = [f"{m} takes {names} from retrograd._tensor" for m in sorted(AUTOGRAD_CORE)
                 for t, names, _, _ in IMPORTS[m] if t == "retrograd._tensor" and not set(names) <= public]
    assert internals == []
    assert "retrograd.autograd" not in {t for m in AUTOGRAD_CORE for t, _, _, _ in IMPORTS[m]}


def test_the_ops_build_on_the_tensor_and_the_graph_only():
    ops = [m for m in IMPORTS if m.startswith("retrograd.ops")]
    forbidden = ("retrograd._C._configure", "retrograd.autograd.engine", "retrograd.autograd.functional") + ABOVE_OPS
    assert _violations(ops, lambda t: not t.startswith(forbidden)) == []


def test_only_the_configure_module_crosses_the_layers_into_the_c():
    # The extension modules are loaded by retrograd._C alone; _configure is imported by the root.
    users = {m for m, rows in IMPORTS.items() for t, _, _, _ in rows
             if t in ("retrograd._C._engine_loop", "retrograd._C._op_call", "retrograd._C._array_pool")}
    assert users == {"retrograd._C"}
    configurers = {m for m, rows in IMPORTS.items() for t, _, _, _ in rows if t == "retrograd._C._configure"}
    assert configurers == {"retrograd"}


def test_no_module_imports_the_package_root():
    assert [m for m, rows in IMPORTS.items() for t, _, _, _ in rows if t == "retrograd"] == []


def test_no_import_cycle():
    # Tarjan's strongly connected components over module -> imported module (function-level imports
    # count: a cycle broken by an import inside a function is a cycle still).
    graph = {m: {t for t in _edges(m) if t in IMPORTS} for m in IMPORTS if m != "retrograd"}
    index, low, stack, on_stack, cycles = {}, {}, [], set(), []
    counter = [0]

    def strongconnect(v):
        work = [(v, iter(sorted(graph[v])))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        while work:
            node, children = work[-1]
            for w in children:
                if w not in graph:
                    continue
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                    break
                if w in on_stack:
                    low[node] = min(low[node], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        component.append(w)
                        if w == node:
                            break
                    if len(component) > 1:
                        cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            strongconnect(v)
    assert cycles == []


def test_few_imports_inside_functions():
    inner = [f"{m}:{line} {t}" for m in sorted(IMPORTS) for t, _, in_function, line in IMPORTS[m] if in_function]
    assert len(inner) <= MAX_FUNCTION_LEVEL_IMPORTS, "\n".join(inner)


@pytest.mark.parametrize("module", sorted(AUTOGRAD_CORE))
def test_each_core_module_stays_readable(module):
    path = os.path.join(os.path.dirname(ROOT), *module.split(".")) + ".py"
    assert sum(1 for _ in open(path, encoding="utf-8")) <= 600, f"{module} is over 600 lines"
