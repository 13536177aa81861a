"""Hostile and tricky weight files for ``chainrule.load``, generated here (never committed as
binaries): hand-assembled pickles, zip archives and legacy streams.

Each :class:`Hostile` says what ``chainrule.load`` must raise (or that the file loads) and what
``torch.load(weights_only=True)`` does with the same bytes, as found by running it. Payloads
that would run code try to create ``marker``, so a test can check nothing ran.
"""

from __future__ import annotations

import io
import pickle
import struct
import warnings
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# ----------------------------------------------------------------------------------------------
# a small pickle assembler (protocol 2 opcodes, as torch.save writes them)

PROTO2 = b"\x80\x02"
MARK, STOP, REDUCE, BUILD, NONE = b"(", b".", b"R", b"b", b"N"
EMPTY_DICT, EMPTY_LIST, EMPTY_TUPLE, EMPTY_SET = b"}", b"]", b")", b"\x8f"
SETITEM, APPEND, APPENDS, ADDITEMS = b"s", b"a", b"e", b"\x90"
NEWTRUE, NEWFALSE, TUPLE1 = b"\x88", b"\x89", b"\x85"


def glob(module: str, name: str) -> bytes:
    """``GLOBAL module name``."""
    return b"c" + f"{module}\n{name}\n".encode()


def text(value: str) -> bytes:
    """``BINUNICODE``."""
    data = value.encode()
    return b"X" + struct.pack("<I", len(data)) + data


def num(value: int) -> bytes:
    """``BININT`` or ``LONG1``."""
    if -(1 << 31) <= value < (1 << 31):
        return b"J" + struct.pack("<i", value)
    data = pickle.encode_long(value)
    return b"\x8a" + bytes([len(data)]) + data


def tup(*items: bytes) -> bytes:
    """``MARK items TUPLE``."""
    return MARK + b"".join(items) + b"t"


def put(index: int) -> bytes:
    """``LONG_BINPUT``."""
    return b"r" + struct.pack("<I", index)


def get(index: int) -> bytes:
    """``LONG_BINGET``."""
    return b"j" + struct.pack("<I", index)


def pickled(*parts: bytes) -> bytes:
    """A whole protocol-2 pickle."""
    return PROTO2 + b"".join(parts) + STOP


def storage_id(kind: str = "FloatStorage", key: str = "0", numel: int = 4,
               legacy: bool = False) -> bytes:
    """A storage's persistent id and ``BINPERSID``."""
    items = [text("storage"), glob("torch", kind), text(key), text("cpu"), num(numel)]
    if legacy:
        items.append(NONE)
    return tup(*items) + b"Q"


def hooks() -> bytes:
    """``OrderedDict()``, the empty backward hooks."""
    return glob("collections", "OrderedDict") + EMPTY_TUPLE + REDUCE


def tensor(storage: bytes, offset: int = 0, size: tuple[int, ...] = (4,),
           stride: tuple[int, ...] = (1,), requires_grad: bool = False,
           *extra: bytes) -> bytes:
    """``_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks, *extra)``."""
    return glob("torch._utils", "_rebuild_tensor_v2") + tup(
        storage, num(offset), tup(*map(num, size)), tup(*map(num, stride)),
        NEWTRUE if requires_grad else NEWFALSE, hooks(), *extra) + REDUCE


ONES = b"\x00\x00\x80\x3f" * 4  # four float32 ones


def run_command(marker: Path, module: str = "posix", name: str = "system") -> bytes:
    """``module.name('touch marker')``: what a malicious checkpoint does."""
    return glob(module, name) + tup(text(f"touch {marker}")) + REDUCE


# ----------------------------------------------------------------------------------------------
# containers


