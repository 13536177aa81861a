"""``chainrule.compile``: torch.compile's API over ``chainrule.fx`` capture.

The first call traces the function or module (``chainrule.fx.symbolic_trace``) and
caches the generated code under guards on the tensor arguments' shapes, dtypes and
``requires_grad``, the other arguments' values and grad mode; a call that fails every
guard compiles again. A program ``symbolic_trace`` cannot capture (data-dependent
control flow) runs eagerly for those guards (``fullgraph=True`` raises instead).
"""

from chainrule.compiler.compiled import CompiledFunction, compile

__all__ = ["CompiledFunction", "compile"]
