"""``nn.Module`` and the containers, against PyTorch: registration, traversal order, state dicts
(PyTorch's messages; atomic loading), modes, hooks, dtype conversion and printing."""

from __future__ import annotations

import copy
from collections import OrderedDict

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch


def _both(build):
    """The same model in both libraries, chainrule's weights copied into torch's."""
    ours = build(chainrule)
    theirs = build(torch)
    theirs.load_state_dict({k: torch.from_numpy(v.numpy().copy())
                            for k, v in ours.state_dict().items()})
    return ours, theirs


def _net(lib):
    class Block(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.conv = lib.nn.Conv2d(2, 3, 3, padding=1)
            self.bn = lib.nn.BatchNorm2d(3)
            self.register_buffer("scale", lib.ones(1))
            self.register_buffer("scratch", lib.zeros(2), persistent=False)

        def forward(self, x):
            return self.bn(self.conv(x)) * self.scale

    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.features = lib.nn.Sequential(Block(), lib.nn.ReLU(), lib.nn.MaxPool2d(2))
            self.heads = lib.nn.ModuleDict({"cls": lib.nn.Linear(12, 4),
                                            "aux": lib.nn.Linear(12, 2, bias=False)})
            self.extra = lib.nn.ModuleList([lib.nn.Linear(4, 4) for _ in range(3)])
            self.gain = lib.nn.Parameter(lib.ones(()))

        def forward(self, x):
            h = self.features(x).flatten(1)
            out = self.heads["cls"](h)
            for layer in self.extra:
                out = layer(out)
            return out * self.gain + self.heads["aux"](h).sum()

    return Net()


def test_traversal_order_and_names_match_torch() -> None:
    ours, theirs = _both(_net)
    assert [n for n, _ in ours.named_parameters()] == [n for n, _ in theirs.named_parameters()]
    assert [n for n, _ in ours.named_buffers()] == [n for n, _ in theirs.named_buffers()]
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [type(m).__name__ for m in ours.modules()] == [type(m).__name__
                                                         for m in theirs.modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert list(ours.state_dict()) == list(theirs.state_dict())
    assert [n for n, _ in ours.named_parameters(recurse=False)] == ["gain"]
    assert len(list(ours.parameters())) == len(list(theirs.parameters()))


def test_forward_and_gradients_match_torch() -> None:
    ours, theirs = _both(_net)
    x = np.random.default_rng(0).standard_normal((2, 2, 4, 4)).astype(np.float32)
    a = ours(chainrule.from_numpy(x.copy()))
    b = theirs(torch.from_numpy(x.copy()))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5)
    a.sum().backward()
    b.sum().backward()
    for (name, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(), strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=name)
    for (name, p), (_, q) in zip(ours.named_buffers(), theirs.named_buffers(), strict=True):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5, err_msg=name)


def test_repr_matches_torch() -> None:
    ours, theirs = _both(_net)
    assert normalise_output(repr(ours)) == normalise_output(repr(theirs))
    assert repr(chainrule.nn.Sequential()) == repr(torch.nn.Sequential())
    p = chainrule.nn.Parameter(chainrule.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(p) == repr(torch.nn.Parameter(torch.tensor([1.0, 2.0])))


def test_module_list_repr_groups_repeats_like_torch() -> None:
    def build(lib):
        return lib.nn.ModuleList([lib.nn.Linear(2, 2) for _ in range(3)]
                                 + [lib.nn.ReLU(), lib.nn.ReLU(), lib.nn.Linear(2, 3)])

    assert repr(build(chainrule)) == repr(build(torch))


def test_state_dict_detached_views_and_metadata() -> None:
    ours = _net(chainrule)
    sd = ours.state_dict()
    assert isinstance(sd, OrderedDict)
    w = sd["heads.cls.weight"]
    assert not w.requires_grad and w.grad_fn is None
    assert np.shares_memory(w.numpy(), ours.heads["cls"].weight.detach().numpy())
    assert "features.0.scratch" not in sd
    assert sd._metadata[""] == {"version": 1}
    assert sd._metadata["features.0.bn"] == {"version": 2}
    assert sd["features.0.bn.num_batches_tracked"].dtype == chainrule.int64
    kept = ours.state_dict(keep_vars=True)
    assert kept["gain"] is ours.gain
    theirs = _net(torch).state_dict()
    assert list(sd._metadata) == list(theirs._metadata)


def _errors(lib, state):
    model = lib.nn.Sequential(lib.nn.Linear(3, 2), lib.nn.ReLU(), lib.nn.Linear(2, 1))
    before = {k: v.clone() for k, v in model.state_dict().items()}
    with pytest.raises(RuntimeError) as info:
        model.load_state_dict(state(lib, model))
    return str(info.value), model, before


STATE_ERRORS = {
    "missing": lambda lib, m: {k: v for k, v in m.state_dict().items() if k != "2.bias"},
    "unexpected": lambda lib, m: {**m.state_dict(), "3.weight": lib.zeros(1), "extra": lib.ones(1)},
    "both": lambda lib, m: {**{k: v for k, v in m.state_dict().items() if not k.startswith("0.")},
                            "0.weights": lib.zeros(2, 3)},
    "shape": lambda lib, m: {**m.state_dict(), "0.weight": lib.zeros(3, 2),
                             "2.bias": lib.zeros(2)},
    "not_a_tensor": lambda lib, m: {**m.state_dict(), "0.bias": [1.0, 2.0]},
}


@pytest.mark.parametrize("case", sorted(STATE_ERRORS))
def test_load_state_dict_errors_match_torch_and_change_nothing(case: str) -> None:
    state = STATE_ERRORS[case]
    ours, model, before = _errors(chainrule, state)
    theirs, _, _ = _errors(torch, state)
    assert normalise_output(ours) == normalise_output(theirs).replace(
        "<class 'list'>", "<class 'list'>"
    )
    # Atomic (beyond PyTorch, which copies the entries that fit before raising).
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), before[k].numpy())


