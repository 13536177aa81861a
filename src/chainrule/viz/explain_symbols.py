"""The symbols behind :mod:`.explain`: the op table's formulas run on SymPy expressions, and
printers that write them as the seed articles do (``9a²``, ``2·1 + 2 + 1``, ``−2b``).

The op table's derivatives are written once for arrays and for recorded Tensors; each receives
an ``ops`` namespace and the gradient. Given :data:`SYMBOLIC_OPS` as ``ops`` and SymPy symbols
for the gradient and the saved values, the same formula returns its expression:
``MulBackward0``'s ``grad * other`` becomes ``g·b``, ``PowBackward0``'s becomes ``3·g·a²``.
Formulas that use array-only helpers raise or return unknown functions; :mod:`.explain` checks
every formula against the number the node itself computes and falls back to the number.

SymPy is imported by the caller (an optional dependency, in the ``viz`` extra).
"""

from __future__ import annotations

import re
from typing import Any

import sympy as sp
from sympy.printing.latex import LatexPrinter
from sympy.printing.precedence import PRECEDENCE
from sympy.printing.str import StrPrinter

__all__ = [
    "SYMBOLIC_OPS",
    "forward_expression",
    "is_elementwise",
    "evaluable",
    "as_sympy_number",
    "UnicodePrinter",
    "LatexValuePrinter",
    "to_text",
    "to_latex",
]

_SUPERSCRIPT = str.maketrans("0123456789-", "⁰¹²³⁴⁵⁶⁷⁸⁹⁻")
MINUS = "−"


def as_sympy_number(value: Any) -> Any:
    """A Python number as SymPy writes it best: ``3.0`` as ``3``, ``0.5`` as ``1/2``."""
    if isinstance(value, bool):
        return sp.Integer(int(value))
    if isinstance(value, int):
        return sp.Integer(value)
    if isinstance(value, float):
        if value.is_integer():
            return sp.Integer(int(value))
        text = repr(value)
        if len(text) <= 6 and "e" not in text:
            return sp.Rational(text)
        return sp.Float(value, 6)
    return value


def _iverson(condition: Any) -> Any:
    """``[condition]``: 1 where it holds, else 0."""
    return sp.Piecewise((1, condition), (0, True))


class _SymbolicOps:
    """The ``ops`` namespace derivatives receive, on SymPy expressions (element-wise meaning)."""

    conj = staticmethod(sp.conjugate)
    exp = staticmethod(sp.exp)
    log = staticmethod(sp.log)
    sin = staticmethod(sp.sin)
    cos = staticmethod(sp.cos)
    tan = staticmethod(sp.tan)
    sinh = staticmethod(sp.sinh)
    cosh = staticmethod(sp.cosh)
    tanh = staticmethod(sp.tanh)
    sqrt = staticmethod(sp.sqrt)
    abs = staticmethod(sp.Abs)
    sign = staticmethod(sp.sign)
    sgn = staticmethod(sp.sign)

    @staticmethod
    def mul(a: Any, b: Any) -> Any:
        return a * b

    @staticmethod
    def div(a: Any, b: Any) -> Any:
        return a / b

    @staticmethod
    def add(a: Any, b: Any, alpha: Any = 1) -> Any:
        return a + alpha * b

    @staticmethod
    def sub(a: Any, b: Any, alpha: Any = 1) -> Any:
        return a - alpha * b

    @staticmethod
    def neg(a: Any) -> Any:
        return -a

    @staticmethod
    def pow(a: Any, b: Any) -> Any:
        return a ** as_sympy_number(b)

    @staticmethod
    def reciprocal(a: Any) -> Any:
        return 1 / a

    @staticmethod
    def rsqrt(a: Any) -> Any:
        return 1 / sp.sqrt(a)

    @staticmethod
    def square(a: Any) -> Any:
        return a**2

    @staticmethod
    def zeros_like(a: Any, *args: Any, **kwargs: Any) -> Any:
        return sp.Integer(0)

    @staticmethod
    def ones_like(a: Any, *args: Any, **kwargs: Any) -> Any:
        return sp.Integer(1)

    @staticmethod
    def tanh_backward(grad: Any, result: Any) -> Any:
        return grad * (1 - result**2)

    @staticmethod
    def sigmoid_backward(grad: Any, result: Any) -> Any:
        return grad * result * (1 - result)

    @staticmethod
    def threshold_backward(grad: Any, value: Any, threshold: Any) -> Any:
        return grad * _iverson(sp.StrictGreaterThan(value, as_sympy_number(threshold)))

    # Shape operations are the identity on the one-element tensors their formulas are
    # read for (explain checks each formula against the node's own number).
    @staticmethod
    def expand(a: Any, *args: Any, **kwargs: Any) -> Any:
        return a

    reshape = view = expand_as = sum_to_size = squeeze = unsqueeze = contiguous = expand

    @staticmethod
    def where(condition: Any, a: Any, b: Any) -> Any:
        return sp.Piecewise((a, condition), (b, True))


