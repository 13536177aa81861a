"""``ReduceOp``: how a reducing collective combines the ranks' values."""

from __future__ import annotations

import enum

__all__ = ["ReduceOp"]


class RedOpType(enum.Enum):
    """The reduction kinds, with PyTorch's names and numbers (``<RedOpType.SUM: 0>``)."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8


class ReduceOp:
    """``ReduceOp.SUM``, ``AVG``, ``PRODUCT``, ``MIN``, ``MAX``, ``BAND``, ``BOR``, ``BXOR``.

    Example:
        >>> import chainrule.distributed as dist
        >>> dist.ReduceOp.SUM
        <RedOpType.SUM: 0>
    """

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
