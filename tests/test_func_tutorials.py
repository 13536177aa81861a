"""PyTorch's torch.func tutorials (per-sample gradients, model ensembling) as tests: each
program is written as the tutorial writes it, as a function of the library (``torch`` is
chainrule or PyTorch), runs its own checks, and gives the same values under both libraries
(the models' weights are copied from PyTorch's, since the random streams differ)."""

from __future__ import annotations

import numpy as np

import chainrule
from chainrule.func._batched import FALLBACK_COUNTS

from .conftest import assert_close
from .conftest import torch as real_torch


def _copy_weights(models_from, models_to, lib) -> None:
    for source, target in zip(models_from, models_to, strict=True):
        with lib.no_grad():
            for (name, p), (name2, q) in zip(
                source.named_parameters(), target.named_parameters(), strict=True
            ):
                assert name == name2
                q.copy_(lib.tensor(p.detach().numpy()))


def per_sample_gradients(torch, batch_size, data_np, targets_np, make_weights_like=None):
    """The "Per-sample-gradients" tutorial (its SimpleCNN, its loss, its loop and vmap
    versions, its check), with a given batch."""
    nn = torch.nn
    F = torch.nn.functional

    class SimpleCNN(nn.Module):
        def __init__(self):
            super(SimpleCNN, self).__init__()  # noqa: UP008 - as the tutorial writes it
            self.conv1 = nn.Conv2d(1, 32, 3, 1)
            self.conv2 = nn.Conv2d(32, 64, 3, 1)
            self.fc1 = nn.Linear(9216, 128)
            self.fc2 = nn.Linear(128, 10)

        def forward(self, x):
            x = self.conv1(x)
            x = F.relu(x)
            x = self.conv2(x)
            x = F.relu(x)
            x = F.max_pool2d(x, 2)
            x = torch.flatten(x, 1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            output = F.log_softmax(x, dim=1)
            return output

    def loss_fn(predictions, targets):
        return F.nll_loss(predictions, targets)

    data = torch.tensor(data_np)
    targets = torch.tensor(targets_np)
    model = SimpleCNN()
    if make_weights_like is not None:
        _copy_weights([make_weights_like], [model], torch)

    def compute_grad(sample, target):
        sample = sample.unsqueeze(0)  # prepend batch dimension for processing
        target = target.unsqueeze(0)
        prediction = model(sample)
        loss = loss_fn(prediction, target)
        return torch.autograd.grad(loss, list(model.parameters()))

    def compute_sample_grads(data, targets):
        """manually process each sample with per sample gradient"""
        sample_grads = [compute_grad(data[i], targets[i]) for i in range(batch_size)]
        sample_grads = zip(*sample_grads)  # noqa: B905 - as the tutorial writes it
        sample_grads = [torch.stack(shards) for shards in sample_grads]
        return sample_grads

    per_sample_grads = compute_sample_grads(data, targets)
    functional_call, vmap, grad = torch.func.functional_call, torch.func.vmap, torch.func.grad
    params = {k: v.detach() for k, v in model.named_parameters()}
    buffers = {k: v.detach() for k, v in model.named_buffers()}

    def compute_loss(params, buffers, sample, target):
        batch = sample.unsqueeze(0)
        targets = target.unsqueeze(0)
        predictions = functional_call(model, (params, buffers), (batch,))
        loss = loss_fn(predictions, targets)
        return loss

    ft_compute_grad = grad(compute_loss)
    ft_compute_sample_grad = vmap(ft_compute_grad, in_dims=(None, None, 0, 0))
    ft_per_sample_grads = ft_compute_sample_grad(params, buffers, data, targets)
    for per_sample_grad, ft_per_sample_grad in zip(
        per_sample_grads, ft_per_sample_grads.values(), strict=True
    ):
        assert torch.allclose(per_sample_grad, ft_per_sample_grad, atol=3e-3, rtol=1e-5)
    return model, ft_per_sample_grads


def test_per_sample_gradients_tutorial() -> None:
    rng = np.random.default_rng(0)
    batch = 4
    data = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    targets = rng.integers(0, 10, batch)
    theirs_model, theirs = per_sample_gradients(real_torch, batch, data, targets)
    FALLBACK_COUNTS.clear()
    _, ours = per_sample_gradients(chainrule, batch, data, targets, theirs_model)
    assert FALLBACK_COUNTS == {}, FALLBACK_COUNTS
    assert list(ours) == list(theirs)
    for key in theirs:
        assert_close(ours[key], theirs[key], rtol=1e-4, atol=1e-5, what=key)


def model_ensembling(torch, data_np, weights_from=None):
    """The "Model ensembling" tutorial (its SimpleMLP, stack_module_state, functional_call on a
    copy moved to the meta device, vmap over models with and without a minibatch each)."""
    import copy

    nn = torch.nn
    F = torch.nn.functional

    class SimpleMLP(nn.Module):
        def __init__(self):
            super(SimpleMLP, self).__init__()  # noqa: UP008 - as the tutorial writes it
            self.fc1 = nn.Linear(784, 128)
            self.fc2 = nn.Linear(128, 128)
            self.fc3 = nn.Linear(128, 10)

        def forward(self, x):
            x = x.flatten(1)
            x = self.fc1(x)
            x = F.relu(x)
            x = self.fc2(x)
            x = F.relu(x)
            x = self.fc3(x)
            return x

    num_models = 10
    data = torch.tensor(data_np)
    models = [SimpleMLP() for _ in range(num_models)]
    if weights_from is not None:
        _copy_weights(weights_from, models, torch)
    minibatches = data[:num_models]
    predictions_diff_minibatch_loop = [
        model(minibatch) for model, minibatch in zip(models, minibatches, strict=True)
    ]
    minibatch = data[0]
    predictions2 = [model(minibatch) for model in models]
    params, buffers = torch.func.stack_module_state(models)
    base_model = copy.deepcopy(models[0])
    base_model = base_model.to("meta")

    def fmodel(params, buffers, x):
        return torch.func.functional_call(base_model, (params, buffers), (x,))

    assert [p.size(0) for p in params.values()] == [num_models] * 6
    assert minibatches.shape == (num_models, 8, 1, 28, 28)
    predictions1_vmap = torch.vmap(fmodel)(params, buffers, minibatches)
    assert torch.allclose(
        predictions1_vmap, torch.stack(predictions_diff_minibatch_loop), atol=1e-3, rtol=1e-5
    )
    predictions2_vmap = torch.vmap(fmodel, in_dims=(0, 0, None))(params, buffers, minibatch)
    assert torch.allclose(predictions2_vmap, torch.stack(predictions2), atol=1e-3, rtol=1e-5)
    return models, predictions1_vmap, predictions2_vmap


def test_model_ensembling_tutorial() -> None:
    data = np.random.default_rng(1).standard_normal((12, 8, 1, 28, 28)).astype(np.float32)
    theirs_models, *theirs = model_ensembling(real_torch, data)
    FALLBACK_COUNTS.clear()
    _, *ours = model_ensembling(chainrule, data, theirs_models)
    assert FALLBACK_COUNTS == {}, FALLBACK_COUNTS
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-5)