def test_load_state_dict_copies_in_place_and_non_strict() -> None:
    model = chainrule.nn.Linear(2, 2)
    weight = model.weight
    version = weight._version
    new = {"weight": chainrule.ones(2, 2, dtype=chainrule.float64), "bias": chainrule.zeros(2)}
    result = model.load_state_dict(new)
    assert repr(result) == "<All keys matched successfully>"
    assert model.weight is weight and weight.dtype == chainrule.float32
    assert weight._version > version
    np.testing.assert_array_equal(weight.detach().numpy(), np.ones((2, 2)))
    result = model.load_state_dict({"weight": chainrule.zeros(2, 2), "other": chainrule.ones(1)},
                                   strict=False)
    ref = torch.nn.Linear(2, 2).load_state_dict(
        {"weight": torch.zeros(2, 2), "other": torch.ones(1)}, strict=False)
    assert repr(result) == repr(ref)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["other"]
    model.load_state_dict({"weight": chainrule.ones(2, 2) * 3, "bias": chainrule.ones(2)},
                          assign=True)
    assert model.weight is not weight and isinstance(model.weight, chainrule.nn.Parameter)


def test_batch_norm_state_without_num_batches_tracked_loads_like_torch() -> None:
    for lib in (chainrule, torch):
        bn = lib.nn.BatchNorm1d(2)
        state = {"weight": lib.ones(2), "bias": lib.zeros(2), "running_mean": lib.zeros(2),
                 "running_var": lib.ones(2)}
        assert repr(bn.load_state_dict(state)) == "<All keys matched successfully>"


def test_train_eval_requires_grad_zero_grad_apply() -> None:
    model = _net(chainrule)
    assert model.training and all(m.training for m in model.modules())
    assert model.eval() is model
    assert not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        model.train("yes")
    model.requires_grad_(False)
    assert not any(p.requires_grad for p in model.parameters())
    model.requires_grad_()
    x = chainrule.randn(2, 2, 4, 4)
    model(x).sum().backward()
    assert all(p.grad is not None for p in model.parameters())
    model.zero_grad(set_to_none=False)
    assert all(not p.grad.numpy().any() for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())
    visited = []
    model.apply(lambda m: visited.append(type(m).__name__))
    reference = []
    _net(torch).apply(lambda m: reference.append(type(m).__name__))
    assert visited == reference


def test_to_double_float_keep_parameter_objects() -> None:
    model = chainrule.nn.Sequential(chainrule.nn.Linear(2, 2), chainrule.nn.BatchNorm1d(2))
    weight = model[0].weight
    assert model.double() is model
    assert model[0].weight is weight and weight.dtype == chainrule.float64
    assert model[1].running_mean.dtype == chainrule.float64
    assert model[1].num_batches_tracked.dtype == chainrule.int64
    out = model(chainrule.randn(3, 2, dtype=chainrule.float64))
    assert out.dtype == chainrule.float64
    model.to(chainrule.float32)
    assert weight.dtype == chainrule.float32
    model.float()
    with pytest.raises(TypeError, match="nn.Module.to only accepts floating point"):
        model.to(chainrule.int64)


def test_forward_hooks_like_torch() -> None:
    def run(lib):
        log = []
        layer = lib.nn.Linear(2, 2)
        h1 = layer.register_forward_pre_hook(lambda m, args: log.append("pre") or (args[0] * 2,))
        h2 = layer.register_forward_hook(lambda m, args, out: log.append("post") or out + 1)
        layer.register_forward_pre_hook(lambda m, args: log.append("first"), prepend=True)
        layer.register_forward_hook(
            lambda m, args, kwargs, out: log.append(("kw", sorted(kwargs))), with_kwargs=True
        )
        with lib.no_grad():
            layer.weight.copy_(lib.eye(2))
            layer.bias.zero_()
        first = layer(lib.ones(1, 2)).tolist()
        h1.remove()
        h2.remove()
        second = layer(lib.ones(1, 2)).tolist()
        return log, first, second

    assert run(chainrule) == run(torch)