SYMBOLIC_OPS = _SymbolicOps()


def _sigma(x: Any) -> Any:
    return 1 / (1 + sp.exp(-x))


def _relu(x: Any) -> Any:
    return sp.Max(x, 0)


# Functions written by name in the formulas (σ(a) reads better than 1/(1 + exp(−a))), real
# valued (so conjugate(σ(a)) is σ(a)), and what they are when a number is wanted.
SIGMA = sp.Function("σ", real=True)
RELU = sp.Function("relu", real=True)
_NAMED = ((SIGMA, _sigma), (RELU, _relu))


def evaluable(expr: Any) -> Any:
    """``expr`` with the functions written by name (σ, relu) replaced by their definitions."""
    expr = sp.sympify(expr)
    for function, definition in _NAMED:
        if expr.has(function):
            expr = expr.replace(function, definition)
    return expr


# How each op's output is written in its inputs (PyTorch's node name without Backward<n>).
# ``s``: the first input, ``o``: the second, ``k``: the saved numbers by parameter name.
_FORWARD: dict[str, Any] = {
    "Add": lambda s, o, k: s + as_sympy_number(k.get("alpha", 1)) * o,
    "Sub": lambda s, o, k: s - as_sympy_number(k.get("alpha", 1)) * o,
    "Rsub": lambda s, o, k: o - as_sympy_number(k.get("alpha", 1)) * s,
    "Mul": lambda s, o, k: s * o,
    "Div": lambda s, o, k: s / o,
    "Pow": lambda s, o, k: s ** (o if o is not None else as_sympy_number(k.get("exponent"))),
    "Neg": lambda s, o, k: -s,
    "Exp": lambda s, o, k: sp.exp(s),
    "Log": lambda s, o, k: sp.log(s),
    "Log1P": lambda s, o, k: sp.log(1 + s),
    "Expm1": lambda s, o, k: sp.exp(s) - 1,
    "Sin": lambda s, o, k: sp.sin(s),
    "Cos": lambda s, o, k: sp.cos(s),
    "Tan": lambda s, o, k: sp.tan(s),
    "Sinh": lambda s, o, k: sp.sinh(s),
    "Cosh": lambda s, o, k: sp.cosh(s),
    "Tanh": lambda s, o, k: sp.tanh(s),
    "Sigmoid": lambda s, o, k: SIGMA(s),
    "Sqrt": lambda s, o, k: sp.sqrt(s),
    "Rsqrt": lambda s, o, k: 1 / sp.sqrt(s),
    "Reciprocal": lambda s, o, k: 1 / s,
    "Abs": lambda s, o, k: sp.Abs(s),
    "Relu": lambda s, o, k: RELU(s),
}


def is_elementwise(stem: str) -> bool:
    """Whether op ``stem`` works element by element (its formula then holds per element)."""
    return stem in _FORWARD


def forward_expression(stem: str, operands: list[Any], saved: dict[str, Any]) -> Any:
    """The output of op ``stem`` (``Mul``, ``Pow`` ...) written in its operands."""
    rule = _FORWARD.get(stem)
    first = operands[0] if operands else None
    second = operands[1] if len(operands) > 1 else None
    if rule is not None and first is not None:
        try:
            return rule(first, second, saved)
        except TypeError:
            pass
    args = [x for x in operands if x is not None]
    known = getattr(sp, stem.lower(), None)  # atan2, asin, erf ... SymPy knows them
    if isinstance(known, type) and issubclass(known, sp.Function):
        try:
            return known(*args)
        except (TypeError, ValueError):
            pass
    return sp.Function(stem.lower())(*args)


