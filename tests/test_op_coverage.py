"""The coverage guard: every node type and every public op is reached by the op sweep.

A node type no OpInfo sample produces, or a public function or method no OpInfo calls, is code
that no differential test compares with PyTorch. Each test here fails on such a name unless it is
listed below with the reason it is not swept; a listed name that the sweep does reach fails too,
so the lists only ever shrink to what is true.
"""

from __future__ import annotations

import torch.nn.functional as torch_functional

from .conftest import torch
from .sweep_coverage import called_public_names, node_types, produced_node_types, public_callables

#: Node types no OpInfo sample produces, with the reason.
NODE_TYPES_NOT_SWEPT: dict[str, str] = {
    name: "in-place acosh_/asinh_/atanh_ record it; its backward raises NotImplementedError as "
    "PyTorch's, so the sweep runs them without grad (tests/test_inplace_parity.py checks it)"
    for name in ("AcoshBackward1", "AsinhBackward1", "AtanhBackward1")
}
NODE_TYPES_NOT_SWEPT["GeqrfBackward0"] = (
    "torch.geqrf: its backward raises NotImplementedError as PyTorch's, so the sweep runs it "
    "without grad (tests/test_linalg_functions.py checks it)"
)
NODE_TYPES_NOT_SWEPT.update({
    name: "unique's nodes: their backward raises NotImplementedError as PyTorch's, so the sweep "
    "runs unique without grad (tests/test_counting.py checks the nodes and the error)"
    for name in ("Unique2Backward0", "UniqueDimBackward0", "UniqueConsecutiveBackward0")
})
NODE_TYPES_NOT_SWEPT["TestWarnInAutogradBackward0"] = (
    "torch._C._nn._test_warn_in_autograd, PyTorch's test op (a copy whose backward warns); "
    "tests/test_warn_in_backward.py compares it with PyTorch's"
)
NODE_TYPES_NOT_SWEPT["UniqueBackward0"] = (
    "torch._unique (PyTorch's private op): its backward raises NotImplementedError as PyTorch's; "
    "tests/test_unique_private_ops.py compares the node, values and error with PyTorch's"
)
NODE_TYPES_NOT_SWEPT.update({
    name: "random sampling for torch.distributions (poisson, _standard_gamma): NumPy's streams, "
    "not PyTorch's, so values cannot be compared; tests/test_distributions_sampling.py checks "
    "the nodes and the implicit-reparameterisation gradients"
    for name in ("PoissonBackward0", "StandardGammaBackward0", "ExponentialBackward0",
                 "CauchyBackward0", "GeometricBackward0", "LogNormalBackward0", "RandomBackward0",
                 "RandomBackward1", "RandomBackward2")
})
NODE_TYPES_NOT_SWEPT["StandardGammaGradBackward0"] = (
    "_standard_gamma_grad: its backward raises NotImplementedError as PyTorch's; "
    "tests/test_distributions_sampling.py compares its values and the error with PyTorch's"
)
NODE_TYPES_NOT_SWEPT["ConjPhysicalBackward0"] = (
    "conj_physical records it for complex inputs only (a real tensor comes back as it is, as in "
    "PyTorch), which the real-valued sweep does not draw; tests/test_fill_and_splits.py compares "
    "its values, node and gradients with PyTorch's"
)
NODE_TYPES_NOT_SWEPT["SpecialZetaBackward2"] = (
    "special.zeta(x, number): its only derivative (in x) raises NotImplementedError as "
    "PyTorch's, so the sweep differentiates zeta in q only (tests/test_special.py checks it)"
)

