"""A pickle machine that can only rebuild data: no code from the file ever runs.

It follows PyTorch's weights-only unpickler (``torch/_weights_only_unpickler.py``), written
again so that every guarantee is ours to check:

* **Globals are immutable markers.** ``GLOBAL`` and ``STACK_GLOBAL`` look the name up in a
  fixed table and push a frozen :class:`Global`, never a class or function; nothing is
  imported. ``REDUCE``/``NEWOBJ`` call the marker's own handler, which checks its arguments.
* **Mutation reaches only what this load built.** ``APPEND(S)`` needs a ``list``,
  ``SETITEM(S)`` a ``dict``/``OrderedDict``/``Counter``, ``ADDITEMS`` a ``set``, ``BUILD`` an
  ``OrderedDict`` (a state dict's ``_metadata``) with a dict of new attribute names. The
  target's exact type is checked *and* it must be an object this unpickler created, so no
  marker, storage, dtype or tensor is ever mutated. No ``__setstate__``, ``append``, ``add``
  or ``__setitem__`` of a loaded object is called.
* **Bounded.** The memo is a dict (``LONG_BINPUT 2**32-1`` costs one entry, not a 32 GiB
  table as in the C unpickler); every length is checked against the bytes left before it is
  read; the Python objects built are charged to a budget proportional to the pickle's size
  (a constructor copying a memoized list cannot multiply it); tuples and frozensets may nest
  at most :data:`MAX_NESTING` deep, since hashing a deeper one overflows the C stack (a dict
  key nested 10**6 deep crashes CPython, and PyTorch's unpickler with it).
* **No recursion**: the machine is a loop over opcodes.

Opcodes: ``PROTO`` (up to 5), ``FRAME``, ``STOP``, ``MARK``, ``POP``, ``POP_MARK``, ``NONE``,
``NEWTRUE``, ``NEWFALSE``, ``BININT``/``1``/``2``, ``LONG1``, ``LONG4``, ``BINFLOAT``,
``BINUNICODE``/``SHORT_``/``8``, ``SHORT_BINSTRING``, ``BINBYTES``/``SHORT_``/``8``,
``BYTEARRAY8``, ``EMPTY_TUPLE``, ``TUPLE``/``1``/``2``/``3``, ``EMPTY_LIST``, ``APPEND(S)``,
``EMPTY_DICT``, ``SETITEM(S)``, ``EMPTY_SET``, ``ADDITEMS``, ``FROZENSET``, ``GLOBAL``,
``STACK_GLOBAL``, ``REDUCE``, ``NEWOBJ``, ``BUILD``, ``BINPERSID``, ``(LONG_)BINGET``,
``(LONG_)BINPUT``, ``MEMOIZE``: what ``pickle`` writes for data with protocols 2 to 5. Any
other (``INST``, ``OBJ``, ``EXT*``, ``PERSID``, the text opcodes of protocol 0, out-of-band
buffers ...) is ``Unsupported operand <n>``, as in PyTorch.

Errors are :class:`pickle.UnpicklingError` (handlers may raise ``RuntimeError`` as PyTorch's
rebuild functions do).
"""

from __future__ import annotations

import _compat_pickle
import pickle
import struct
from collections import Counter, OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from ._files import Truncated

#: Deepest nesting of tuples and frozensets (hashing recurses in C without a guard).
MAX_NESTING = 1000

# Approximate sizes in bytes, charged to the budget (CPython 3.11, 64-bit, as tracemalloc
# counts them). _TRACKED: this unpickler's own record of a container it built.
_OBJECT = 64
_ITEM = 8
_DICT_ITEM = 48
_SET_ITEM = 40
_SET = 216
_TRACKED = 128

_UNPACK_I = struct.Struct("<i").unpack
_UNPACK_UI = struct.Struct("<I").unpack
_UNPACK_Q = struct.Struct("<Q").unpack
_UNPACK_H = struct.Struct("<H").unpack
_UNPACK_D = struct.Struct(">d").unpack

_MAX_GLOBAL_LINE = 1 << 12


class Reader(Protocol):
    """What the unpickler reads from (see ``_files.BytesReader``/``SequentialReader``)."""

    def read(self, length: int) -> bytes: ...  # noqa: D102

    def readline(self, limit: int) -> bytes: ...  # noqa: D102


@dataclass(frozen=True, slots=True, eq=False)
class Global:
    """An allowed global: an immutable marker for ``module.name``.

    ``call`` (for ``REDUCE``) receives the unpickler and the argument tuple; ``new`` (for
    ``NEWOBJ``) likewise. ``value`` is what the global itself stands for when it is used as
    data (a dtype, say), else the marker itself is pushed.
    """

    module: str
    name: str
    call: Callable[[Unpickler, tuple], Any] | None = None
    new: Callable[[Unpickler, tuple], Any] | None = None
    value: Any = None
    info: Any = None

    def __repr__(self) -> str:
        return f"{self.module}.{self.name}"