def archive(pkl: bytes, storages: dict[str, bytes] | None = None, *, folder: str = "archive",
            version: bytes = b"3\n", byteorder: bytes | None = b"little",
            extra: tuple[tuple[str, bytes], ...] = (),
            method: int = zipfile.ZIP_STORED) -> bytes:
    """A zip archive laid out as ``torch.save`` lays it out (``method`` for the storages)."""
    buffer = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # duplicate names are on purpose
        with zipfile.ZipFile(buffer, "w") as z:
            z.writestr(f"{folder}/data.pkl", pkl)
            if byteorder is not None:
                z.writestr(f"{folder}/byteorder", byteorder)
            for key, data in (storages or {}).items():
                z.writestr(f"{folder}/data/{key}", data, compress_type=method)
            if version is not None:
                z.writestr(f"{folder}/version", version)
            for name, data in extra:
                z.writestr(name, data)
    return buffer.getvalue()


def one_tensor(pkl_tensor: bytes, data: bytes = ONES, **kw) -> bytes:
    """An archive whose object is one tensor on storage ``0``."""
    return archive(pickled(pkl_tensor), {"0": data}, **kw)


def legacy(main: bytes, keys: list[str], storages: list[tuple[int, bytes]],
           magic: int = 0x1950A86A20F9469CFC6C) -> bytes:
    """A legacy ``torch.save`` stream: magic, protocol, sys info, object, keys, storages."""
    sys_info = pickled(EMPTY_DICT, MARK, text("little_endian"), NEWTRUE, b"u")
    key_list = pickled(EMPTY_LIST, MARK, *map(text, keys), APPENDS)
    data = b"".join(struct.pack("<q", count) + raw for count, raw in storages)
    return (pickled(num(magic)) + pickled(b"M" + struct.pack("<H", 1001)) + sys_info + main
            + key_list + data)


def _local_header(name: bytes, data: bytes) -> bytes:
    return struct.pack("<4s5H3L2H", b"PK\x03\x04", 20, 0, 0, 0, 0, zlib.crc32(data),
                       len(data), len(data), len(name), 0) + name


def _central_header(name: bytes, data: bytes, offset: int) -> bytes:
    return struct.pack("<4s6H3L5H2L", b"PK\x01\x02", 20, 20, 0, 0, 0, 0, zlib.crc32(data),
                       len(data), len(data), len(name), 0, 0, 0, 0, 0, offset) + name


def overlapping_archive(kernel: int, count: int) -> bytes:
    """``count`` storages whose entries overlap: entry k's data holds the local headers of the
    entries after it and one shared ``kernel`` of zeros, so a reader that accepts overlaps
    reads about ``count * kernel`` bytes from a file of about ``kernel`` bytes."""
    names = [f"archive/data/{k}".encode() for k in range(count)]
    datas: list[bytes] = [b""] * count
    tail = b"\0" * kernel
    for k in reversed(range(count)):  # built from the end: each entry's data holds the next
        datas[k] = tail
        tail = _local_header(names[k], tail) + tail
    pkl = pickled(EMPTY_LIST, MARK, *(
        tensor(storage_id("ByteStorage", str(k), len(datas[k])), 0, (len(datas[k]),), (1,))
        for k in range(count)), APPENDS)
    out = bytearray()
    central = bytearray()
    for name, data in ((b"archive/data.pkl", pkl), (b"archive/version", b"3\n")):
        central += _central_header(name, data, len(out))
        out += _local_header(name, data) + data
    for k, name in enumerate(names):
        central += _central_header(name, datas[k], len(out) + len(tail) - len(datas[k])
                                   - 30 - len(name))
    out += tail
    end = struct.pack("<4s4H2LH", b"PK\x05\x06", 0, 0, count + 2, count + 2, len(central),
                      len(out), 0)
    return bytes(out + central + end)


# ----------------------------------------------------------------------------------------------
# the corpus


@dataclass(frozen=True)
class Hostile:
    """A file, what chainrule.load must do with it, and what torch.load(weights_only=True) does.

    ``error`` None means the file loads. ``torch`` is ``"type"`` (PyTorch raises the same type),
    ``"sentence"`` (the same type and first sentence; for an ``UnpicklingError``, of the
    detail after "WeightsUnpickler error:"), ``"loads"`` (PyTorch loads it: chainrule is
    stricter, see ``why``), the name of the exception PyTorch raises instead, or ``"skip"``
    (running PyTorch on it is unsafe: ``why`` says what happens).
    """

    name: str
    build: Callable[[Path], bytes]
    error: type[BaseException] | None
    match: str
    torch: str
    why: str = ""


