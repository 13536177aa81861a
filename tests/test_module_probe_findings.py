"""Findings of a random-program probe of nn.Module machinery and serialization against PyTorch.

Load-state-dict pre/post hooks, the global forward hooks of ``nn.modules.module`` and the
message of a ``Parameter`` of an integer tensor, each compared with PyTorch.
"""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest
import torch

import chainrule

LIBS = (torch, chainrule)


def _model(lib):
    lib.manual_seed(3)
    nn = lib.nn
    return nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.Linear(3, 1), nn.BatchNorm1d(1)))


def _values(module) -> dict[str, np.ndarray]:
    return {k: v.detach().numpy().copy() for k, v in module.state_dict().items()}


def _outcome(fn):
    try:
        return ("ok", fn())
    except Exception as e:  # noqa: BLE001 - the outcome is what is compared
        return ("err", type(e).__name__, str(e).replace("chainrule", "torch"))


def _checkpoint(lib, drop=(), extra=()):
    model = _model(lib)
    sd = {k: v + 1 if v.is_floating_point() else v for k, v in model.state_dict().items()}
    for key in drop:
        del sd[key]
    for key in extra:
        sd[key] = lib.zeros(1)
    return sd


# -- load_state_dict post-hooks -------------------------------------------------------------------


@pytest.mark.parametrize("strict", [True, False])
@pytest.mark.parametrize("clear", [True, False])
def test_post_hook_clears_keys_then_strict_check(strict, clear):
    results = []
    for lib in LIBS:
        log = []
        model = _model(lib)

        def hook(module, keys, log=log):
            log.append(
                (
                    type(module).__name__,
                    list(keys.missing_keys),
                    list(keys.unexpected_keys),
                    float(module[0].weight.detach()[0, 0]),
                )
            )
            if clear:
                keys.missing_keys.clear()
                keys.unexpected_keys.clear()

        model.register_load_state_dict_post_hook(hook)
        sd = _checkpoint(lib, drop=["1.0.bias"], extra=["zz"])
        out = _outcome(lambda model=model, sd=sd: repr(model.load_state_dict(sd, strict=strict)))
        results.append((out, log, _values(model)))
    (out_t, log_t, val_t), (out_c, log_c, val_c) = results
    assert out_c == out_t
    assert log_c == log_t
    assert val_c.keys() == val_t.keys()
    for key in val_t:
        np.testing.assert_allclose(val_c[key], val_t[key], rtol=1e-6, atol=1e-7)


def test_post_hooks_run_children_first_with_shared_lists():
    logs = []
    for lib in LIBS:
        log = []
        model = _model(lib)
        for name, module in model.named_modules():
            module.register_load_state_dict_post_hook(
                lambda m, keys, name=name, log=log: log.append(
                    (name, list(keys.missing_keys), list(keys.unexpected_keys))
                )
            )
        model.load_state_dict(_checkpoint(lib), strict=True)
        logs.append(log)
    assert logs[1] == logs[0]
    assert [entry[0] for entry in logs[0]] == ["0", "1.0", "1.1", "1", ""]


def test_post_hook_returning_a_value_raises():
    outs = []
    for lib in LIBS:
        model = _model(lib)
        model.register_load_state_dict_post_hook(lambda m, keys: keys)
        outs.append(_outcome(lambda model=model, lib=lib: model.load_state_dict(_checkpoint(lib))))
    assert outs[1] == outs[0]
    assert outs[0][1] == "AssertionError"


def test_post_hook_handle_removes_it():
    for lib in LIBS:
        model = _model(lib)
        seen = []
        handle = model.register_load_state_dict_post_hook(lambda m, k, s=seen: s.append(1))
        handle.remove()
        model.load_state_dict(_checkpoint(lib))
        assert seen == []


def test_shape_error_with_post_hook_changes_nothing():
    for lib in LIBS[1:]:  # chainrule's atomicity (PyTorch copies the keys before the error)
        model = _model(lib)
        model.register_load_state_dict_post_hook(lambda m, k: None)
        before = _values(model)
        sd = _checkpoint(lib)
        sd["0.weight"] = lib.zeros(4, 2)
        with pytest.raises(RuntimeError, match="size mismatch for 0.weight"):
            model.load_state_dict(sd)
        after = _values(model)
        for key in before:
            np.testing.assert_array_equal(after[key], before[key])


# -- load_state_dict pre-hooks -------------------------------------------------------------------


def test_pre_hook_sees_its_prefix_and_arguments():
    logs = []
    for lib in LIBS:
        log = []
        model = _model(lib)
        model[1].register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, mk, uk, em, log=log: log.append(
                (
                    type(m).__name__,
                    sorted(sd),
                    prefix,
                    meta.get("assign_to_params_buffers"),
                    strict,
                    list(mk),
                    list(uk),
                    list(em),
                )
            )
        )
        model._register_load_state_dict_pre_hook(
            lambda sd, prefix, meta, strict, mk, uk, em, log=log: log.append(
                ("private", sorted(sd), prefix)
            )
        )
        model.load_state_dict(_checkpoint(lib, extra=["1.zz"]), strict=False, assign=True)
        logs.append(log)
    assert logs[1] == logs[0]