def numeric_value(expr: Any, values: dict[Any, float]) -> float | None:
    """``expr`` at ``values`` (symbol -> number), or None when it has no number there."""
    try:
        numbers = {k: sp.Float(v) for k, v in values.items()}
        return float(evaluable(expr).xreplace(numbers).evalf())
    except (TypeError, ValueError, AttributeError):
        return None


def _number_text(value: float) -> str:
    if float(value).is_integer() and abs(value) < 1e15:
        text = str(int(value))
    else:
        text = f"{value:.6g}"
    return text.replace("-", MINUS)


class UnicodePrinter(StrPrinter):
    """SymPy's ``str`` written as the articles write it: ``·`` for products, superscript
    powers, ``−``, a coefficient beside its variable (``9a²``); symbols in ``values`` printed
    as their numbers (``2·1 + 2 + 1``)."""

    def __init__(self, values: dict[Any, float] | None = None) -> None:
        super().__init__()
        self.values = values or {}

    def _print_Symbol(self, expr: Any) -> str:  # noqa: N802 - SymPy's printer protocol
        if expr in self.values:
            text = _number_text(self.values[expr])
            return f"({text})" if text.startswith(MINUS) else text
        return expr.name

    def _print_Pow(self, expr: Any, rational: bool = False) -> str:  # noqa: N802
        base, exponent = expr.as_base_exp()
        inner = self.parenthesize(base, PRECEDENCE["Pow"])
        if exponent == sp.Rational(1, 2):
            return f"√{inner}"
        if exponent == -1:
            return f"1/{inner}"
        if exponent.is_Integer and exponent < 0:
            return f"1/{self._print(base ** (-exponent))}"
        if exponent.is_Integer:
            return inner + str(int(exponent)).translate(_SUPERSCRIPT)
        return f"{inner}^{self.parenthesize(exponent, PRECEDENCE['Pow'])}"

    def _print_Mul(self, expr: Any) -> str:  # noqa: N802
        text = super()._print_Mul(expr).replace("*", "·")
        # A number coefficient written against the variable it scales: 9a², −2b.
        return re.sub(r"^(-?\d+(?:\.\d+)?)·(?=[A-Za-z_(√])", r"\1", text) if not \
            self.values else text

    def _print_Piecewise(self, expr: Any) -> str:  # noqa: N802
        (value, condition), *_ = expr.args
        if len(expr.args) == 2 and expr.args[1][0] == 0:
            prefix = "" if value == 1 else f"{self._print(value)}·"
            return f"{prefix}[{self._print(condition)}]"
        return super()._print_Piecewise(expr)

    def doprint(self, expr: Any) -> str:
        return super().doprint(expr).replace("-", MINUS)


class LatexValuePrinter(LatexPrinter):
    """SymPy's LaTeX with ``\\cdot`` products and the symbols in ``values`` as numbers."""

    def __init__(self, values: dict[Any, float] | None = None) -> None:
        # Numbers side by side need the dot (2 · 1); a coefficient and a variable do not (2w).
        super().__init__({"mul_symbol": "dot" if values else None})
        self.values = values or {}

    def _print_Symbol(self, expr: Any, style: str = "plain") -> str:  # noqa: N802
        if expr in self.values:
            text = _number_text(self.values[expr]).replace(MINUS, "-")
            return f"\\left({text}\\right)" if text.startswith("-") else text
        return latex_name(expr.name)


def latex_name(name: str) -> str:
    """A variable name for LaTeX: ``#3`` as ``t_{3}``, ``h1`` as ``h_{1}``."""
    if name.startswith("#"):
        return f"t_{{{name[1:]}}}"
    match = re.fullmatch(r"([A-Za-z]+)_?(\d+)", name)
    if match:
        return f"{match.group(1)}_{{{match.group(2)}}}"
    return name.replace("_", r"\_")


def to_text(expr: Any, values: dict[Any, float] | None = None) -> str:
    """``expr`` in the articles' notation (see :class:`UnicodePrinter`)."""
    return UnicodePrinter(values).doprint(expr)


def to_latex(expr: Any, values: dict[Any, float] | None = None) -> str:
    """``expr`` as LaTeX (see :class:`LatexValuePrinter`)."""
    return LatexValuePrinter(values).doprint(expr)