def jacobians_and_hessians(torch, rng):
    """The "Jacobians, Hessians, hvp, vhp, and more" tutorial (its predict function, vmap of a
    vjp function, jacrev/jacfwd with argnums, hessian four ways, batch Jacobians and Hessians,
    hvp two ways), with its checks; sizes as the tutorial's, benchmarks left out."""
    from functools import partial

    F = torch.nn.functional

    def t(*shape):
        return torch.tensor(rng.standard_normal(shape).astype(np.float32))

    def predict(weight, bias, x):
        return F.linear(x, weight, bias).tanh()

    D = 16
    weight, bias, x = t(D, D), t(D), t(D)

    def compute_jac(xp):
        jacobian_rows = [
            torch.autograd.grad(predict(weight, bias, xp), xp, vec)[0] for vec in unit_vectors
        ]
        return torch.stack(jacobian_rows)

    xp = x.clone().requires_grad_()
    unit_vectors = torch.eye(D)
    jacobian = compute_jac(xp)
    out = [jacobian]
    _, vjp_fn = torch.func.vjp(partial(predict, weight, bias), x)
    (ft_jacobian,) = torch.func.vmap(vjp_fn)(unit_vectors)
    assert torch.allclose(ft_jacobian, jacobian)
    ft_jacobian = torch.func.jacrev(predict, argnums=2)(weight, bias, x)
    assert torch.allclose(ft_jacobian, jacobian)
    ft_jac_weight, ft_jac_bias = torch.func.jacrev(predict, argnums=(0, 1))(weight, bias, x)
    out += [ft_jac_weight, ft_jac_bias]
    Din, Dout = 32, 64
    weight, bias, x = t(Dout, Din), t(Dout), t(Din)
    using_fwd = torch.func.jacfwd(predict, argnums=2)(weight, bias, x)
    using_bwd = torch.func.jacrev(predict, argnums=2)(weight, bias, x)
    assert torch.allclose(using_fwd, using_bwd, atol=1e-6)
    Din, Dout = 24, 8
    weight, bias, x = t(Dout, Din), t(Dout), t(Din)
    hess_api = torch.func.hessian(predict, argnums=2)(weight, bias, x)
    jacfwd, jacrev = torch.func.jacfwd, torch.func.jacrev
    hess_fwdfwd = jacfwd(jacfwd(predict, argnums=2), argnums=2)(weight, bias, x)
    hess_revrev = jacrev(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    hess_fwdrev = jacfwd(jacrev(predict, argnums=2), argnums=2)(weight, bias, x)
    assert torch.allclose(hess_api, hess_fwdfwd, atol=1e-6)
    assert torch.allclose(hess_api, hess_revrev, atol=1e-6)
    assert torch.allclose(hess_api, hess_fwdrev, atol=1e-6)
    out.append(hess_api)
    batch_size, Din, Dout = 8, 31, 33
    weight, bias, x = t(Dout, Din), t(Dout), t(batch_size, Din)
    compute_batch_jacobian = torch.func.vmap(jacrev(predict, argnums=2), in_dims=(None, None, 0))
    batch_jacobian0 = compute_batch_jacobian(weight, bias, x)

    def predict_with_output_summed(weight, bias, x):
        return predict(weight, bias, x).sum(0)

    batch_jacobian1 = jacrev(predict_with_output_summed, argnums=2)(weight, bias, x).movedim(1, 0)
    assert torch.allclose(batch_jacobian0, batch_jacobian1, atol=1e-6)
    compute_batch_hessian = torch.func.vmap(
        torch.func.hessian(predict, argnums=2), in_dims=(None, None, 0)
    )
    batch_hess = compute_batch_hessian(weight, bias, x[:3])
    assert batch_hess.shape == (3, Dout, Din, Din)
    out += [batch_jacobian0, batch_hess]

    def hvp(f, primals, tangents):
        return torch.func.jvp(torch.func.grad(f), primals, tangents)[1]

    def f(x):
        return x.sin().sum()

    x, tangent = t(2048), t(2048)
    result = hvp(f, (x,), (tangent,))

    def hvp_revrev(f, primals, tangents):
        _, vjp_fn = torch.func.vjp(torch.func.grad(f), *primals)
        return vjp_fn(*tangents)

    result_hvp_revrev = hvp_revrev(f, (x,), (tangent,))
    assert torch.allclose(result, result_hvp_revrev[0])
    out.append(result)
    return out


def test_jacobians_and_hessians_tutorial() -> None:
    theirs = jacobians_and_hessians(real_torch, np.random.default_rng(2))
    ours = jacobians_and_hessians(chainrule, np.random.default_rng(2))
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-5)


