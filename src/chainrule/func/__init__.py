"""``chainrule.func``: PyTorch's function transforms (``torch.func``).

* ``grad``, ``grad_and_value``, ``vjp``, ``jacrev``: reverse mode, on the tape
  (``_transforms``);
* ``functional_call``, ``stack_module_state``: modules as functions of their parameters
  (``_functional_call``);
* ``jvp``, ``linearize``, ``jacfwd``, ``hessian`` (forward over reverse): forward mode, on
  ``autograd.forward_ad`` (``_forward``);
* ``vmap``: batching rules (``_vmap``, ``_batched``, ``_batching_rules``), also running
  ``autograd.grad(..., is_grads_batched=True)`` (``_batched_backward``);
* ``functionalize``, ``debug_unwrap``, ``replace_all_batch_norm_modules_`` (``_utilities``);
* ``rearrange``: ``einops``-style patterns (``_rearrange``).
"""

from . import _batched_backward
from ._forward import hessian, jacfwd, jvp, linearize
from ._functional_call import functional_call, stack_module_state
from ._rearrange import rearrange
from ._transforms import grad, grad_and_value, jacrev, vjp
from ._utilities import debug_unwrap, functionalize, replace_all_batch_norm_modules_
from ._vmap import vmap

_batched_backward.install()  # autograd.grad(..., is_grads_batched=True) runs under vmap

__all__ = [
    "debug_unwrap",
    "functionalize",
    "replace_all_batch_norm_modules_",
    "jacfwd",
    "jvp",
    "linearize",
    "functional_call",
    "grad",
    "grad_and_value",
    "hessian",
    "jacrev",
    "rearrange",
    "stack_module_state",
    "vjp",
    "vmap",
]