U = pickle.UnpicklingError
R = RuntimeError
WO = r"(?s)^Weights only load failed\..*WeightsUnpickler error: "


def _deep(opener: bytes, closer: bytes, depth: int) -> bytes:
    return opener * depth + closer * depth


def _quadratic_sets(items: int) -> bytes:
    """A memoized list of ``items`` ints, then ``items`` sets each copying it."""
    body = EMPTY_LIST + put(1) + MARK + b"".join(b"M" + struct.pack("<H", i)
                                                 for i in range(items)) + APPENDS
    sets = glob("builtins", "set") + put(2)
    copies = (get(2) + get(1) + TUPLE1 + REDUCE) * items
    return pickled(EMPTY_LIST, MARK, body, sets, copies, APPENDS)


def corpus() -> list[Hostile]:
    """Every hostile file, by name."""
    t4 = tensor(storage_id())
    items = [
        # --- shared state: BUILD/SETITEM/APPEND aimed at globals and foreign objects ---------
        Hostile("poison_storage_type_build",
                lambda m: archive(pickled(glob("torch", "FloatStorage"),
                                          tup(NONE, EMPTY_DICT + text("dtype") + text("i4")
                                              + SETITEM), BUILD)),
                U, WO + "Can only build OrderedDict, but got torch.FloatStorage", "type"),
        Hostile("poison_storage_type_dict_state",
                lambda m: archive(pickled(glob("torch", "FloatStorage"), EMPTY_DICT,
                                          text("code") + text("i4") + SETITEM, BUILD)),
                U, WO + "Can only build OrderedDict", "type"),
        Hostile("setitem_on_a_global",
                lambda m: archive(pickled(glob("collections", "OrderedDict"),
                                          num(1), num(2), SETITEM)),
                U, WO + "Can only SETITEM", "type"),
        Hostile("append_to_a_global",
                lambda m: archive(pickled(glob("builtins", "set"), num(1), APPEND)),
                U, WO + "Can only append to lists", "type"),
        Hostile("build_on_a_dtype",
                lambda m: archive(pickled(glob("torch", "float32"), EMPTY_DICT, BUILD)),
                U, WO + "Can only build OrderedDict", "type"),
        Hostile("build_on_a_storage",
                lambda m: archive(pickled(storage_id(), EMPTY_DICT, BUILD), {"0": ONES}),
                U, WO + "Can only build OrderedDict", "loads",
                "PyTorch's BUILD with an empty state on its TypedStorage is a no-op"),
        Hostile("setitem_on_a_tensor",
                lambda m: archive(pickled(t4, num(0), num(5), SETITEM), {"0": ONES}),
                U, WO + "Can only SETITEM", "type"),
        Hostile("appends_to_a_tensor",
                lambda m: archive(pickled(t4, MARK, num(5), APPENDS), {"0": ONES}),
                U, WO + "Can only extend lists", "type"),
        Hostile("additems_to_a_size",
                lambda m: archive(pickled(glob("torch", "Size") + tup(tup(num(1))) + REDUCE,
                                          MARK, num(5), ADDITEMS)),
                U, WO + "Can only add to sets", "type"),
        Hostile("build_shadowing_ordered_dict_method",
                lambda m: archive(pickled(hooks(), EMPTY_DICT, text("keys"), num(1), SETITEM,
                                          BUILD)),
                U, WO + "refusing to set attribute 'keys'", "loads",
                "PyTorch sets od.__dict__['keys'], so od.keys() then fails"),
        Hostile("parameter_state_overwrites_a_slot",
                lambda m: archive(pickled(glob("torch._utils", "_rebuild_parameter_with_state")
                                          + tup(t4, NEWTRUE, hooks(), EMPTY_DICT + text("_data")
                                                + num(1) + SETITEM) + REDUCE), {"0": ONES}),
                U, WO + "refusing to set attribute '_data'", "loads",
                "PyTorch setattr()s any name, here a slot chainrule's tensors depend on"),
        # --- code execution -----------------------------------------------------------------
        Hostile("os_system", lambda m: archive(pickled(run_command(m))),
                U, WO + r"Trying to load unsupported GLOBAL posix\.system whose module posix "
                "is blocked", "sentence"),
        Hostile("builtins_exec",
                lambda m: archive(pickled(glob("builtins", "exec")
                                          + tup(text(f"open({str(m)!r}, 'w').close()"))
                                          + REDUCE)),
                U, WO + "Unsupported global: GLOBAL exec was not an allowed global", "sentence"),
        Hostile("subprocess_call", lambda m: archive(pickled(run_command(m, "subprocess",
                                                                         "getoutput"))),
                U, WO + "Unsupported global: GLOBAL subprocess.getoutput", "sentence"),
        Hostile("stack_global_protocol_4",
                lambda m: archive(b"\x80\x04\x8c\x05posix\x8c\x06system\x93"
                                  + tup(text(f"touch {m}")) + REDUCE + STOP),
                U, WO + r"Trying to load unsupported GLOBAL posix\.system", "type"),
        Hostile("inst_opcode",
                lambda m: archive(PROTO2 + MARK + text(f"touch {m}") + b"iposix\nsystem\n"
                                  + STOP),
                U, WO + "Unsupported operand 105", "sentence"),
        Hostile("ext1_opcode", lambda m: archive(pickled(b"\x82\x01" + tup() + REDUCE)),
                U, WO + "Unsupported operand 130", "sentence"),
        Hostile("text_persid", lambda m: archive(PROTO2 + b"P0\n" + STOP),
                U, WO + "Unsupported operand 80", "sentence"),
        Hostile("reduce_on_a_string", lambda m: archive(pickled(text("x"), EMPTY_TUPLE, REDUCE)),
                U, WO + "Trying to call reduce for unrecognized function", "type"),
        Hostile("newobj_on_a_container",
                lambda m: archive(pickled(glob("collections", "OrderedDict"), EMPTY_TUPLE,
                                          b"\x81")),
                U, WO + "Can only create new object for nn.Parameter", "loads",
                "PyTorch runs OrderedDict.__new__"),
        Hostile("rebuild_from_type_with_a_container",
                lambda m: archive(pickled(glob("torch._tensor", "_rebuild_from_type_v2")
                                          + tup(glob("collections", "OrderedDict"),
                                                glob("torch", "Tensor"), EMPTY_TUPLE, NONE)
                                          + REDUCE)),
                U, WO + "_rebuild_from_type_v2 calls only tensor rebuild functions",
                "AttributeError", "PyTorch calls the global, then fails on the result"),
        Hostile("tensor_with_python_attribute",
                lambda m: archive(pickled(glob("torch._tensor", "_rebuild_from_type_v2")
                                          + tup(glob("torch._utils", "_rebuild_tensor_v2"),
                                                glob("torch", "Tensor"),
                                                tup(storage_id(), num(0), tup(num(4)),
                                                    tup(num(1)), NEWFALSE, hooks()),
                                                EMPTY_DICT + text("foo") + num(1) + SETITEM)
                                          + REDUCE), {"0": ONES}),
                U, WO + "a tensor in this file carries the Python attribute 'foo'", "loads",
                "chainrule tensors have no __dict__"),
        Hostile("backward_hooks",
                lambda m: archive(pickled(tensor(storage_id()).replace(
                    hooks(), EMPTY_DICT + num(1) + num(2) + SETITEM)), {"0": ONES}),
                U, WO + "a tensor in this file has backward hooks", "loads",
                "PyTorch stores them unused"),
        Hostile("encode_with_another_codec",
                lambda m: archive(pickled(glob("_codecs", "encode")
                                          + tup(text("x"), text("rot13")) + REDUCE)),
                U, WO + r"_codecs\.encode is only loaded as \(str, 'latin1'\)", "loads",
                "PyTorch calls any codec"),
        Hostile("int_persistent_id", lambda m: archive(pickled(num(5) + b"Q")),
                U, WO + "persistent_load id must be tuple", "AssertionError"),
        Hostile("module_persistent_id",
                lambda m: archive(pickled(tup(text("module"), text("x"), text("y")) + b"Q")),
                U, WO + "Only persistent_load of storage is allowed", "type"),
        # --- memory: sizes, strides and storages --------------------------------------------
        Hostile("stride_zero_8192x8192_over_one_float",
                lambda m: one_tensor(tensor(storage_id(numel=1), 0, (8192, 8192), (0, 0)),
                                     ONES[:4]),
                None, "", "loads"),
        Hostile("conjugate_of_a_stride_zero_8192x8192_view",
                lambda m: one_tensor(tensor(storage_id("ComplexFloatStorage", numel=1), 0,
                                            (8192, 8192), (0, 0), False,
                                            EMPTY_DICT + text("conj") + NEWTRUE + SETITEM),
                                     ONES[:8]),
                None, "", "loads"),
        Hostile("entry_longer_than_declared",
                lambda m: one_tensor(t4, ONES * 2),
                R, r"^record size \(32 bytes\) does not match expected size \(16 bytes",
                "sentence"),
        Hostile("entry_shorter_than_declared",
                lambda m: one_tensor(t4, ONES[:8]),
                R, r"^record size \(8 bytes\) does not match expected size \(16 bytes",
                "sentence"),
        Hostile("negative_storage_size",
                lambda m: one_tensor(tensor(storage_id(numel=-4))),
                R, r"^record size \(16 bytes\) does not match expected size \(-16 bytes",
                "TypeError", "get_storage_from_record(): incompatible function arguments"),
        Hostile("huge_storage_size",
                lambda m: one_tensor(tensor(storage_id(numel=1 << 61))),
                R, r"^record size \(16 bytes\) does not match expected size", "sentence"),
        Hostile("offset_beyond_storage", lambda m: one_tensor(tensor(storage_id(), 1)),
                R, "^Trying to resize storage that is not resizable", "sentence"),
        Hostile("overlapping_view_past_the_end",
                lambda m: one_tensor(tensor(storage_id(), 0, (3, 3), (1, 1))),
                R, "^Trying to resize storage that is not resizable", "sentence"),
        Hostile("negative_offset", lambda m: one_tensor(tensor(storage_id(), -1)),
                R, "^Tensor: invalid storage offset -1$", "sentence"),
        Hostile("negative_size", lambda m: one_tensor(tensor(storage_id(), 0, (-1,))),
                R, r"^Trying to create tensor with negative dimension -1", "type"),
        Hostile("negative_stride", lambda m: one_tensor(tensor(storage_id(), 3, (4,), (-1,))),
                R, r"^Storage size calculation overflowed with sizes=\[4\] and strides=\[-1\]",
                "sentence"),
        Hostile("size_overflow",
                lambda m: one_tensor(tensor(storage_id(), 0, (1 << 62, 4), (0, 0))),
                R, "^numel: integer multiplication overflow", "sentence"),
        Hostile("extent_overflow",
                lambda m: one_tensor(tensor(storage_id(), 0, (1 << 62,), (1,))),
                R, "^Storage size calculation overflowed", "sentence"),
        Hostile("size_stride_length_mismatch",
                lambda m: one_tensor(tensor(storage_id(), 0, (4, 1), (1,))),
                R, r"^unequal size length \(2\) and stride length \(1\)", "sentence"),
        Hostile("seventy_dimensions",
                lambda m: one_tensor(tensor(storage_id(), 0, (1,) * 70, (1,) * 70)),
                R, "a tensor has 70 dimensions", "loads", "NumPy has at most 64 dimensions"),
        Hostile("missing_storage_entry",
                lambda m: archive(pickled(tensor(storage_id(key="9"))), {"0": ONES}),
                R, "^PytorchStreamReader failed locating file data/9: file not found", "sentence"),
        Hostile("memo_index_2_to_31",
                lambda m: archive(pickled(NONE, put(0x7FFFFFFF))),
                None, "", "loads"),
        Hostile("missing_memo_entry", lambda m: archive(pickled(get(5))),
                U, WO + "Memo value not found at index 5", "KeyError"),
        Hostile("string_longer_than_the_file",
                lambda m: archive(PROTO2 + b"X\xff\xff\xff\x7fab" + STOP),
                U, WO + "pickle data was truncated", "EOFError"),
        Hostile("empty_sets_flood",
                lambda m: archive(pickled(EMPTY_LIST, MARK, EMPTY_SET * 100_000, APPENDS)),
                U, WO + "the pickle builds more than", "loads",
                "216 bytes of objects per byte of pickle"),
        Hostile("quadratic_copies_of_a_memoized_list",
                lambda m: archive(_quadratic_sets(1000)),
                U, WO + "the pickle builds more than", "loads",
                "1000 sets of 1000 items (32 MB) from 9 KB"),
        Hostile("mark_flood", lambda m: archive(pickled(MARK * 200_000)),
                U, WO + "unpickling stack underflow", "IndexError"),
        # --- nesting ------------------------------------------------------------------------
        Hostile("dict_key_nested_a_million_deep",
                lambda m: archive(pickled(EMPTY_DICT, EMPTY_TUPLE, TUPLE1 * 1_000_000, NONE,
                                          SETITEM)),
                U, WO + "the pickle nests tuples or frozensets more than 1000 deep", "skip",
                "PyTorch's unpickler hashes the key and CPython segfaults"),
        Hostile("tuples_nested_by_mark",
                lambda m: archive(pickled(_deep(MARK, b"t", 100_000))),
                U, WO + "the pickle nests tuples or frozensets more than 1000 deep", "loads",
                "hashing the result would crash CPython"),
        Hostile("frozensets_nested",
                lambda m: archive(pickled(_deep(MARK, b"\x91", 100_000))),
                U, WO + "the pickle nests tuples or frozensets more than 1000 deep", "type",
                "PyTorch does not know the FROZENSET opcode"),
        # --- zip structure ------------------------------------------------------------------
        Hostile("dotdot_entry_names",
                lambda m: archive(pickled(t4), {"0": ONES}, folder=".."),
                R, r"zip entry name '\.\./data\.pkl' is not a plain relative path", "loads",
                "PyTorch takes '..' as the archive's folder name (nothing is extracted)"),
        Hostile("dotdot_inside_a_name",
                lambda m: archive(pickled(t4), {"../data/0": ONES}),
                R, "is not a plain relative path", "type"),
        Hostile("absolute_entry_name",
                lambda m: archive(pickled(t4), {"0": ONES},
                                  extra=(("/etc/archive/x", b""),)),
                R, "is not a plain relative path", "type"),
        Hostile("duplicate_storage_entry",
                lambda m: archive(pickled(t4), {"0": ONES},
                                  extra=(("archive/data/0", b"\0" * 16),)),
                R, "two entries named 'archive/data/0'", "loads",
                "miniz picks one of the two entries"),
        Hostile("duplicate_pickle_entry",
                lambda m: archive(pickled(t4), {"0": ONES},
                                  extra=(("archive/data.pkl", pickled(num(5))),)),
                R, "two entries named 'archive/data.pkl'", "loads",
                "miniz picks one of the two entries"),
        Hostile("deflated_storage_bomb",
                lambda m: archive(pickled(tensor(storage_id("ByteStorage", numel=64 << 20), 0,
                                                 (1,), (1,))), {"0": bytes(64 << 20)},
                                  method=zipfile.ZIP_DEFLATED),
                R, r"zip entry 'archive/data/0' is compressed \(method 8\)", "loads",
                "PyTorch inflates 64 MiB from a 64 KiB file"),
        Hostile("overlapping_entries",
                lambda m: overlapping_archive(1 << 20, 128),
                R, "overlap", "loads", "128 MiB of storages from a 1 MiB file"),
        Hostile("truncated_archive",
                lambda m: one_tensor(t4)[:300],
                R, "^PytorchStreamReader failed reading zip archive: failed finding central "
                "directory", "sentence"),
        Hostile("no_version_record", lambda m: one_tensor(t4, version=None),
                R, r'^Expected hasRecord\("version"\) to be true, but got false\.', "sentence"),
        Hostile("version_from_the_future", lambda m: one_tensor(t4, version=b"99\n"),
                R, "Attempted to read a PyTorch file with version 99, but the maximum "
                "supported version for reading is 10", "type"),
        Hostile("no_data_pkl",
                lambda m: archive(b"").replace(b"archive/data.pkl", b"archive/datx.pkl"),
                R, "^PytorchStreamReader failed locating file data.pkl: file not found",
                "sentence"),
        Hostile("not_in_a_subdirectory",
                lambda m: archive(pickled(t4), {"0": ONES}).replace(b"archive/data.pkl",
                                                                    b"archive_data.pkl"),
                R, "^file in archive is not in a subdirectory", "type"),
        Hostile("unknown_byte_order", lambda m: one_tensor(t4, byteorder=b"middle"),
                R, "^Unknown endianness type: middle", "ValueError"),
        # --- the pickle machine -------------------------------------------------------------
        Hostile("truncated_pickle", lambda m: archive(PROTO2 + EMPTY_DICT),
                U, WO + "pickle data was truncated", "EOFError"),
        Hostile("stack_underflow", lambda m: archive(PROTO2 + STOP),
                U, WO + "unpickling stack underflow", "IndexError"),
        Hostile("unhashable_key",
                lambda m: archive(pickled(EMPTY_DICT, EMPTY_LIST, num(2), SETITEM)),
                U, WO + "invalid key in the pickle: unhashable type", "TypeError"),
        Hostile("zero_opcode", lambda m: archive(PROTO2 + b"\0"),
                U, WO + "Unsupported operand 0", "sentence"),
        Hostile("protocol_9", lambda m: archive(b"\x80\x09" + NONE + STOP),
                U, WO + "unsupported pickle protocol: 9", "loads",
                "PyTorch only warns about the protocol"),
        # --- legacy streams -----------------------------------------------------------------
        Hostile("legacy_bad_magic",
                lambda m: legacy(pickled(NONE), [], [], magic=12345),
                R, r"^Invalid magic number; corrupt file\?", "sentence"),
        Hostile("legacy_wrong_storage_size",
                lambda m: legacy(pickled(tensor(storage_id(legacy=True))), ["0"],
                                 [(5, ONES + b"\0" * 4)]),
                R, "^storage has wrong byte size", "type"),
        Hostile("legacy_truncated_storage",
                lambda m: legacy(pickled(tensor(storage_id(legacy=True))), ["0"],
                                 [(4, ONES[:12])]),
                R, r"^unexpected EOF, expected 4 more bytes\. The file might be corrupted\.",
                "sentence"),
        Hostile("legacy_huge_storage_not_in_the_file",
                lambda m: legacy(pickled(tensor(storage_id(numel=1 << 34, legacy=True), 0, (1,),
                                                (1,))), ["0"], [(1 << 34, ONES)]),
                R, "^unexpected EOF", "skip", "PyTorch first allocates the 64 GiB"),
        Hostile("legacy_storage_missing_from_the_list",
                lambda m: legacy(pickled(tensor(storage_id(numel=1 << 34, legacy=True), 0, (1,),
                                                (1,))), [], []),
                R, "is used but its bytes are not in the file", "skip",
                "PyTorch allocates 64 GiB (and would return it uninitialized)"),
        Hostile("legacy_code", lambda m: legacy(pickled(run_command(m)), [], []),
                U, WO + r"Trying to load unsupported GLOBAL posix\.system", "sentence"),
        Hostile("raw_pickle_running_code", lambda m: pickled(run_command(m)),
                U, WO + r"Trying to load unsupported GLOBAL posix\.system", "sentence"),
        Hostile("empty_file", lambda m: b"", R, "is empty", "EOFError"),
    ]
    names = [h.name for h in items]
    assert len(set(names)) == len(names)
    return items
