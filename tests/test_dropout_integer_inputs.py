"""Dropout of integer and bool tensors raises PyTorch's error (while training, 0 < p < 1).

PyTorch's noise has the input's dtype: dividing it in place by ``1 - p`` (alpha dropout:
multiplying) cannot keep an integer dtype, so it raises "result type Float can't be cast to
the desired output type Long" after drawing the noise. chainrule computed a result (``[2, 0,
2]``). Not training, ``p=0`` and ``p=1`` return without dividing, as PyTorch's.
"""

from __future__ import annotations

import warnings
from typing import Any

import pytest

from .outcomes import same_outcome

CASES = {
    "dropout int64": lambda lib: lib.nn.functional.dropout(lib.ones(3, dtype=lib.int64), 0.5),
    "not training": lambda lib: lib.nn.functional.dropout(
        lib.ones(3, dtype=lib.int64), 0.5, training=False
    ),
    "bool": lambda lib: lib.nn.functional.dropout(lib.ones(3, dtype=lib.bool), 0.5),
    "uint8 in place": lambda lib: lib.nn.functional.dropout(
        lib.ones(3, dtype=lib.uint8), 0.5, inplace=True
    ),
    "torch.dropout": lambda lib: lib.dropout(lib.ones(3, dtype=lib.int64), 0.5, True),
    "alpha_dropout": lambda lib: lib.nn.functional.alpha_dropout(
        lib.ones(3, dtype=lib.int64), 0.5, True
    ),
    "feature_alpha_dropout": lambda lib: lib.nn.functional.feature_alpha_dropout(
        lib.ones(2, 3, dtype=lib.int32), 0.5, True
    ),
    "dropout2d": lambda lib: lib.nn.functional.dropout2d(lib.ones(2, 3, 4, 5, dtype=lib.int64)),
    "dropout1d int16": lambda lib: lib.nn.functional.dropout1d(
        lib.ones(2, 3, 4, dtype=lib.int16), 0.5
    ),
    "nn.Dropout int8": lambda lib: lib.nn.Dropout(0.3)(lib.ones(3, dtype=lib.int8)),
    "p=0": lambda lib: lib.nn.functional.dropout(lib.ones(3, dtype=lib.int64), 0.0),
    "p=1": lambda lib: lib.nn.functional.dropout(lib.ones(3, dtype=lib.int64), 1.0),
    "alpha p=1": lambda lib: lib.nn.functional.alpha_dropout(
        lib.ones(3, dtype=lib.int64), 1.0, True
    ),
}


@pytest.mark.parametrize("case", list(CASES))
def test_integer_dropout(case: str) -> None:
    def program(lib: Any) -> Any:
        lib.manual_seed(0)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                outcome = ("ok", CASES[case](lib))
        except RuntimeError as error:
            outcome = ("raised", str(error))
        # the noise was drawn either way: the generator is where PyTorch's is
        return outcome, lib.rand(2)

    same_outcome(program)


def test_in_place_refusal_leaves_the_input() -> None:
    def program(lib: Any) -> Any:
        x = lib.tensor([3, 4, 5], dtype=lib.int64)
        with pytest.raises(RuntimeError):
            lib.nn.functional.dropout(x, 0.5, inplace=True)
        return x, x._version

    same_outcome(program)