def _ntk_setup(torch, weights_from=None):
    """The "Neural Tangent Kernels" tutorial's CNN, data and ``fnet_single`` (smaller images
    than the tutorial's)."""
    nn = torch.nn

    class CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 8, (3, 3))
            self.conv2 = nn.Conv2d(8, 8, (3, 3))
            self.fc = nn.Linear(8 * 6 * 6, 4)

        def forward(self, x):
            x = self.conv1(x)
            x = x.relu()
            x = self.conv2(x)
            x = x.relu()
            x = x.flatten(1)
            x = self.fc(x)
            return x

    rng = np.random.default_rng(0)
    x_train = torch.tensor(rng.standard_normal((5, 3, 10, 10)).astype(np.float32))
    x_test = torch.tensor(rng.standard_normal((3, 3, 10, 10)).astype(np.float32))
    net = CNN()
    if weights_from is not None:
        _copy_weights([weights_from], [net], torch)
    params = {k: v.detach() for k, v in net.named_parameters()}

    def fnet_single(params, x):
        return torch.func.functional_call(net, params, (x.unsqueeze(0),)).squeeze(0)

    return net, params, fnet_single, x_train, x_test


def neural_tangent_kernel(torch, weights_from=None):
    """The "Neural Tangent Kernels" tutorial's Jacobian-contraction program (a small CNN,
    functional_call on one example, vmap of jacrev over the data, einsum of the Jacobians),
    its three compute modes."""
    net, params, fnet_single, x_train, x_test = _ntk_setup(torch, weights_from)
    vmap, jacrev = torch.func.vmap, torch.func.jacrev

    def empirical_ntk_jacobian_contraction(fnet_single, params, x1, x2, compute="full"):
        jac1 = vmap(jacrev(fnet_single), (None, 0))(params, x1)
        jac1 = jac1.values()
        jac1 = [j.flatten(2) for j in jac1]
        jac2 = vmap(jacrev(fnet_single), (None, 0))(params, x2)
        jac2 = jac2.values()
        jac2 = [j.flatten(2) for j in jac2]
        einsum_expr = {"full": "Naf,Mbf->NMab", "trace": "Naf,Maf->NM", "diagonal": "Naf,Maf->NMa"}
        result = torch.stack(
            [torch.einsum(einsum_expr[compute], j1, j2) for j1, j2 in zip(jac1, jac2)]  # noqa: B905
        )
        result = result.sum(0)
        return result

    results = [
        empirical_ntk_jacobian_contraction(fnet_single, params, x_train, x_test, mode)
        for mode in ("full", "trace", "diagonal")
    ]
    assert results[0].shape == (5, 3, 4, 4)
    return net, results


