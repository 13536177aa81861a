"""Grouping a large backward graph: by the module call that created each node, and by repeated
steps (a loop's body, a chain of ops), so every level of the drawing stays small.

Two kinds of groups nest into one hierarchy:

* **module groups**, when the forward ran inside :func:`record_modules`: each call of a module
  owns the nodes created while its ``forward`` ran (nodes carry a creation sequence number, so a
  call is a range of them);
* **chain groups**: a long run of similar steps, found on the dominator tree of a level's graph
  (a node *d* dominates *v* when every path from the output to *v* passes through *d*). Along a
  heavy path of that tree each spine node plus its small side subtrees is one step, e.g. the
  ``Add``, ``Sin`` and ``Mul`` of ``x = torch.sin(x) + x * w``; a run of at least ``fold``
  small steps becomes one group ("[AddBackward0 · SinBackward0 · MulBackward0] × 10000").

Everything is iterative (a million-node chain folds in seconds, without recursion).

Example:
    >>> import chainrule as torch
    >>> from chainrule.viz.graph import walk
    >>> from chainrule.viz.groups import Hierarchy
    >>> x = torch.tensor([1.], requires_grad=True)
    >>> y = x
    >>> for _ in range(100):
    ...     y = y * 1.01
    >>> h = Hierarchy(walk(y), fold=16, collapse_above=10)
    >>> [g.label for g in h.groups]
    ['[MulBackward0] × 100']
"""

from __future__ import annotations

import bisect
from collections import Counter, deque
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from ..autograd.node import next_sequence_nr
from .graph import NO_CHILD, BackwardGraph, no_gc

__all__ = ["ModuleRecorder", "record_modules", "Group", "Hierarchy", "View", "item_key"]

_MAX_PREDECESSORS = 8  # a node used by more steps than this is shared, not part of one step
_INTERSECT_BUDGET = 4096  # dominator intersection steps per node before giving up (a heuristic)
_MAX_PERIOD = 12  # longest loop body (in blocks along a chain) recognised as one step


# ----------------------------------------------------------------------------------------------
# Which module call created each node

@dataclass
class ModuleCall:
    """One call of one module's ``forward``."""

    path: str  # 'fc1', 'encoder.layer0'; '' for the model itself
    type_name: str
    parent: int  # the enclosing call, or -1
    number: int  # 1 for the first call of this path, 2 for the second ...

    @property
    def label(self) -> str:
        name = f"{self.path} ({self.type_name})" if self.path else self.type_name
        return name if self.number == 1 else f"{name} #{self.number}"


class ModuleRecorder:
    """Records which module call created each backward node (see :func:`record_modules`)."""

    def __init__(self) -> None:
        self.calls: list[ModuleCall] = []
        self._event_seq: list[int] = []
        self._event_call: list[int] = []
        self._stack: list[int] = []
        self._counts: Counter[str] = Counter()

    def _enter(self, path: str, module: Any) -> int:
        self._counts[path] += 1
        parent = self._stack[-1] if self._stack else -1
        call = len(self.calls)
        self.calls.append(ModuleCall(path, type(module).__name__, parent, self._counts[path]))
        self._stack.append(call)
        # Taking a sequence number leaves a gap in the numbering, which only orders nodes.
        self._event_seq.append(next_sequence_nr())
        self._event_call.append(call)
        return call

    def _exit(self) -> None:
        self._stack.pop()
        self._event_seq.append(next_sequence_nr())
        self._event_call.append(self._stack[-1] if self._stack else -1)

    def call_of(self, seq: int) -> int:
        """The innermost call running when the node with sequence number ``seq`` was made."""
        k = bisect.bisect_right(self._event_seq, seq) - 1
        return self._event_call[k] if k >= 0 else -1


def _named_modules(model: Any) -> list[tuple[str, Any]]:
    named = getattr(model, "named_modules", None)
    if callable(named):
        return list(named())
    result = []
    stack = [("", model)]
    while stack:
        prefix, module = stack.pop()
        result.append((prefix, module))
        children = list(getattr(module, "_modules", {}).items())
        for name, child in reversed(children):
            if child is not None:
                stack.append((f"{prefix}.{name}" if prefix else name, child))
    return result


