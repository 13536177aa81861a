"""The seam between chainrule and the array library that runs the math (NumPy today).

Everything above this module talks to ``np`` through here, so another array library with NumPy's
API (CuPy, say) can be put behind the same names later.
"""

from __future__ import annotations

import numpy as np

from . import _special as special

__all__ = ["np", "special"]

# PyTorch produces inf and nan silently (log(0), 0/0, sqrt(-1)); NumPy warns. Checking error
# state around every op would cost more than the op on small tensors, so, as the one global
# setting chainrule makes, NumPy's floating-point error handling is set to "ignore" (in the
# importing thread's context; restore it with numpy.seterr if your own NumPy code needs it).
np.seterr(all="ignore")
