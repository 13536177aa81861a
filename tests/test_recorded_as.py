"""``recorded_as``: an op recorded under another node name leaves its source op as it was."""

import pytest
import torch as pt
import torch.autograd.forward_ad as pt_fwad

import chainrule as torch
import chainrule.autograd.forward_ad as fwad
from chainrule.ops import inplace, shape, special_ops
from chainrule.ops._registry import recorded_as

SOURCES = [
    (shape.t, inplace._t_in_place),
    (shape.transpose, inplace._transpose_in_place),
    (shape.unsqueeze, inplace._unsqueeze_in_place),
    (special_ops._polygamma, special_ops._polygamma_in_place),
]


@pytest.mark.parametrize(("source", "renamed"), SOURCES, ids=lambda f: f.__name__)
def test_source_public_function_is_its_own(source, renamed):
    assert renamed.op is not source.op
    assert renamed.op.node_name != source.op.node_name
    assert source.op.publics[False].op is source.op
    assert renamed.op.publics[False] is renamed


def test_new_alias_leaves_source_node_name():
    source = shape.unsqueeze
    name = source.op.node_name
    public = source.op.publics[False]
    renamed = recorded_as(source, "UnsqueezeBackwardTest")
    assert source.op.node_name == name
    assert source.op.publics[False] is public
    assert source.op.saved_constants is not renamed.op.saved_constants
    x = torch.ones(2, requires_grad=True)
    assert type(source(x, 0).grad_fn).__name__ == name
    assert type(renamed(x, 0).grad_fn).__name__ == "UnsqueezeBackwardTest"


def _tangent_node(lib, fw, call):
    x = lib.arange(6.0, dtype=lib.float64).reshape(2, 3)
    tangent = lib.ones(2, 3, dtype=lib.float64).requires_grad_()
    with fw.dual_level():
        out = call(fw.make_dual(x, tangent))
        return type(fw.unpack_dual(out).tangent.grad_fn).__name__


@pytest.mark.parametrize(
    "call",
    [lambda x: x.t(), lambda x: x.transpose(0, 1), lambda x: x.unsqueeze(1)],
    ids=["t", "transpose", "unsqueeze"],
)
def test_jvp_of_source_records_source_node(call):
    # The JVP rules run the source op's public function on the tangent: its node is the
    # out-of-place op's (TBackward0), not the in-place overload's (TBackward1).
    assert _tangent_node(torch, fwad, call) == _tangent_node(pt, pt_fwad, call)
