"""``chainrule.compile``: torch.compile's API over ``chainrule.fx`` capture.

The first call traces the function or module (``chainrule.fx.symbolic_trace``) and
caches the generated code under guards on the tensor arguments' shapes, dtypes and
``requires_grad``, the other arguments' values and grad mode; a call that fails every
guard compiles again. A program ``symbolic_trace`` cannot capture (data-dependent
control flow) runs eagerly for those guards (``fullgraph=True`` raises instead).

A captured program is lowered to ``chainrule.ir`` (:mod:`.lowering`: the op-table calls of
one run), its joint forward+backward graph optimised (``ir.passes``) and generated as NumPy
code (``ir.numpy_codegen``); :mod:`.compiled_graph` runs it and gives the outputs one
``CompiledFunctionBackward`` node. ``torch.compiler``'s ``reset``, ``disable``,
``is_compiling`` ... are :mod:`.api`'s. What the IR cannot express (in-place and random ops,
values read into Python, value-dependent shapes) runs eagerly; ``fallback_reasons`` says
why, ``code`` prints the generated forward and backward. A compiled module is an
``OptimizedModule`` (:mod:`.optimized_module`), as torch.compile's.
"""

from chainrule.compiler.api import (
    allow_in_graph,
    assume_constant_result,
    disable,
    is_compiling,
    is_dynamo_compiling,
    is_exporting,
    reset,
)
from chainrule.compiler.compiled import CompiledFunction, compile
from chainrule.compiler.optimized_module import OptimizedModule

__all__ = [
    "CompiledFunction", "OptimizedModule", "allow_in_graph", "assume_constant_result",
    "compile", "disable", "is_compiling", "is_dynamo_compiling", "is_exporting", "reset",
]  # fmt: skip
