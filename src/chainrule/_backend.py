"""The seam between chainrule and the array library that runs the math (NumPy today).

Everything above this module talks to ``np`` through here, so another array library with NumPy's
API (CuPy, say) can be put behind the same names later.
"""

from __future__ import annotations

import numpy as np

from . import _special as special

__all__ = ["np", "special"]
