"""diff (orders, prepend/append), trapezoid/trapz (spacing numbers and sample points),
cumulative_trapezoid and gradient (its tuple stacked; coordinates kept increasing)."""

from __future__ import annotations

from . import OpInfo

M = [((3, 4),), ((5,),)]

OPS = [
    OpInfo("diff", lambda lib, x: lib.diff(x), M),
    OpInfo("diff_n2_dim0", lambda lib, x: lib.diff(x, n=2, dim=0), [((4, 3),)]),
    OpInfo("diff_n0", lambda lib, x: lib.diff(x, n=0), M[:1]),
    OpInfo(
        "diff_prepend_append",
        lambda lib, x, p, a: lib.diff(x, prepend=p, append=a),
        [((3, 4), (3, 1), (3, 2))],
    ),
    OpInfo("Tensor.diff", lambda lib, x: x.diff(dim=0), M[:1]),
    OpInfo("gradient", lambda lib, x: lib.stack(lib.gradient(x)), M),
    OpInfo(
        "gradient_spacing_edge2",
        lambda lib, x: lib.stack(lib.gradient(x, spacing=[0.5, 2.0], edge_order=2)),
        M[:1],
    ),
    OpInfo(
        "gradient_coordinates",
        lambda lib, x, c: lib.gradient(x, spacing=((c.abs() + 0.5).cumsum(0),), dim=0)[0],
        [((4, 3), (4,))],
        # (the coordinates' gradient cancels to about 0, noise in half precision:
        # tests/test_gradient_function.py compares it in float64)
        grad_inputs=(0,),
    ),
    OpInfo("trapezoid", lambda lib, y: lib.trapezoid(y), M),
    OpInfo("trapezoid_dx", lambda lib, y: lib.trapezoid(y, dx=0.25, dim=0), M),
    OpInfo(
        "trapezoid_x", lambda lib, y, x: lib.trapezoid(y, x), [((3, 4), (3, 4)), ((3, 4), (4,))]
    ),
    OpInfo("trapz", lambda lib, y: lib.trapz(y, dx=2), M),
    OpInfo("trapz_x", lambda lib, y, x: lib.trapz(y, x, dim=0), [((3, 4), (3,))]),
    OpInfo("cumulative_trapezoid", lambda lib, y: lib.cumulative_trapezoid(y), M),
    OpInfo(
        "cumulative_trapezoid_dx", lambda lib, y: lib.cumulative_trapezoid(y, dx=3, dim=0), M[:1]
    ),
    OpInfo(
        "cumulative_trapezoid_x",
        lambda lib, y, x: lib.cumulative_trapezoid(y, x),
        [((3, 4), (3, 4)), ((3, 4), (4,))],
    ),
]