_REASONS: dict[str, tuple[str, ...]] = {
    "no derivative in PyTorch (a NotImplemented node; tests/test_as_strided_copies.py)": (
        "torch.detach_copy",
    ),
    "no derivative in PyTorch (NotImplemented nodes; tests/test_histograms.py)": (
        "torch.histogram", "Tensor.histogram", "torch.histogramdd",
    ),
    "a Python bool, not a tensor (tests/test_closeness.py)": (
        "Tensor.allclose", "Tensor.equal", "torch.allclose", "torch.equal",
    ),
    "ATen-order wrappers of F.batch_norm/instance_norm/group_norm (whose OpInfos carry the "
    "half-precision exceptions); tests/test_torch_nn_aliases.py compares them": (
        "torch.batch_norm", "torch.group_norm", "torch.instance_norm",
    ),
    "helpers, not ops: a bool, or an argument check (tests/test_nn_small_names.py)": (
        "F.assert_int_or_pair", "F.has_torch_function", "F.has_torch_function_unary",
        "F.has_torch_function_variadic",
    ),
    "metadata and conversion to Python, not an op (tests/test_tensor_api.py, "
    "test_new_tensors_and_queries.py, test_tensor_storage.py)": (
        "Tensor.element_size", "Tensor.get_device", "Tensor.is_complex",
        "Tensor.is_contiguous", "Tensor.is_floating_point", "Tensor.is_inference",
        "Tensor.ndimension", "Tensor.nelement", "Tensor.numpy",
        "Tensor.tolist",
        "Tensor.untyped_storage", "Tensor.storage", "torch.is_complex", "torch.is_floating_point",
        "Tensor.const_data_ptr", "Tensor.dim_order", "Tensor.is_pinned", "Tensor.pin_memory",
        "torch.is_tensor", "torch.numel", "torch.can_cast", "torch.promote_types",
        "torch.result_type",
        "Tensor.is_neg", "Tensor.is_nonzero", "Tensor.is_same_size", "Tensor.is_signed",
        "Tensor.resolve_neg", "torch.get_device", "torch.is_inference", "torch.is_neg",
        "torch.is_nonzero", "torch.is_same_size", "torch.is_signed", "torch.resolve_neg",
        "torch.typename",
    ),
    "shapes in, a Size out: no tensor (tests/test_broadcast_shapes.py)": (
        "torch.broadcast_shapes",
    ),
    "a tensor over a Python buffer's memory: no tensor input (tests/test_frombuffer.py)": (
        "torch.frombuffer",
    ),
    "Python's reversed(): flip(0) (tests/test_tensor_python_protocols.py compares values and "
    "the flip op is swept)": ("Tensor.__reversed__",),
    "integer coordinates, no gradients; the results' strides for a transposed input are not "
    "PyTorch's yet (tests/test_lookup.py compares values)": ("torch.unravel_index",),
    "window functions: created from a length, no tensor input (tests/test_windows.py)": (
        "torch.hann_window", "torch.hamming_window", "torch.blackman_window",
        "torch.bartlett_window", "torch.kaiser_window",
    ),
    "Tensor.new_* creation: sizes or data in the tensor's dtype, no history "
    "(tests/test_new_tensors_and_queries.py)": (
        "Tensor.new", "Tensor.new_empty", "Tensor.new_empty_strided", "Tensor.new_full",
        "Tensor.new_ones", "Tensor.new_tensor", "Tensor.new_zeros",
    ),
    "global state: grad and anomaly modes, default dtype, printing, random seeds "
    "(tests/test_grad_mode.py, test_anomaly.py, test_printing.py, test_creation.py, "
    "test_set_default_tensor_type.py)": (
        "torch.get_default_dtype", "torch.set_default_dtype", "torch.set_printoptions",
        "torch.set_default_tensor_type",
        "torch.get_rng_state", "torch.set_rng_state", "torch.initial_seed", "torch.manual_seed",
        "torch.seed", "torch.is_anomaly_check_nan_enabled", "torch.is_anomaly_enabled",
        "torch.is_grad_enabled", "torch.is_inference_mode_enabled",
    ),
    "process-wide switches that compute nothing (tests/test_runtime_flags.py)": (
        "torch.get_float32_matmul_precision", "torch.set_float32_matmul_precision",
        "torch.is_warn_always_enabled", "torch.set_warn_always", "torch.set_flush_denormal",
        "torch.init_num_threads", "torch.is_distributed", "Tensor.is_distributed",
    ),
    "the autograd API, not an op (tests/test_autograd_core.py, test_hooks.py)": (
        "Tensor.backward", "Tensor.register_hook",
        "Tensor.register_post_accumulate_grad_hook", "Tensor.retain_grad",
    ),
    "creation from sizes or data, no tensor input to differentiate (tests/test_creation.py)": (
        "torch.arange", "torch.as_tensor", "torch.asarray", "torch.empty", "torch.empty_like",
        "torch.empty_strided", "torch.eye", "torch.full", "torch.full_like", "torch.logspace",
        "torch.ones", "torch.ones_like", "torch.range", "torch.scalar_tensor",
        "torch.tril_indices", "torch.triu_indices", "torch.zeros", "torch.zeros_like",
    ),
    "random sampling: NumPy's streams, not PyTorch's, so values cannot be compared "
    "(distributions in tests/test_creation.py, dropout in test_nn_layers.py)": (
        "torch.multinomial", "torch.rand", "torch.rand_like",
        "torch.randint", "torch.randint_like", "torch.randn", "torch.randn_like",
        "torch.randperm", "torch.poisson", "torch.binomial", "Tensor.exponential_",
        "Tensor.cauchy_", "Tensor.geometric_", "Tensor.log_normal_", "Tensor.random_",
        "F.dropout1d", "F.dropout2d",
        "F.dropout3d",
    ),
    "serialization (tests/test_serialization.py)": ("torch.load", "torch.save"),
    "process settings: threads, determinism flags, default device "
    "(tests/test_runtime_settings.py)": (
        "torch.are_deterministic_algorithms_enabled", "torch.get_default_device",
        "torch.get_deterministic_debug_mode", "torch.get_num_interop_threads",
        "torch.get_num_threads", "torch.is_deterministic_algorithms_warn_only_enabled",
        "torch.set_default_device", "torch.set_deterministic_debug_mode",
        "torch.set_num_interop_threads", "torch.set_num_threads",
        "torch.use_deterministic_algorithms",
    ),
    "CUDA is not available; raises PyTorch's error (tests/test_tensor_api.py)": (
        "Tensor.cuda",
    ),
    "storage operations without a derivative (tests/test_resize_set.py)": (
        "Tensor.resize_", "Tensor.set_",
    ),
    "the __torch_function__ protocol: a subclass alias (tests/test_torch_function.py)": (
        "Tensor.as_subclass",
    ),
    "a function transform, not an op: torch.func.vmap (tests/test_func_vmap.py)": (
        "torch.vmap",
    ),
    "deprecated, a custom Function that warns on every call (tests/test_resize_deprecated.py)": (
        "Tensor.resize", "Tensor.resize_as",
    ),
    "random draws from NumPy's stream, checked by their definition "
    "(tests/test_nn_random_activations.py)": (
        "F.gumbel_softmax", "F.rrelu_", "torch.rrelu_",
    ),
    "no derivative in PyTorch either (a NotImplemented node; tests/test_nn_upsampling.py)": (
        "F.native_channel_shuffle", "torch.native_channel_shuffle",
    ),
    "deprecated aliases of interpolate that warn (tests/test_nn_upsampling.py)": (
        "F.upsample", "F.upsample_bilinear", "F.upsample_nearest",
    ),
    "not an op: the package's lazy loader of its subpackages (tests/test_run_as_torch.py)": (
        "torch.__getattr__",
    ),
    "not an op: DLPack exchange, no graph (tests/test_dlpack.py)": (
        "torch.from_dlpack",
    ),
}
#: Public names no OpInfo calls, with the reason.
NAMES_NOT_SWEPT: dict[str, str] = {
    name: reason for reason, names in _REASONS.items() for name in names
}