@contextmanager
def record_modules(model: Any) -> Iterator[ModuleRecorder]:
    """Within this block, remember which module of ``model`` created each backward node.

    Pass the recorder to ``make_dot``/``explore``/``tree`` as ``modules=`` to draw one box per
    module call that opens on a click.

    Example:
        >>> import chainrule as torch
        >>> from chainrule import nn, viz
        >>> model = nn.Linear(3, 2)
        >>> with viz.record_modules(model) as rec:
        ...     loss = model(torch.ones(4, 3)).sum()
        >>> [call.label for call in rec.calls]
        ['Linear']
    """
    recorder = ModuleRecorder()
    patched: list[tuple[Any, Any]] = []
    for path, module in _named_modules(model):
        previous = module.__dict__.get("forward")
        patched.append((module, previous))
        object.__setattr__(module, "forward", _recording_forward(recorder, path, module))
    try:
        yield recorder
    finally:
        for module, previous in patched:
            if previous is None:
                del module.__dict__["forward"]
            else:
                object.__setattr__(module, "forward", previous)


def _recording_forward(recorder: ModuleRecorder, path: str, module: Any) -> Any:
    original = module.forward

    def forward(*args: Any, **kwargs: Any) -> Any:
        recorder._enter(path, module)
        try:
            return original(*args, **kwargs)
        finally:
            recorder._exit()

    return forward


# ----------------------------------------------------------------------------------------------
# The hierarchy

def item_key(item: int) -> str:
    """``'n12'`` for node 12, ``'g3'`` for group 3 (groups are stored as ``-1 - id``)."""
    return f"n{item}" if item >= 0 else f"g{-1 - item}"


@dataclass
class Group:
    """A module call or a run of repeated steps, drawn as one box until opened."""

    id: int
    kind: str  # 'module' or 'chain'
    label: str
    parent: int  # enclosing group, -1 for the top level
    items: list[int] = field(default_factory=list)  # members: node id, or -1 - group id
    blocks: list[list[int]] = field(default_factory=list)  # chain: the items of each step
    size: int = 0  # nodes inside, at any depth
    first: int = -1  # smallest node id inside (groups are listed in walk order)
    names: Counter[str] = field(default_factory=Counter)  # node names inside, with counts


@dataclass
class View:
    """What one level of the drawing shows: items, edges between them, and what was left out."""

    level: int  # group id, -1 for the top level
    items: list[int]  # node ids and -1 - group ids, in walk order
    edges: list[tuple[str, str, int]]  # (from key, to key, count), backward direction
    hidden: int = 0  # chain steps not drawn (between the first and last ones)
    truncated: int = 0  # items not drawn because the level is too large
    stubs: list[tuple[str, int]] = field(default_factory=list)  # ('in'|'out', node id) outside


