"""chainrule's modules import downward only: base -> core -> ops -> autograd -> nn/optim/... ->
viz -> the package -> cli.

Read from the source (``ast``), not by importing: every module-level import of a chainrule module
must go to the same layer or below, and the module-level imports must have no cycle. Imports
inside functions (kept lazy to dodge a cycle, or for an optional dependency) may not go upward
either, except those listed in ``UPWARD_IN_FUNCTIONS`` (empty since issue 13 took the last one
off: a view's history is installed into ``_tensor`` by ``ops.inplace``); a fixed entry must be
taken off it.
"""

from __future__ import annotations

import ast
from pathlib import Path

import chainrule

PACKAGE = Path(chainrule.__file__).parent

# (layer, module prefixes): a module is in the layer of its longest matching prefix.
LAYERS: list[tuple[int, tuple[str, ...]]] = [
    (
        0,
        (
            "_dtype",
            "_size",
            "_backend",
            "_strides",
            "_special",
            "_cephes",
            "_frames",
            "_printing",
            "_return_types",
            "_finfo",
            "_dlpack",
            "_meta",
        ),
    ),
    # Tensor, nodes, grad mode, saved-tensor hooks and the version-check messages: what every
    # op needs to record.
    # (and the __torch_function__ protocol, which Tensor's methods and the ops consult)
    (
        1,
        (
            "_tensor",
            "autograd.grad_mode",
            "autograd.node",
            "autograd.graph",
            "autograd.inplace",
            "autograd.anomaly",
            "autograd.forward_grad",
            "_overrides",
            "overrides",
            "_C",
        ),
    ),
    (2, ("ops",)),
    (3, ("autograd",)),
    (4, ("nn", "optim", "func", "utils", "serialization", "distributed", "ir")),
    (5, ("viz", "static", "onnx", "fx", "compiler")),
    (6, ("",)),  # the package itself: it re-exports all of the above
    (7, ("cli", "__main__", "_stubgen")),
]

#: In-function imports that still go upward: (importing module, imported module, why).
UPWARD_IN_FUNCTIONS: dict[tuple[str, str], str] = {
    ("autograd", "viz.explain"): "chainrule.autograd.explain (issue 20's name) is built on the "
    "forward-graph model of viz.forward; moving that model below autograd would remove this",
}


def _layer(module: str) -> int:
    best, best_length = 6, -1
    for layer, prefixes in LAYERS:
        for prefix in prefixes:
            matches = module == prefix or module.startswith(prefix + ".") or prefix == ""
            if matches and len(prefix) > best_length:
                best, best_length = layer, len(prefix)
    return best


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join(parts)] = path
    return found


MODULES = _modules()


def _imported(module: str, path: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The chainrule modules an import statement loads (``from . import x`` loads ``x``)."""
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names if a.name.startswith("chainrule.")]
        return [n[len("chainrule.") :] for n in names if n[len("chainrule.") :] in MODULES]
    if node.level == 0:
        if node.module is None or not node.module.startswith("chainrule"):
            return []
        base = node.module[len("chainrule") :].lstrip(".")
    else:
        package = module.split(".") if path.name == "__init__.py" else module.split(".")[:-1]
        package = [p for p in package if p]
        if node.level > 1:
            package = package[: len(package) - (node.level - 1)]
        base = ".".join(package + ([node.module] if node.module else []))
    prefix = base + "." if base else ""
    submodules = [prefix + a.name for a in node.names if prefix + a.name in MODULES]
    if len(submodules) < len(node.names) and base in MODULES:
        submodules.append(base)
    return submodules


def _imports(module: str, path: Path) -> tuple[set[str], set[str]]:
    """(module-level imports, imports inside functions) of ``module``, outside
    ``if TYPE_CHECKING:`` blocks."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    top: set[str] = set()
    for statement in tree.body:
        block = statement.body if isinstance(statement, ast.Try) else [statement]
        for node in block:
            if isinstance(node, ast.Import | ast.ImportFrom):
                top.update(_imported(module, path, node))
    inner: set[str] = set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    inner.update(_imported(module, path, node))
    top.discard(module)
    inner.discard(module)
    return top, inner


IMPORTS = {module: _imports(module, path) for module, path in MODULES.items()}


def test_the_layers_cover_the_package() -> None:
    assert len(MODULES) > 60
    assert _layer("ops.nn_ops.losses") == 2 and _layer("autograd.engine") == 3
    assert _layer("autograd.graph") == 1 and _layer("") == 6 and _layer("cli.train") == 7


def test_module_level_imports_go_downward() -> None:
    upward = sorted(
        (module, target, _layer(module), _layer(target))
        for module, (top, _) in IMPORTS.items()
        for target in top
        if _layer(target) > _layer(module)
    )
    assert upward == []


def test_module_level_imports_have_no_cycle() -> None:
    """Depth-first search with an explicit stack: a back edge is a cycle."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in MODULES:
        if start in state:
            continue
        stack = [(start, iter(sorted(IMPORTS[start][0])))]
        state[start] = 1
        path = [start]
        while stack:
            module, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                path.pop()
                state[module] = 2
                continue
            if state.get(child) == 1:
                raise AssertionError(f"import cycle: {' -> '.join(path + [child])}")
            if child not in state:
                state[child] = 1
                path.append(child)
                stack.append((child, iter(sorted(IMPORTS[child][0]))))


def test_in_function_imports_go_upward_only_where_listed() -> None:
    upward = {
        (module, target)
        for module, (_, inner) in IMPORTS.items()
        for target in inner
        if _layer(target) > _layer(module)
    }
    assert upward == set(UPWARD_IN_FUNCTIONS), (
        "new upward imports (restructure instead): "
        f"{sorted(upward - set(UPWARD_IN_FUNCTIONS))}; fixed, take off the list: "
        f"{sorted(set(UPWARD_IN_FUNCTIONS) - upward)}"
    )


def test_the_package_never_imports_the_benchmarks() -> None:
    for path in MODULES.values():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                assert not any(a.name.split(".")[0] == "benchmarks" for a in node.names), path
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                assert (node.module or "").split(".")[0] != "benchmarks", path