#: chainrule's public names that PyTorch does not have in the same namespace.
NOT_PYTORCH_NAMES: dict[str, str] = {
    name: "not a PyTorch name: to be made private (issue 16's API coverage)"
    for name in (
        "F.constant_pad_nd", "F.convolution", "F.convolution_backward_input",
        "F.convolution_backward_weight", "F.embedding_backward", "torch.expand",
        "torch.expand_as", "torch.get_printoptions", "torch.legacy_new", "torch.linear",
        "torch.printoptions", "torch.reshape_as", "torch.sum_to_size", "torch.view",
        "torch.view_as",
    )
} | {
    "torch.install_as_torch": "chainrule's own: makes `import torch` give chainrule "
    "(tests/test_run_as_torch.py)",
}

_REFERENCE = {"torch": torch, "Tensor": torch.Tensor, "F": torch_functional,
              "linalg": torch.linalg, "special": torch.special, "fft": torch.fft}


def _in_pytorch(qualified: str) -> bool:
    prefix, name = qualified.split(".", 1)
    return hasattr(_REFERENCE[prefix], name)


def test_every_node_type_is_produced_by_the_sweep() -> None:
    missing = node_types() - produced_node_types()
    unexplained = sorted(missing - set(NODE_TYPES_NOT_SWEPT))
    assert not unexplained, f"node types no OpInfo produces: {unexplained}"
    stale = sorted(set(NODE_TYPES_NOT_SWEPT) - missing)
    assert not stale, f"listed as not swept but produced by the sweep: {stale}"


def test_every_public_op_is_called_by_the_sweep() -> None:
    names = {name for name in public_callables() if _in_pytorch(name)}
    missing = names - called_public_names()
    unexplained = sorted(missing - set(NAMES_NOT_SWEPT))
    assert not unexplained, f"public names no OpInfo calls: {unexplained}"
    stale = sorted(set(NAMES_NOT_SWEPT) - missing)
    assert not stale, f"listed as not swept but called by the sweep (or gone): {stale}"


def test_public_names_are_pytorch_names() -> None:
    extra = {name for name in public_callables() if not _in_pytorch(name)}
    assert extra == set(NOT_PYTORCH_NAMES), (
        f"new: {sorted(extra - set(NOT_PYTORCH_NAMES))}, "
        f"gone: {sorted(set(NOT_PYTORCH_NAMES) - extra)}"
    )