def test_pre_hook_renames_old_keys():
    results = []
    for lib in LIBS:
        model = _model(lib)

        def rename(m, sd, prefix, *rest):
            for key in [k for k in sd if k.startswith(prefix + "old_")]:
                sd[prefix + key[len(prefix) + 4 :]] = sd.pop(key)

        model[1][0].register_load_state_dict_pre_hook(rename)
        sd = _checkpoint(lib)
        sd["1.0.old_weight"] = sd.pop("1.0.weight") * 3
        out = model.load_state_dict(sd)
        results.append((repr(out), _values(model)))
    assert results[1][0] == results[0][0]
    for key in results[0][1]:
        np.testing.assert_allclose(results[1][1][key], results[0][1][key], rtol=1e-6)


def test_pre_hook_error_message_raises_and_changes_nothing():
    outs = []
    for lib in LIBS:
        model = _model(lib)
        before = _values(model)
        model[0].register_load_state_dict_pre_hook(
            lambda m, sd, prefix, meta, strict, mk, uk, em: em.append("old checkpoint")
        )
        outs.append(_outcome(lambda model=model, lib=lib: model.load_state_dict(_checkpoint(lib))))
        if lib is chainrule:
            for key, value in _values(model).items():
                np.testing.assert_array_equal(value, before[key])
    assert outs[1] == outs[0]
    assert outs[0][0] == "err"


def test_load_hooks_survive_deepcopy_and_old_pickles():
    model = _model(chainrule)
    model.register_load_state_dict_post_hook(lambda m, k: k.missing_keys.clear())
    clone = copy.deepcopy(model)
    assert clone.load_state_dict({}, strict=True).missing_keys == []
    state = pickle.loads(pickle.dumps(_model(chainrule)))
    del state.__dict__["_load_state_dict_post_hooks"]
    state.__setstate__(dict(state.__dict__))
    assert len(state._load_state_dict_post_hooks) == 0


# -- global forward hooks -----------------------------------------------------------------------


@pytest.mark.parametrize("with_kwargs", [False, True])
def test_global_forward_hooks_order_and_results(with_kwargs):
    results = []
    for lib in LIBS:
        g = lib.nn.modules.module
        log = []
        model = _model(lib).eval()
        model[0].register_forward_hook(lambda m, a, o, log=log: log.append("own"))
        model[0].register_forward_pre_hook(lambda m, a, log=log: log.append("own-pre"))

        if with_kwargs:

            def fwd(m, a, kw, o, log=log, lib=lib):
                log.append(("kw", type(m).__name__, sorted(kw)))
                return o * 2 if isinstance(m, lib.nn.Linear) else None
        else:

            def fwd(m, a, o, log=log, lib=lib):
                log.append(("plain", type(m).__name__))
                return o * 2 if isinstance(m, lib.nn.Linear) else None

        def pre(m, a, log=log, lib=lib):
            log.append(("pre", type(m).__name__))
            return (a[0] + 1,) if isinstance(m, lib.nn.BatchNorm1d) else None

        handles = [
            g.register_module_forward_hook(fwd, with_kwargs=with_kwargs),
            g.register_module_forward_pre_hook(pre),
        ]
        try:
            out = model(lib.ones(2, 2))
        finally:
            for h in handles:
                h.remove()
        after = model(lib.ones(2, 2))
        results.append((log, out.detach().numpy(), after.detach().numpy()))
    assert results[1][0] == results[0][0]
    np.testing.assert_allclose(results[1][1], results[0][1], rtol=1e-5)
    np.testing.assert_allclose(results[1][2], results[0][2], rtol=1e-5)


def test_global_always_call_hook_runs_on_error():
    logs = []
    for lib in LIBS:
        g = lib.nn.modules.module
        log = []
        model = lib.nn.Linear(2, 2)
        h1 = g.register_module_forward_hook(
            lambda m, a, o, log=log: log.append(("always", o)), always_call=True
        )
        h2 = g.register_module_forward_hook(lambda m, a, o, log=log: log.append("plain"))
        try:
            with pytest.raises(RuntimeError):
                model(lib.ones(2, 3))
        finally:
            h1.remove()
            h2.remove()
        logs.append(log)
    assert logs[1] == logs[0] == [("always", None)]


def test_global_hooks_with_backward_hooks_gradients():
    grads = []
    for lib in LIBS:
        g = lib.nn.modules.module
        model = _model(lib).train()
        h = g.register_module_forward_hook(
            lambda m, a, o, first=model[0]: o.sin() if m is first else None
        )
        try:
            x = lib.ones(3, 2, requires_grad=True)
            model(x).sum().backward()
        finally:
            h.remove()
        grads.append((x.grad.numpy(), model[0].weight.grad.numpy()))
    for a, b in zip(grads[0], grads[1], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)


# -- Parameter of a non-float tensor ---------------------------------------------------------------