def test_neural_tangent_kernel_tutorial() -> None:
    theirs_net, theirs = neural_tangent_kernel(real_torch)
    _, ours = neural_tangent_kernel(chainrule, theirs_net)
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)


def neural_tangent_kernel_vps(torch, weights_from=None):
    """The "Neural Tangent Kernels" tutorial's second program, NTK-vector products: a vjp of
    one example's network, vmap of (vjp_fn then jvp) over the identity's rows (cotangents
    batched at a vmap level entered after the vjp, whose outputs are batched at two others),
    inside a double vmap over the pairs of examples; its three compute modes."""
    net, params, fnet_single, x_train, x_test = _ntk_setup(torch, weights_from)
    vmap, vjp, jvp = torch.func.vmap, torch.func.vjp, torch.func.jvp

    def empirical_ntk_ntk_vps(func, params, x1, x2, compute="full"):
        def get_ntk(x1, x2):
            def func_x1(params):
                return func(params, x1)

            def func_x2(params):
                return func(params, x2)

            output, vjp_fn = vjp(func_x1, params)

            def get_ntk_slice(vec):
                # This computes ``vec @ J(x2).T``
                vjps = vjp_fn(vec)
                # This computes ``J(X1) @ vjps``
                _, jvps = jvp(func_x2, (params,), vjps)
                return jvps

            basis = torch.eye(output.numel(), dtype=output.dtype, device=output.device).view(
                output.numel(), -1
            )
            return vmap(get_ntk_slice)(basis)

        result = vmap(vmap(get_ntk, (None, 0)), (0, None))(x1, x2)
        if compute == "full":
            return result
        if compute == "trace":
            return torch.einsum("NMKK->NM", result)
        if compute == "diagonal":
            return torch.einsum("NMKK->NMK", result)

    results = [
        empirical_ntk_ntk_vps(fnet_single, params, x_train, x_test, mode)
        for mode in ("full", "trace", "diagonal")
    ]
    # the tutorial's check: both programs give the same kernel
    contraction = neural_tangent_kernel(torch, net)[1]
    for a, b in zip(results, contraction, strict=True):
        assert torch.allclose(a, b, atol=1e-4, rtol=1e-4)
    return net, results


def test_neural_tangent_kernel_vps_tutorial() -> None:
    FALLBACK_COUNTS.clear()
    theirs_net, theirs = neural_tangent_kernel_vps(real_torch)
    _, ours = neural_tangent_kernel_vps(chainrule, theirs_net)
    for a, b in zip(ours, theirs, strict=True):
        assert_close(a, b, rtol=1e-4, atol=1e-4)
    assert not FALLBACK_COUNTS