def test_attribute_errors_like_torch() -> None:
    for lib in (chainrule, torch):
        m = lib.nn.Linear(2, 2)
        with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
            m.nope  # noqa: B018
        with pytest.raises(TypeError, match="cannot assign .* as parameter 'weight'"):
            m.weight = lib.zeros(2, 2)
        with pytest.raises(KeyError, match="attribute 'weight' already exists"):
            m.register_buffer("weight", lib.zeros(1))
        with pytest.raises(KeyError, match="contain"):
            m.register_buffer("a.b", lib.zeros(1))
        m.weight = None
        assert m.weight is None and "weight" not in m.state_dict()
        m.buf = lib.nn.Buffer(lib.ones(1))
        assert "buf" in m.state_dict()
        m.tmp = lib.nn.Buffer(lib.ones(1), persistent=False)
        assert "tmp" not in m.state_dict() and "tmp" in dict(m.named_buffers())
        del m.buf
        assert "buf" not in m.state_dict()
        assert m.get_submodule("") is m
    net = _net(chainrule)
    assert net.get_submodule("features.0.bn") is net.features[0].bn
    assert net.get_parameter("heads.cls.bias") is net.heads["cls"].bias
    with pytest.raises(AttributeError, match="Sequential has no attribute `9`"):
        net.get_submodule("features.9")


def test_sequential_indexing_slicing_append_len() -> None:
    for lib in (chainrule, torch):
        seq = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.ReLU(), lib.nn.Linear(3, 1))
        assert len(seq) == 3
        assert isinstance(seq[-1], lib.nn.Linear) and seq[-1] is seq[2]
        head = seq[:2]
        assert isinstance(head, lib.nn.Sequential) and len(head) == 2
        assert head[0] is seq[0]
        assert [k for k, _ in seq[1:].named_children()] == ["1", "2"]
        seq.append(lib.nn.Sigmoid())
        assert len(seq) == 4 and isinstance(seq[3], lib.nn.Sigmoid)
        del seq[1]
        assert [type(m).__name__ for m in seq] == ["Linear", "Linear", "Sigmoid"]
        assert [k for k, _ in seq.named_children()] == ["0", "1", "2"]
        seq.insert(1, lib.nn.Tanh())
        assert type(seq[1]).__name__ == "Tanh"
        with pytest.raises(IndexError, match="index 7 is out of range"):
            seq[7]
        named = lib.nn.Sequential(OrderedDict([("fc", lib.nn.Linear(2, 2)),
                                               ("act", lib.nn.ReLU())]))
        assert named.fc is named[0]
        assert len(seq + named) == 6


def test_module_list_and_dict() -> None:
    for lib in (chainrule, torch):
        layers = lib.nn.ModuleList([lib.nn.Linear(1, 1)])
        layers.append(lib.nn.ReLU())
        layers.extend([lib.nn.Tanh(), lib.nn.Sigmoid()])
        layers.insert(0, lib.nn.Identity())
        assert [type(m).__name__ for m in layers] == ["Identity", "Linear", "ReLU", "Tanh",
                                                      "Sigmoid"]
        assert isinstance(layers[1:3], lib.nn.ModuleList) and len(layers[1:3]) == 2
        del layers[0]
        assert [k for k, _ in layers.named_children()] == ["0", "1", "2", "3"]
        heads = lib.nn.ModuleDict([("a", lib.nn.Linear(1, 1))])
        heads["b"] = lib.nn.ReLU()
        heads.update({"c": lib.nn.Tanh()})
        assert list(heads) == ["a", "b", "c"] and "b" in heads and len(heads) == 3
        assert list(heads.keys()) == ["a", "b", "c"]
        assert type(heads.pop("b")).__name__ == "ReLU" and list(heads) == ["a", "c"]


def test_deepcopy_and_shared_parameters() -> None:
    shared = chainrule.nn.Linear(2, 2)
    model = chainrule.nn.Sequential(shared, chainrule.nn.ReLU(), shared)
    assert len(list(model.parameters())) == 2
    assert list(model.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    clone = copy.deepcopy(model)
    assert clone[0] is clone[2] and clone[0] is not shared
    np.testing.assert_array_equal(clone[0].weight.detach().numpy(),
                                  shared.weight.detach().numpy())
    ref = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.ReLU())
    ref.append(ref[0])
    assert list(ref.state_dict()) == list(model.state_dict())


def test_parameter_list_and_dict() -> None:
    for lib in (chainrule, torch):
        params = lib.nn.ParameterList([lib.zeros(2), lib.nn.Parameter(lib.ones(3))])
        assert all(isinstance(p, lib.nn.Parameter) for p in params)
        assert [n for n, _ in params.named_parameters()] == ["0", "1"]
        pdict = lib.nn.ParameterDict({"a": lib.zeros(1)})
        assert isinstance(pdict["a"], lib.nn.Parameter) and list(pdict.keys()) == ["a"]
    for build in (lambda lib: lib.nn.ParameterList([lib.zeros(2), lib.ones(3, 2)]),
                  lambda lib: lib.nn.ParameterDict({"a": lib.zeros(1)})):
        assert repr(build(chainrule)) == normalise_output(repr(build(torch)))
