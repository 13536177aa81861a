"""cov (corrections, frequency and observation weights) and corrcoef."""

from __future__ import annotations

from typing import Any

from . import OpInfo


def _fw(lib: Any) -> Any:
    return lib.tensor([1, 2, 3, 1])


OPS = [
    OpInfo("cov", lambda lib, x: lib.cov(x), [((3, 4),), ((5,),)]),
    OpInfo("cov_correction0", lambda lib, x: lib.cov(x, correction=0), [((2, 4),)]),
    OpInfo("cov_fweights", lambda lib, x: lib.cov(x, fweights=_fw(lib)), [((3, 4),)]),
    OpInfo("cov_aweights", lambda lib, x, w: lib.cov(x, aweights=w.abs() + 0.1), [((3, 4), (4,))]),
    OpInfo(
        "cov_both_weights",
        lambda lib, x, w: lib.cov(x, fweights=_fw(lib), aweights=w.abs() + 0.1),
        [((3, 4), (4,))],
    ),
    OpInfo("corrcoef", lambda lib, x: lib.corrcoef(x), [((3, 4),), ((2, 6),)]),
    OpInfo("corrcoef_1d", lambda lib, x: lib.corrcoef(x), [((5,),)]),
    OpInfo("Tensor.cov", lambda lib, x: x.cov(correction=0), [((3, 4),)]),
    OpInfo("Tensor.corrcoef", lambda lib, x: x.corrcoef(), [((3, 4),)]),
]
