"""Contractions: einsum (explicit and implicit outputs, ellipses, diagonals, three operands,
the sublist form), tensordot (mm, dot and mul-sum paths) and kron."""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _einsum(equation: str) -> Any:
    def call(lib: Any, *xs: Any) -> Any:
        return lib.einsum(equation, *xs)

    return call


def _tensordot(dims: Any) -> Any:
    def call(lib: Any, a: Any, b: Any) -> Any:
        return lib.tensordot(a, b, dims)

    return call


OPS = [
    OpInfo("einsum_mm", _einsum("ij,jk->ik"), [((2, 3), (3, 4)), ((2, 0), (0, 3))]),
    OpInfo("einsum_bmm", _einsum("bij,bjk->bik"), [((2, 2, 3), (2, 3, 4))]),
    OpInfo("einsum_implicit", _einsum("...ij,...jk"), [((2, 2, 3), (3, 4)), ((2, 3), (3, 1))]),
    OpInfo("einsum_sum", _einsum("ij->"), [((2, 3),), ((0,) * 2,)]),
    OpInfo("einsum_diagonal", _einsum("ii->i"), [((3, 3),)]),
    OpInfo("einsum_trace_batch", _einsum("...ii->..."), [((2, 3, 3),)]),
    OpInfo("einsum_transpose", _einsum("ij->ji"), [((2, 3),)]),
    OpInfo("einsum_outer", _einsum("i,j->ij"), [((2,), (3,))]),
    OpInfo("einsum_inner", _einsum("ij,ij->"), [((2, 3), (2, 3))]),
    OpInfo("einsum_hadamard", _einsum("ij,ij->ij"), [((2, 3), (2, 3))]),
    OpInfo("einsum_three", _einsum("bn,anm,bm->ba"), [((2, 3), (4, 3, 5), (2, 5))]),
    OpInfo("einsum_chain", _einsum("ij,jk,kl->il"), [((2, 3), (3, 4), (4, 2))]),
    OpInfo("einsum_broadcast", _einsum("...,...->..."), [((2, 1), (3,))]),
    OpInfo("einsum_repeated", _einsum("iij,jk->ik"), [((2, 2, 3), (3, 4))]),
    OpInfo("einsum_sublist", lambda lib, a, b: lib.einsum(a, [0, 1], b, [1, 2], [0, 2]),
           [((2, 3), (3, 4))]),
    OpInfo("einsum_list", lambda lib, a, b: lib.einsum("ij,jk", [a, b]), [((2, 3), (3, 4))]),
    OpInfo("tensordot_mm", _tensordot(1), [((2, 3), (3, 4)), ((2, 3), (3,)), ((2, 1), (3, 4))]),
    OpInfo("tensordot_outer", _tensordot(0), [((2,), (3,))]),
    OpInfo("tensordot_dot", _tensordot(2), [((2, 3), (2, 3))]),
    OpInfo("tensordot_mul_sum", _tensordot(([1, 0], [0, 1])), [((2, 3), (3, 2))]),
    OpInfo("tensordot_lists", _tensordot(([0], [1])), [((3, 2), (4, 3))]),
    OpInfo("kron", lambda lib, a, b: lib.kron(a, b),
           [((2, 3), (3, 4)), ((2, 3), (3,)), ((), (3,)), ((2, 0), (3, 1)), ((2, 1, 3), (2, 2))]),
    OpInfo("kron_method", lambda lib, a, b: a.kron(b), [((2, 3), (2,))]),
]