@pytest.mark.parametrize("dtype", ["int64", "int8", "bool", "uint8"])
def test_parameter_of_integer_tensor_message(dtype):
    outs = [
        _outcome(lambda lib=lib: lib.nn.Parameter(lib.zeros(2, dtype=getattr(lib, dtype))))
        for lib in LIBS
    ]
    assert outs[1] == outs[0]
    kept = [
        repr(
            lib.nn.Parameter(lib.zeros(2, dtype=getattr(lib, dtype)), requires_grad=False)
        ).replace("chainrule", "torch")
        for lib in LIBS
    ]
    assert kept[1] == kept[0]


# -- safetensors: complex64 and unsigned 16/32/64-bit tensors -------------------------------------

_ST_DTYPES = ["complex64", "uint16", "uint32", "uint64", "bfloat16", "bool", "float16"]


def _st_tensors(lib):
    rng = np.random.default_rng(5)
    out = {}
    for i, name in enumerate(_ST_DTYPES):
        values = rng.integers(0, 200, size=(3, 4)).astype(np.float64)
        if name == "complex64":
            values = values + 1j * rng.standard_normal((3, 4))
        t = lib.tensor(values).to(getattr(lib, name))
        out[name] = t.t() if i % 2 else t[1:]  # non-contiguous / offset views
    return out


def test_safetensors_written_by_chainrule_read_by_safetensors(tmp_path):
    import safetensors.torch

    path = tmp_path / "c.safetensors"
    chainrule.save(_st_tensors(chainrule), str(path))
    got = safetensors.torch.load_file(str(path))
    want = _st_tensors(torch)
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        assert got[key].dtype == value.dtype
        assert got[key].shape == value.shape
        assert torch.equal(got[key], value.contiguous())


def test_safetensors_written_by_safetensors_read_by_chainrule(tmp_path):
    import safetensors.torch

    path = tmp_path / "t.safetensors"
    want = _st_tensors(torch)
    safetensors.torch.save_file({k: v.contiguous() for k, v in want.items()}, str(path))
    got = chainrule.load(str(path))
    assert sorted(got) == sorted(want)
    for key, value in want.items():
        assert str(got[key].dtype).split(".")[-1] == str(value.dtype).split(".")[-1]
        assert tuple(got[key].shape) == tuple(value.shape)
        assert got[key].stride() == value.contiguous().stride()
        mine = got[key]
        if key == "bfloat16":
            mine, value = mine.float(), value.float()
        np.testing.assert_array_equal(mine.numpy(), value.numpy())


def test_safetensors_refuses_complex128_and_writes_nothing(tmp_path):
    path = tmp_path / "z.safetensors"
    with pytest.raises(TypeError, match="complex128 tensors are not supported by safetensors"):
        chainrule.save({"z": chainrule.zeros(2, dtype=chainrule.complex128)}, str(path))
    assert not path.exists()


# -- dropout masks drawn in the input's memory order; alpha dropout's draws --------------------

_LAYOUTS = {
    "contiguous": lambda t: t,
    "transposed": lambda t: t.transpose(0, -1),
    "permuted": lambda t: t.permute(2, 0, 1) if t.dim() == 3 else t.t(),
    "sliced": lambda t: t[..., ::2],
}


@pytest.mark.parametrize("layout", list(_LAYOUTS))
@pytest.mark.parametrize("shape", [(3, 6), (2, 4, 5)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("fn", ["dropout", "alpha_dropout", "feature_alpha_dropout"])
def test_dropout_masks_as_pytorch_after_manual_seed(fn, dtype, shape, layout):
    x = np.random.default_rng(11).standard_normal(shape)
    outs = []
    for lib in LIBS:
        lib.manual_seed(7)
        t = _LAYOUTS[layout](lib.tensor(x).to(getattr(lib, dtype))).requires_grad_()
        out = getattr(lib.nn.functional, fn)(t, 0.3, True)
        out.backward(lib.ones_like(out))
        outs.append((out.detach().numpy(), out.stride(), t.grad.numpy(), lib.rand(3).numpy()))
    (o_t, s_t, g_t, r_t), (o_c, s_c, g_c, r_c) = outs
    np.testing.assert_allclose(o_c, o_t, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(g_c, g_t, rtol=1e-6, atol=1e-7)
    assert s_c == s_t
    np.testing.assert_array_equal(r_c, r_t)  # the same number of draws


@pytest.mark.parametrize("cls", ["AlphaDropout", "FeatureAlphaDropout", "Dropout"])
def test_dropout_modules_in_a_model_as_pytorch(cls):
    results = []
    for lib in LIBS:
        lib.manual_seed(2)
        nn = lib.nn
        model = nn.Sequential(nn.Linear(4, 6), getattr(nn, cls)(0.4), nn.SELU(), nn.Linear(6, 2))
        x = lib.tensor(np.random.default_rng(3).standard_normal((5, 4)).astype(np.float32))
        out = model(x.t().contiguous().t())
        out.sum().backward()
        results.append((out.detach().numpy(), model[0].weight.grad.numpy()))
    for a, b in zip(results[0], results[1], strict=True):
        np.testing.assert_allclose(b, a, rtol=1e-5, atol=1e-6)