_BLOCKED_MODULES = frozenset({"sys", "os", "posix", "nt"})


class Unpickler:
    """Runs one pickle with a fixed table of globals and a persistent-id resolver."""

    def __init__(self, reader: Reader, globals_: Callable[[str, str], Global],
                 persistent_load: Callable[[Any], Any], budget: int) -> None:
        self._reader = reader
        self._find = globals_
        self._persistent_load = persistent_load
        self._budget = budget
        self._charged = 0
        self._memo: dict[int, Any] = {}
        # Objects this load created that opcodes may mutate or whose nesting depth matters;
        # holding them keeps their ids from being reused by other objects during the load.
        self._built: dict[int, Any] = {}
        self._depth: dict[int, int] = {}

    # ------------------------------------------------------------------------------------------
    # helpers for the handlers of globals

    def charge(self, nbytes: int) -> None:
        """Count ``nbytes`` of Python objects against the load's budget."""
        self._charged += nbytes
        if self._charged > self._budget:
            raise pickle.UnpicklingError(
                f"the pickle builds more than {self._budget} bytes of Python objects, more "
                "than a file of its size can legitimately describe"
            )

    def adopt(self, obj: Any) -> Any:
        """Mark a container made by a handler as built by this load (so opcodes may fill it)."""
        self.charge(_TRACKED)
        self._built[id(obj)] = obj
        return obj

    def nested(self, obj: Any, items: Any) -> Any:
        """Record the nesting depth of a tuple/frozenset ``obj`` made of ``items``."""
        depth = 1
        for item in items:
            if isinstance(item, tuple | frozenset):
                depth = max(depth, self._depth.get(id(item), 1) + 1)
        if depth > MAX_NESTING:
            raise pickle.UnpicklingError(
                f"the pickle nests tuples or frozensets more than {MAX_NESTING} deep; hashing "
                "such an object would overflow the stack"
            )
        if depth > 1:
            self.charge(2 * _TRACKED)
            self._depth[id(obj)] = depth
            self._built[id(obj)] = obj
        return obj

    def is_built(self, obj: Any) -> bool:
        """Whether ``obj`` was created by this load."""
        return self._built.get(id(obj)) is obj

    # ------------------------------------------------------------------------------------------

    def load(self) -> Any:
        """Run the pickle to its ``STOP`` and return the object it built."""
        try:
            return self._run()
        except Truncated:
            raise pickle.UnpicklingError("pickle data was truncated") from None
        except RecursionError:  # not expected (nothing here recurses); never let it escape
            raise pickle.UnpicklingError("the pickle is nested too deeply") from None

    def _run(self) -> Any:  # noqa: C901 - one branch per opcode reads best as one loop
        read = self._reader.read
        stack: list[Any] = []
        metastack: list[list[Any]] = []
        memo = self._memo
        charge = self.charge

        def pop() -> Any:
            if not stack:
                raise pickle.UnpicklingError("unpickling stack underflow")
            return stack.pop()

        def top() -> Any:
            if not stack:
                raise pickle.UnpicklingError("unpickling stack underflow")
            return stack[-1]

        def pop_mark() -> list[Any]:
            nonlocal stack
            if not metastack:
                raise pickle.UnpicklingError("could not find MARK")
            items = stack
            stack = metastack.pop()
            return items

        def push_text(data: bytes) -> None:
            try:
                text = str(data, "utf-8", "surrogatepass")
            except UnicodeDecodeError as e:
                raise pickle.UnpicklingError(f"a string in the pickle is not UTF-8: {e}") from None
            charge(_OBJECT + len(data))
            stack.append(text)

        while True:
            code = read(1)[0]
            if code == 0x80:                                    # PROTO
                protocol = read(1)[0]
                if protocol > pickle.HIGHEST_PROTOCOL:
                    raise pickle.UnpicklingError(f"unsupported pickle protocol: {protocol}")
            elif code == 0x95:                                  # FRAME (a hint; ignored)
                read(8)
            elif code == 0x2E:                                  # STOP
                return pop()
            elif code == 0x28:                                  # MARK (the stack is kept,
                charge(_OBJECT)                                 # not copied: a new list)
                metastack.append(stack)
                stack = []
            elif code == 0x30:                                  # POP
                pop()
            elif code == 0x31:                                  # POP_MARK
                pop_mark()
            elif code == 0x4E:                                  # NONE
                stack.append(None)
            elif code == 0x88:                                  # NEWTRUE
                stack.append(True)
            elif code == 0x89:                                  # NEWFALSE
                stack.append(False)
            elif code == 0x4A:                                  # BININT
                charge(_OBJECT)
                stack.append(_UNPACK_I(read(4))[0])
            elif code == 0x4B:                                  # BININT1
                stack.append(read(1)[0])
            elif code == 0x4D:                                  # BININT2
                charge(_OBJECT)
                stack.append(_UNPACK_H(read(2))[0])
            elif code == 0x8A:                                  # LONG1
                n = read(1)[0]
                charge(_OBJECT + n)
                stack.append(int.from_bytes(read(n), "little", signed=True))
            elif code == 0x8B:                                  # LONG4
                n = _UNPACK_I(read(4))[0]
                if n < 0:
                    raise pickle.UnpicklingError("LONG pickle has negative byte count")
                charge(_OBJECT + n)
                stack.append(int.from_bytes(read(n), "little", signed=True))
            elif code == 0x47:                                  # BINFLOAT
                charge(_OBJECT)
                stack.append(_UNPACK_D(read(8))[0])
            elif code == 0x58:                                  # BINUNICODE
                push_text(read(_UNPACK_UI(read(4))[0]))
            elif code == 0x8C:                                  # SHORT_BINUNICODE
                push_text(read(read(1)[0]))
            elif code == 0x8D:                                  # BINUNICODE8
                push_text(read(_UNPACK_Q(read(8))[0]))
            elif code == 0x55:                                  # SHORT_BINSTRING (py2 str)
                push_text(read(read(1)[0]))
            elif code in (0x42, 0x43, 0x8E, 0x96):              # BINBYTES, SHORT_, 8, BYTEARRAY8
                n = (_UNPACK_UI(read(4))[0] if code == 0x42 else read(1)[0] if code == 0x43
                     else _UNPACK_Q(read(8))[0])
                charge(_OBJECT + n)
                data = read(n)
                stack.append(self.adopt(bytearray(data)) if code == 0x96 else data)
            elif code == 0x29:                                  # EMPTY_TUPLE
                stack.append(())
            elif code == 0x74:                                  # TUPLE
                items = pop_mark()
                charge(_OBJECT + _ITEM * len(items))
                value = tuple(items)
                stack.append(self.nested(value, items))
            elif code in (0x85, 0x86, 0x87):                    # TUPLE1, TUPLE2, TUPLE3
                n = code - 0x84
                if len(stack) < n:
                    raise pickle.UnpicklingError("unpickling stack underflow")
                items = stack[-n:]
                del stack[-n:]
                charge(_OBJECT + _ITEM * n)
                value = tuple(items)
                stack.append(self.nested(value, items))
            elif code == 0x5D:                                  # EMPTY_LIST
                charge(_OBJECT)
                stack.append(self.adopt([]))
            elif code == 0x7D:                                  # EMPTY_DICT
                charge(_OBJECT)
                stack.append(self.adopt({}))
            elif code == 0x8F:                                  # EMPTY_SET
                charge(_SET)
                stack.append(self.adopt(set()))
            elif code == 0x61:                                  # APPEND
                item = pop()
                self._target(top(), (list,), "append to lists").append(item)
                charge(_ITEM)
            elif code == 0x65:                                  # APPENDS
                items = pop_mark()
                self._target(top(), (list,), "extend lists").extend(items)
                charge(_ITEM * len(items))
            elif code == 0x73:                                  # SETITEM
                value = pop()
                key = pop()
                self._set_items(top(), "SETITEM", [key, value])
            elif code == 0x75:                                  # SETITEMS
                items = pop_mark()
                self._set_items(top(), "SETITEMS", items)
            elif code == 0x90:                                  # ADDITEMS
                items = pop_mark()
                target = self._target(top(), (set,), "add to sets")
                charge(_SET_ITEM * len(items))
                hashing(target.update, items)
            elif code == 0x91:                                  # FROZENSET
                items = pop_mark()
                charge(_SET + _SET_ITEM * len(items))
                value = hashing(frozenset, items)
                stack.append(self.nested(value, items))
            elif code == 0x63:                                  # GLOBAL
                module = self._line()
                name = self._line()
                stack.append(self._global(module, name))
            elif code == 0x93:                                  # STACK_GLOBAL
                name = pop()
                module = pop()
                if type(module) is not str or type(name) is not str:
                    raise pickle.UnpicklingError("STACK_GLOBAL requires str")
                stack.append(self._global(module, name))
            elif code == 0x52:                                  # REDUCE
                args = pop()
                func = top()
                stack[-1] = self._call(func, args, "call")
            elif code == 0x81:                                  # NEWOBJ
                args = pop()
                cls = pop()
                stack.append(self._call(cls, args, "new"))
            elif code == 0x62:                                  # BUILD
                state = pop()
                self._build(top(), state)
            elif code == 0x51:                                  # BINPERSID
                stack.append(self._persistent_load(pop()))
            elif code in (0x68, 0x6A):                          # BINGET, LONG_BINGET
                index = read(1)[0] if code == 0x68 else _UNPACK_UI(read(4))[0]
                try:
                    stack.append(memo[index])
                except KeyError:
                    raise pickle.UnpicklingError(
                        f"Memo value not found at index {index}") from None
            elif code in (0x71, 0x72):                          # BINPUT, LONG_BINPUT
                index = read(1)[0] if code == 0x71 else _UNPACK_UI(read(4))[0]
                charge(_DICT_ITEM)
                memo[index] = top()
            elif code == 0x94:                                  # MEMOIZE
                charge(_DICT_ITEM)
                memo[len(memo)] = top()
            else:
                raise pickle.UnpicklingError(f"Unsupported operand {code}")

    # ------------------------------------------------------------------------------------------

    def _line(self) -> str:
        line = self._reader.readline(_MAX_GLOBAL_LINE)[:-1]
        try:
            return line.decode("utf-8")
        except UnicodeDecodeError:
            raise pickle.UnpicklingError("a GLOBAL name is not UTF-8") from None

    def _global(self, module: str, name: str) -> Any:
        # Python 2 names (``__builtin__.set``), as pickle and PyTorch map them.
        if (module, name) in _compat_pickle.NAME_MAPPING:
            module, name = _compat_pickle.NAME_MAPPING[(module, name)]
        elif module in _compat_pickle.IMPORT_MAPPING:
            module = _compat_pickle.IMPORT_MAPPING[module]
        if module in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(
                f"Trying to load unsupported GLOBAL {module}.{name} whose module {module} is "
                "blocked."
            )
        found = self._find(module, name)
        return found.value if found.value is not None else found

    def _call(self, func: Any, args: Any, how: str) -> Any:
        handler = getattr(func, how, None) if type(func) is Global else None
        if handler is None:
            if how == "new":
                raise pickle.UnpicklingError(
                    f"Can only create new object for nn.Parameter, but got {describe(func)}"
                )
            raise pickle.UnpicklingError(
                f"Trying to call reduce for unrecognized function {describe(func)}"
            )
        if type(args) is not tuple:
            raise pickle.UnpicklingError(
                f"{func!r} needs a tuple of arguments, but got {describe(args)}"
            )
        return handler(self, args)

    def _target(self, obj: Any, types: tuple[type, ...], what: str) -> Any:
        if type(obj) not in types or not self.is_built(obj):
            raise pickle.UnpicklingError(
                f"Can only {what} built by this load, but got {describe(obj)}"
            )
        return obj

    def _set_items(self, target: Any, opcode: str, items: list[Any]) -> None:
        if len(items) % 2:
            raise pickle.UnpicklingError(f"odd number of items for {opcode}")
        self._target(target, (dict, OrderedDict, Counter),
                     f"{opcode} for dict, collections.OrderedDict, collections.Counter")
        self.charge(_DICT_ITEM * (len(items) // 2))

        def fill(pairs: list[Any]) -> None:
            for i in range(0, len(pairs), 2):
                target[pairs[i]] = pairs[i + 1]

        hashing(fill, items)

    def _build(self, target: Any, state: Any) -> None:
        if type(target) is not OrderedDict or not self.is_built(target):
            raise pickle.UnpicklingError(
                f"Can only build OrderedDict, but got {describe(target)}"
            )
        if state is None:
            return
        if type(state) is not dict:
            raise pickle.UnpicklingError(
                f"the state to build an OrderedDict from must be a dict, not {describe(state)}"
            )
        for key in state:
            # New attribute names only: state must not shadow a method (``keys``) or reach
            # special attributes (``__class__``).
            if type(key) is not str or not key.isidentifier() or hasattr(OrderedDict, key):
                raise pickle.UnpicklingError(
                    f"refusing to set attribute {_short_repr(key)} of an OrderedDict"
                )
        self.charge(_DICT_ITEM * len(state))
        vars(target).update(state)


def hashing(operation: Callable[[Any], Any], items: Any) -> Any:
    """``operation(items)`` (which hashes the items), an unhashable one reported as a bad
    pickle."""
    try:
        return operation(items)
    except TypeError as e:
        raise pickle.UnpicklingError(f"invalid key in the pickle: {e}") from None


def _short_repr(obj: Any) -> str:
    import reprlib

    return reprlib.repr(obj)


def describe(obj: Any) -> str:
    """A name for ``obj`` in an error message (never a repr of loaded data: it may be huge or
    nested beyond the recursion limit)."""
    if type(obj) is Global:
        return repr(obj)
    return f"<class '{type(obj).__module__}.{type(obj).__qualname__}'>".replace(
        "'builtins.", "'")