class Hierarchy:
    """Module and chain groups over a :class:`BackwardGraph`.

    ``collapse_above``: a level with more items than this has its repeated steps folded; runs
    of at least ``fold`` steps (each at most ``max_step`` nodes) become chain groups (``fold=0``
    turns folding off).
    """

    def __init__(
        self,
        graph: BackwardGraph,
        modules: ModuleRecorder | None = None,
        fold: int = 16,
        collapse_above: int = 200,
        max_step: int = 64,
    ) -> None:
        self.graph = graph
        self.groups: list[Group] = []
        self.top: list[int] = []
        self.fold = fold
        self.max_step = max_step
        # Innermost module group of each node (-1: none) and, per item, the chain holding it.
        self._module_of: list[int] = [-1] * len(graph)
        self._module_paths: list[tuple[int, ...]] = []  # per module group: itself and its parents
        self._module_members: dict[int, list[int]] = {}
        self._chain_of_node: list[int] = [-1] * len(graph)  # chain group directly holding a node
        with no_gc():
            if modules is not None and modules.calls:
                self._group_by_modules(modules)
            else:
                self.top = list(range(len(graph)))
            levels = [-1] + [g.id for g in self.groups]
            for level in levels:
                items = self.top if level < 0 else self.groups[level].items
                if fold and len(items) > collapse_above:
                    self._fold_level(level)
            self._paths = self._node_paths()
            self._count()
        self._cross: list[tuple[int, int]] | None = None

    # -- module groups ---------------------------------------------------------------------

    def _group_by_modules(self, modules: ModuleRecorder) -> None:
        graph = self.graph
        group_of_call: dict[int, int] = {}

        def group_for(call: int) -> int:
            # Create the groups of this call and of its enclosing calls (outermost first).
            chain = []
            while call >= 0 and call not in group_of_call:
                chain.append(call)
                call = modules.calls[call].parent
            parent = group_of_call.get(call, -1) if call >= 0 else -1
            for c in reversed(chain):
                gid = len(self.groups)
                self.groups.append(Group(gid, "module", modules.calls[c].label, parent))
                outer = self._module_paths[parent] if parent >= 0 else ()
                self._module_paths.append((*outer, gid))
                group_of_call[c] = gid
                parent = gid
            return parent

        module_of = self._module_of
        leaves = []
        for i, node in enumerate(graph.nodes):
            if graph.is_leaf(i):
                leaves.append(i)
                continue
            call = modules.call_of(node._seq)
            if call >= 0:
                module_of[i] = group_of_call.get(call) if call in group_of_call else group_for(call)
        # A leaf goes with its users: into the deepest group that holds all of them.
        parents = graph.parents
        for i in leaves:
            common: list[int] | None = None
            for p in parents[i]:
                path = self._module_path(module_of[p])
                if common is None:
                    common = list(path)
                else:
                    n = 0
                    while n < len(common) and n < len(path) and common[n] == path[n]:
                        n += 1
                    common = common[:n]
            module_of[i] = common[-1] if common else -1
        # Members and first node of each group; items of each level in walk order.
        for i in range(len(graph)):
            if module_of[i] >= 0:
                for g in self._module_paths[module_of[i]]:
                    self._module_members.setdefault(g, []).append(i)
                    if self.groups[g].first < 0:
                        self.groups[g].first = i
        placed: set[int] = set()
        for i in range(len(graph)):
            item = i
            g = module_of[i]
            while True:
                container = self.top if g < 0 else self.groups[g].items
                if item in placed:
                    break
                placed.add(item)
                container.append(item)
                if g < 0:
                    break
                item = -1 - g
                g = self.groups[g].parent

    def _module_path(self, g: int) -> tuple[int, ...]:
        return self._module_paths[g] if g >= 0 else ()

    # -- folding repeated steps ------------------------------------------------------------

    def _level_graph(self, level: int) -> tuple[list[int], list[list[int]]]:
        """The items of a level and, per item (local index), its successors' local indices."""
        items = self.top if level < 0 else self.groups[level].items
        graph = self.graph
        if level < 0 and not self.groups:
            succ = [[c for c, _ in slots if c != NO_CHILD] for slots in graph.children]
            return items, succ
        local = {item: k for k, item in enumerate(items)}
        succ = [[] for _ in items]
        depth = len(self._module_path(level)) if level >= 0 else 0
        for i in self._members_of_module(level):
            a = local[self._item_at(i, depth)]
            for c, _ in graph.children[i]:
                if c == NO_CHILD:
                    continue
                path = self._module_path(self._module_of[c])
                if depth and (len(path) < depth or path[depth - 1] != level):
                    continue
                b = local[self._item_at(c, depth)]
                if b != a and b not in succ[a]:
                    succ[a].append(b)
        return items, succ

    def _item_at(self, node: int, depth: int) -> int:
        path = self._module_path(self._module_of[node])
        return -1 - path[depth] if len(path) > depth else node

    def _members_of_module(self, level: int) -> list[int]:
        if level < 0:
            return list(range(len(self.graph)))
        return self._module_members.get(level, [])

    def _fold_level(self, level: int) -> None:
        items, succ = self._level_graph(level)
        groups_before = len(self.groups)
        m = len(items)
        root = m  # a virtual root above the level's entries
        sinks = [not s for s in succ]
        indeg = [0] * (m + 1)
        for a in range(m):
            for b in succ[a]:
                if not sinks[b]:
                    indeg[b] += 1
        # Topological order (Kahn), dominators in one pass (a DAG needs no iteration).
        idom = [-1] * (m + 1)
        pos = [0] * (m + 1)
        pos[root] = -1
        idom[root] = root
        queue = deque(a for a in range(m) if indeg[a] == 0 and not sinks[a])
        for a in queue:
            idom[a] = root
        remaining = list(indeg)
        order: list[int] = []
        popleft = queue.popleft
        push = queue.append
        while queue:
            a = popleft()
            pos[a] = len(order)
            order.append(a)
            for b in succ[a]:
                if sinks[b]:
                    continue
                d = idom[b]
                if d == -1:
                    idom[b] = root if indeg[b] > _MAX_PREDECESSORS else a
                elif d != root:
                    idom[b] = _intersect(d, a, idom, pos)
                remaining[b] -= 1
                if remaining[b] == 0:
                    push(b)
        # Dominator tree: children, subtree sizes, heavy children (the largest subtree, when it
        # holds more than half of the parent's).
        tree_children: list[list[int]] = [[] for _ in range(m + 1)]
        for a in order:
            tree_children[idom[a]].append(a)
        size = [1] * (m + 1)
        for a in reversed(order):
            size[idom[a]] += size[a]
        heavy = [-1] * (m + 1)
        is_heavy_child = [False] * (m + 1)
        for a in order:
            kids = tree_children[a]
            if not kids:
                continue
            best = kids[0]
            if len(kids) > 1:
                for c in kids:
                    if size[c] > size[best]:
                        best = c
            if 2 * size[best] > size[a] - 1:
                heavy[a] = best
                is_heavy_child[best] = True
        # Runs of small steps along each heavy path become chain groups.
        chain_of = [-1] * (m + 1)
        block_of = [-1] * (m + 1)
        max_step = self.max_step
        for head in order:
            if is_heavy_child[head]:
                continue
            run: list[int] = []
            a = head
            while a >= 0:
                h = heavy[a]
                if size[a] - (size[h] if h >= 0 else 0) <= max_step:
                    run.append(a)
                else:
                    self._make_chain(level, items, run, heavy, tree_children, chain_of, block_of)
                    run = []
                a = h
            self._make_chain(level, items, run, heavy, tree_children, chain_of, block_of)
        new_groups = self.groups[groups_before:]
        if not new_groups:
            return
        # Sinks join a chain when all their users are in it (in the step of the first user).
        users_of: dict[int, list[int]] = {}
        for a in range(m):
            for b in succ[a]:
                if sinks[b]:
                    users_of.setdefault(b, []).append(a)
        for sink, users in users_of.items():
            gid = chain_of[users[0]]
            if gid >= 0 and all(chain_of[u] == gid for u in users):
                chain_of[sink] = gid
                self.groups[gid].blocks[block_of[users[0]]].append(items[sink])
        # Replace the folded items of the level by their chain groups (in walk order).
        new_items: list[int] = []
        added: set[int] = set()
        for k, item in enumerate(items):
            gid = chain_of[k]
            if gid < 0:
                new_items.append(item)
            elif gid not in added:
                added.add(gid)
                new_items.append(-1 - gid)
        chain_of_node = self._chain_of_node
        for group in new_groups:
            gid = group.id
            for block in group.blocks:
                if len(block) > 1:
                    block.sort(key=self.first_of)
            group.items = [item for block in group.blocks for item in block]
            for item in group.items:
                if item >= 0:
                    chain_of_node[item] = gid
                else:
                    self.groups[-1 - item].parent = gid
        if level < 0:
            self.top = new_items
        else:
            self.groups[level].items = new_items

    def _make_chain(
        self, level: int, items: list[int], run: list[int], heavy: list[int],
        tree_children: list[list[int]], chain_of: list[int], block_of: list[int],
    ) -> None:
        """A chain group of the steps along ``run`` (spine nodes), if there are enough."""
        if len(run) < self.fold:
            return
        blocks = []  # per spine node: it and its side subtrees (local indices)
        for spine in run:
            block = [spine]
            stack = [c for c in tree_children[spine] if c != heavy[spine]]
            while stack:
                a = stack.pop()
                block.append(a)
                stack.extend(tree_children[a])
            blocks.append(block)
        steps = self._steps(items, blocks)
        if len(steps) < self.fold:
            return
        gid = len(self.groups)
        group = Group(gid, "chain", "", level)
        for number, step in enumerate(steps):
            for a in step:
                chain_of[a] = gid
                block_of[a] = number
            group.blocks.append([items[a] for a in step])
        self.groups.append(group)

    def _steps(self, items: list[int], blocks: list[list[int]]) -> list[list[int]]:
        """The repeating steps of a run of blocks.

        A loop body of several ops along the chain (``tanh(linear(h) + c)``) shows up as a
        repeating sequence of blocks: one step is one period of it. Blocks before the
        repetition starts and a differing last step stay out of the group (the ``sum`` that
        ends a loop, for instance).
        """
        def label(a: int) -> str:
            return self.item_label(items[a])

        cheap = [(label(b[0]), len(b)) for b in blocks]
        n = len(cheap)
        stride = max(1, n // 512)
        for period in range(1, min(_MAX_PERIOD, n // 3) + 1):
            positions = range(0, n - period, stride)
            same = sum(cheap[i] == cheap[i + period] for i in positions)
            if same >= 0.9 * len(positions):
                break
        else:
            return blocks  # no repetition: every block is a step
        start = next(
            (i for i in range(n - 2 * period)
             if cheap[i] == cheap[i + period] == cheap[i + 2 * period]),
            0,
        )
        steps = [
            [a for block in blocks[j:j + period] for a in block] for j in range(start, n, period)
        ]
        common = [label(a) for a in steps[len(steps) // 2]]
        while steps and [label(a) for a in steps[-1]] != common:
            steps.pop()
        return steps

    # -- paths, sizes, labels --------------------------------------------------------------

    def _node_paths(self) -> list[tuple[int, ...]]:
        """For every node, the groups holding it, outermost first (tuples are shared)."""
        interned: dict[tuple[int, int], tuple[int, ...]] = {}
        by_value: dict[tuple[int, ...], tuple[int, ...]] = {}
        paths: list[tuple[int, ...]] = []
        add = paths.append
        last_key = (-2, -2)
        last_path: tuple[int, ...] = ()
        for key in zip(self._module_of, self._chain_of_node, strict=True):
            if key != last_key:
                last_path = interned.get(key)  # type: ignore[assignment]
                if last_path is None:
                    path = self._full_path(*key)
                    # Equal paths are one object: edges inside a group compare by identity.
                    last_path = interned[key] = by_value.setdefault(path, path)
                last_key = key
            add(last_path)
        return paths

    def _full_path(self, module: int, chain: int) -> tuple[int, ...]:
        path: list[int] = []
        g = chain if chain >= 0 else module
        while g >= 0:
            path.append(g)
            g = self.groups[g].parent
        path.reverse()
        return tuple(path)

    def _count(self) -> None:
        """Sizes, first nodes and name counts of every group."""
        groups = self.groups
        paths = self._paths
        tally = Counter(zip(map(id, paths), self.graph.names, strict=True))
        by_id: dict[int, tuple[int, ...]] = {}
        previous = None
        for i, path in enumerate(paths):
            if path is not previous:
                previous = path
                by_id.setdefault(id(path), path)
                for g in path:
                    if groups[g].first < 0 or groups[g].first > i:
                        groups[g].first = i
        for (path_id, name), count in tally.items():
            for g in by_id[path_id]:
                groups[g].size += count
                groups[g].names[name] += count
        for group in groups:
            if group.kind == "chain":
                group.label = self._chain_label(group)

    def _chain_label(self, group: Group) -> str:
        def signature(block: list[int]) -> tuple[str, ...]:
            return tuple(self.item_label(item) for item in block)

        steps = len(group.blocks)
        stride = max(1, steps // 256)  # a sample of the steps is enough for a label
        sample = group.blocks[::stride]
        counts = Counter(signature(b) for b in sample)
        common, count = counts.most_common(1)[0]
        if count >= 0.9 * len(sample):  # the first or last step may differ (the input, a leaf)
            shown = " · ".join(common[:4]) + (" · …" if len(common) > 4 else "")
            return f"[{shown}] × {steps}"
        return f"{steps} steps, {group.size} nodes"

    # -- queries ---------------------------------------------------------------------------

    def first_of(self, item: int) -> int:
        """The smallest node id in an item (its position in walk order)."""
        return item if item >= 0 else self.groups[-1 - item].first

    def item_label(self, item: int) -> str:
        """A node's name, or a group's label without its call number."""
        if item >= 0:
            return self.graph.names[item]
        group = self.groups[-1 - item]
        return group.label.split(" #", 1)[0]

    def path(self, node: int) -> tuple[int, ...]:
        """The groups holding ``node``, outermost first."""
        return self._paths[node]

    def items(self, level: int) -> list[int]:
        """The direct members of a level (-1: the top level)."""
        if level < 0:
            return self.top
        return self.groups[level].items

    def depth(self, level: int) -> int:
        """How many groups enclose a level's items (0 for the top level)."""
        depth = 0
        while level >= 0:
            depth += 1
            level = self.groups[level].parent
        return depth

    def level_path(self, level: int) -> tuple[int, ...]:
        """The groups enclosing a level's items, outermost first, ending with ``level``."""
        return () if level < 0 else self._full_path(level, -1)

    def view(self, level: int = -1, ends: int = 3, max_items: int = 500) -> View:
        """The items of a level and the edges between them, as drawn.

        A chain shows its first and last ``ends`` steps and one '…' item for the steps between
        (key ``'e'``); edges to and from nodes outside the level become stubs. The cost is that
        of the drawn items and of the edges between groups, not of the nodes inside groups.
        """
        children = self.graph.children
        paths = self._paths
        here = self.level_path(level)
        depth = len(here)
        items = list(self.items(level))
        hidden = 0
        hidden_items: set[int] = set()
        if level >= 0 and self.groups[level].kind == "chain":
            blocks = self.groups[level].blocks
            if len(blocks) > 2 * ends:
                hidden = len(blocks) - 2 * ends
                for block in blocks[ends:-ends]:
                    hidden_items.update(block)
                items = sorted(
                    (i for b in blocks[:ends] + blocks[-ends:] for i in b), key=self.first_of
                )
        truncated = max(0, len(items) - max_items)
        items = items[:max_items]
        drawn = set(items)
        counts: dict[tuple[str, str], int] = {}

        def add(a: str | None, b: str | None) -> None:
            if a is not None and b is not None and a != b:
                counts[(a, b)] = counts.get((a, b), 0) + 1

        def key(item: int) -> str | None:
            if item in drawn:
                return item_key(item)
            return "e" if item in hidden_items else None

        # Edges between nodes that are direct items of this level.
        direct = [i for i in items if i >= 0]
        for u in direct:
            for c, _ in children[u]:
                if c >= 0 and paths[c] == here:
                    add(f"n{u}", key(c))
        if hidden_items:
            parents = self.graph.parents
            for d in direct:
                for p in parents[d]:
                    if p in hidden_items:
                        add("e", f"n{d}")
        # Edges that cross a group boundary: between items here, or stubs to the outside.
        stubs: dict[tuple[str, int], None] = {}
        for u, c in self._cross_edges():
            pu = paths[u]
            pc = paths[c]
            inside_u = pu[:depth] == here
            inside_c = pc[:depth] == here
            if inside_u and inside_c:
                a = -1 - pu[depth] if len(pu) > depth else u
                b = -1 - pc[depth] if len(pc) > depth else c
                add(key(a), key(b))
            elif inside_u:
                stubs[("out", c)] = None
            elif inside_c:
                stubs[("in", u)] = None
        edges = [(a, b, n) for (a, b), n in counts.items()]
        return View(level, items, edges, hidden, truncated, list(stubs))

    def _cross_edges(self) -> list[tuple[int, int]]:
        """Edges whose ends lie in different groups (computed once)."""
        if self._cross is None:
            paths = self._paths
            cross = []
            for u, slots in enumerate(self.graph.children):
                pu = paths[u]
                for c, _ in slots:
                    if c >= 0 and paths[c] is not pu:
                        cross.append((u, c))
            self._cross = cross
        return self._cross



def _intersect(a: int, b: int, idom: list[int], pos: list[int]) -> int:
    """The nearest common dominator of ``a`` and ``b`` (Cooper, Harvey and Kennedy)."""
    budget = _INTERSECT_BUDGET
    while a != b:
        while pos[a] > pos[b]:
            a = idom[a]
            budget -= 1
        while pos[b] > pos[a]:
            b = idom[b]
            budget -= 1
        if budget < 0:
            return len(pos) - 1  # the virtual root: treat the node as shared
    return a
