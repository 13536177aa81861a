"""Module bookkeeping against PyTorch: forward hooks with ``always_call`` (and their order when
something raises), removing hooks registered ``with_kwargs``, state-dict pre- and post-hooks,
``get_extra_state``/``set_extra_state``, ``ParameterDict``'s key order, subclasses that skip
``Module.__init__``, ``_apply`` handing Tensors to its function, and ``to(complex)``."""

from __future__ import annotations

import warnings
from collections import OrderedDict

import pytest

import chainrule

from .conftest import normalise_output, torch


def _outcome(fn, lib):
    """``fn(lib)``'s result (or error) and warnings, printed with chainrule's names."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = fn(lib)
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            result = f"{type(e).__name__}: {e}"
    texts = [f"{w.category.__name__}: {w.message}" for w in caught]
    return normalise_output(str(result)), [normalise_output(t) for t in texts]


def _same(fn):
    ours, theirs = _outcome(fn, chainrule), _outcome(fn, torch)
    assert ours == theirs
    return theirs


# ----------------------------------------------------------------------------------------------
# Forward hooks


def _raising_forward(lib):
    calls = []

    class M(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = M()
    m.register_forward_hook(lambda mod, a, o: calls.append(("plain", o)), always_call=True)
    m.register_forward_hook(lambda mod, a, k, o: calls.append(("kwargs", k, o)),
                            always_call=True, with_kwargs=True)
    m.register_forward_hook(lambda mod, a, o: calls.append("not always"))
    m.register_forward_pre_hook(lambda mod, a: calls.append("pre"))
    with pytest.raises(ValueError, match="boom"):
        m(1, k=2)
    return calls


def _raising_pre_hook(lib):
    calls = []
    m = lib.nn.Identity()
    m.register_forward_hook(lambda mod, a, o: calls.append(("always", a, o)), always_call=True)

    def pre(mod, a):
        raise ValueError("pre")

    m.register_forward_pre_hook(pre)
    with pytest.raises(ValueError):
        m(1)
    return calls


def _raising_hook(lib):
    calls = []
    m = lib.nn.Identity()

    def double(mod, a, o):
        calls.append("double")
        return o * 2

    def bad(mod, a, o):
        calls.append(("bad", o))
        raise KeyError("x")

    m.register_forward_hook(double)
    m.register_forward_hook(bad)
    m.register_forward_hook(lambda mod, a, o: calls.append(("always", o)), always_call=True)
    with pytest.raises(KeyError):
        m(1)
    return calls


def _always_hook_raising_too(lib):
    class M(lib.nn.Module):
        def forward(self, x):
            raise ValueError("boom")

    m = M()

    def bad(mod, a, o):
        raise KeyError("inner")

    m.register_forward_hook(bad, always_call=True)
    with pytest.raises(ValueError, match="boom"):
        m(1)


def _removed_kwargs_hooks(lib):
    calls = []
    m = lib.nn.Identity()
    handles = [
        m.register_forward_hook(lambda mod, a, k, o: calls.append(("hook", k)),
                                with_kwargs=True, always_call=True),
        m.register_forward_pre_hook(lambda mod, a, k: calls.append(("pre", k)),
                                    with_kwargs=True),
    ]
    m(1)
    for handle in handles:
        handle.remove()
        handle.remove()
    m.register_forward_hook(lambda mod, a, o: calls.append("plain"))
    m(2)
    return (calls, len(m._forward_hooks_with_kwargs), len(m._forward_pre_hooks_with_kwargs),
            len(m._forward_hooks_always_called))


@pytest.mark.parametrize("fn", [_raising_forward, _raising_pre_hook, _raising_hook,
                                _always_hook_raising_too, _removed_kwargs_hooks],
                         ids=lambda f: f.__name__)
def test_forward_hooks_like_torch(fn) -> None:
    _same(fn)


# ----------------------------------------------------------------------------------------------
# State-dict hooks and extra state


def _state_dict_hooks(lib):
    calls = []
    inner = lib.nn.Linear(1, 1)
    model = lib.nn.Sequential(inner, lib.nn.BatchNorm1d(2))
    handle = inner.register_state_dict_pre_hook(
        lambda mod, prefix, keep_vars: calls.append(("pre", prefix, keep_vars)))
    model.register_state_dict_post_hook(
        lambda mod, sd, prefix, meta: calls.append(("post", prefix, dict(meta), list(sd))))
    model[1].register_state_dict_post_hook(
        lambda mod, sd, prefix, meta: calls.append(("post1", prefix, list(sd))))
    state = model.state_dict(prefix="model.", keep_vars=True)
    handle.remove()
    model.state_dict()
    return calls, list(state), dict(state._metadata)


def _post_hook_must_return_none(lib):
    m = lib.nn.Linear(1, 1)
    m.register_state_dict_post_hook(lambda mod, sd, prefix, meta: {})
    return m.state_dict()


def _private_post_hook(lib):
    m = lib.nn.Sequential(lib.nn.Linear(1, 1))
    m[0]._register_state_dict_hook(lambda mod, sd, prefix, meta: {"ignored": 1})
    inner_keys = list(m.state_dict())
    m._register_state_dict_hook(lambda mod, sd, prefix, meta: {"replaced": 1})
    return inner_keys, dict(m.state_dict())


def _positional_state_dict(lib):
    m = lib.nn.Linear(1, 1)
    destination = {}
    return sorted(m.state_dict(destination, "p.")), sorted(destination)


def _extra(lib, with_set=True):
    class WithExtra(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.value = 0

        def get_extra_state(self):
            return {"value": self.value}

    if with_set:
        def set_extra_state(self, state):
            self.value = state["value"]
        WithExtra.set_extra_state = set_extra_state
    return WithExtra


def _extra_state_round_trip(lib):
    extra = _extra(lib)
    model = lib.nn.Sequential(extra(), lib.nn.Linear(1, 1), extra())
    model[0].value, model[2].value = 7, 9
    state = model.state_dict()
    copy = lib.nn.Sequential(extra(), lib.nn.Linear(1, 1), extra())
    result = copy.load_state_dict(state)
    return list(state), state["0._extra_state"], copy[0].value, copy[2].value, result


def _extra_state_missing(lib):
    return _extra(lib)().load_state_dict({})


def _extra_state_missing_not_strict(lib):
    return _extra(lib)().load_state_dict({}, strict=False)


def _extra_state_without_setter(lib):
    module = _extra(lib, with_set=False)()
    return module.load_state_dict(module.state_dict())


def _extra_state_unexpected_not_strict(lib):
    return lib.nn.Linear(1, 1).load_state_dict(
        {"weight": lib.ones(1, 1), "bias": lib.ones(1), "_extra_state": 3}, strict=False)


def _default_get_extra_state(lib):
    return lib.nn.Linear(1, 1).get_extra_state()


def _default_set_extra_state(lib):
    return lib.nn.Linear(1, 1).set_extra_state(1)


def _unexpected_dotted_key(lib):
    model = lib.nn.Sequential(lib.nn.Linear(1, 1))
    state = dict(model.state_dict())
    state["0.weight.extra"] = lib.ones(1)
    return model.load_state_dict(state)


@pytest.mark.parametrize("fn", [
    _state_dict_hooks, _post_hook_must_return_none, _private_post_hook, _positional_state_dict,
    _extra_state_round_trip, _extra_state_missing, _extra_state_missing_not_strict,
    _extra_state_without_setter, _extra_state_unexpected_not_strict, _default_get_extra_state,
    _default_set_extra_state, _unexpected_dotted_key,
], ids=lambda f: f.__name__)
def test_state_dict_hooks_and_extra_state_like_torch(fn) -> None:
    _same(fn)


def test_extra_state_is_set_only_when_loading_succeeds() -> None:
    # Loading is atomic here (PyTorch would have called set_extra_state before failing).
    model = chainrule.nn.Sequential(_extra(chainrule)(), chainrule.nn.Linear(1, 1))
    state = dict(model.state_dict())
    state["0._extra_state"] = {"value": 5}
    bad = dict(state, **{"1.weight": chainrule.ones(2, 2)})
    with pytest.raises(RuntimeError, match="size mismatch"):
        model.load_state_dict(bad)
    assert model[0].value == 0
    model.load_state_dict(state)
    assert model[0].value == 5


# ----------------------------------------------------------------------------------------------
# ParameterDict


def _parameter_dict_order(lib):
    d = lib.nn.ParameterDict({"b": lib.nn.Parameter(lib.ones(1)), "a": lib.ones(1)})
    d["c"] = lib.ones(1)
    d.update({"z": lib.ones(1), "y": lib.ones(1)})
    ordered = lib.nn.ParameterDict(OrderedDict([("q", lib.ones(1)), ("p", lib.ones(1))]))
    ordered.update([("m", lib.ones(1)), ("l", lib.ones(1))])
    ordered.update(lib.nn.ParameterDict(OrderedDict([("k", lib.ones(1)), ("j", lib.ones(1))])))
    return (list(d), [n for n, _ in d.named_parameters()], list(ordered),
            list(ordered.state_dict()))


def _parameter_dict_methods(lib):
    d = lib.nn.ParameterDict({"b": lib.ones(1), "a": lib.zeros(1)})
    e = d.copy()
    e["c"] = lib.ones(2)
    union = d | e
    last = d.popitem()
    d.setdefault("z", lib.ones(3))
    return (list(d), list(e), list(union), last[0], list(reversed(d)), d.get("nope", 5),
            list(d.fromkeys(["x", "y"])), repr(d), d.pop("z").shape, len(d))


def _parameter_dict_errors(lib):
    d = lib.nn.ParameterDict()
    out = []
    for call in (lambda: d.__setitem__(1, lib.ones(1)), lambda: d.update(5),
                 lambda: d.update([(1,)]), lambda: d.update([5]), lambda: d(1)):
        try:
            call()
            out.append("no error")
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            out.append(f"{type(e).__name__}: {e}")
    return out


@pytest.mark.parametrize("fn", [_parameter_dict_order, _parameter_dict_methods,
                                _parameter_dict_errors], ids=lambda f: f.__name__)
def test_parameter_dict_like_torch(fn) -> None:
    _same(fn)


# ----------------------------------------------------------------------------------------------
# Modules that skip Module.__init__, _apply, to(complex)


def _without_init(lib, action):
    class M(lib.nn.Module):
        def __init__(self):
            self.x = 1

        def forward(self, x):
            return x

    return action(M())


@pytest.mark.parametrize("action", ["call", "repr", "parameters", "state_dict", "train",
                                    "children", "register_forward_hook", "getattr"])
def test_module_that_skipped_init_like_torch(action: str) -> None:
    actions = {
        "call": lambda m: m(1), "repr": repr, "parameters": lambda m: list(m.parameters()),
        "state_dict": lambda m: m.state_dict(), "train": lambda m: m.train(),
        "children": lambda m: list(m.children()),
        "register_forward_hook": lambda m: m.register_forward_hook(lambda *a: None),
        "getattr": lambda m: m.missing,
    }
    _same(lambda lib: _without_init(lib, actions[action]))


def _apply_sees_tensors(lib):
    seen = []
    shared = lib.nn.Linear(1, 1)
    model = lib.nn.Sequential(lib.nn.Sequential(shared, lib.nn.BatchNorm1d(1)), shared)
    model[0][0](lib.ones(1, 1)).sum().backward()
    model._apply(lambda t: (seen.append((type(t).__name__, tuple(t.shape))), t)[1])
    return seen


def _apply_keeps_identity(lib):
    m = lib.nn.Linear(2, 2)
    m(lib.ones(1, 2)).sum().backward()
    weight, grad, version = m.weight, m.weight.grad, m.weight._version
    m.double()
    return (weight is m.weight, grad is m.weight.grad, m.weight.dtype, m.weight.grad.dtype,
            m.weight._version - version, m.bias.grad.dtype)


def _to_complex(lib):
    m = lib.nn.Linear(2, 2)
    m.to(lib.complex64)
    n = lib.nn.BatchNorm1d(2).to(dtype=lib.complex128)
    return m.weight.dtype, n.running_mean.dtype, n.num_batches_tracked.dtype


@pytest.mark.parametrize("fn", [_apply_sees_tensors, _apply_keeps_identity, _to_complex],
                         ids=lambda f: f.__name__)
def test_apply_and_to_like_torch(fn) -> None:
    _same(fn)
