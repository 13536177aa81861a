"""Every layer against PyTorch: the same weights (copied from chainrule's fresh module), the same
input, then outputs, ``grad_fn`` names, input and parameter gradients, buffers and reprs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import chainrule

from .conftest import normalise_output, torch


def _input(shape, seed=0, positive=False, dtype="float32"):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape).astype(dtype)
    return np.abs(x) + 0.1 if positive else x


def _copy_weights(ours, theirs) -> None:
    theirs.load_state_dict({k: torch.from_numpy(np.array(v.numpy(), copy=True))
                            for k, v in ours.state_dict().items()})


# name: (constructor taking lib, input shape). Inputs are standard normal.
LAYERS = {
    "linear": (lambda lib: lib.nn.Linear(5, 3), (4, 5)),
    "linear_3d_no_bias": (lambda lib: lib.nn.Linear(5, 3, bias=False), (2, 4, 5)),
    "identity": (lambda lib: lib.nn.Identity(7, x=1), (2, 3)),
    "conv1d": (lambda lib: lib.nn.Conv1d(3, 4, 3, stride=2, padding=1), (2, 3, 9)),
    "conv2d": (lambda lib: lib.nn.Conv2d(3, 6, 3, padding=1), (2, 3, 6, 6)),
    "conv2d_all_options": (lambda lib: lib.nn.Conv2d(4, 6, (3, 2), stride=(2, 1),
                                                      padding=(1, 2), dilation=(1, 2), groups=2,
                                                      bias=False), (2, 4, 7, 6)),
    "conv2d_same": (lambda lib: lib.nn.Conv2d(2, 3, 4, padding="same"), (1, 2, 5, 5)),
    "conv2d_valid": (lambda lib: lib.nn.Conv2d(2, 3, 3, padding="valid"), (1, 2, 5, 5)),
    "conv2d_reflect": (lambda lib: lib.nn.Conv2d(2, 3, 3, padding=1, padding_mode="reflect"),
                       (1, 2, 5, 5)),
    "conv2d_replicate": (lambda lib: lib.nn.Conv2d(2, 3, 3, padding=2,
                                                    padding_mode="replicate"), (1, 2, 5, 5)),
    "conv2d_circular": (lambda lib: lib.nn.Conv2d(2, 3, 3, padding=1, padding_mode="circular"),
                        (1, 2, 5, 5)),
    "conv2d_unbatched": (lambda lib: lib.nn.Conv2d(2, 3, 3), (2, 5, 5)),
    "conv3d": (lambda lib: lib.nn.Conv3d(2, 2, 2, padding=1), (1, 2, 3, 3, 3)),
    "conv_transpose1d": (lambda lib: lib.nn.ConvTranspose1d(3, 2, 3, stride=2), (2, 3, 4)),
    "conv_transpose2d": (lambda lib: lib.nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1,
                                                            output_padding=1, groups=2),
                         (2, 4, 3, 3)),
    "conv_transpose3d": (lambda lib: lib.nn.ConvTranspose3d(2, 2, 2), (1, 2, 2, 2, 2)),
    "max_pool1d": (lambda lib: lib.nn.MaxPool1d(2), (2, 3, 8)),
    "max_pool2d": (lambda lib: lib.nn.MaxPool2d(2), (2, 3, 6, 6)),
    "max_pool2d_options": (lambda lib: lib.nn.MaxPool2d(3, stride=2, padding=1, dilation=1,
                                                        ceil_mode=True), (2, 3, 7, 6)),
    "avg_pool1d": (lambda lib: lib.nn.AvgPool1d(3, stride=2, padding=1), (2, 3, 8)),
    "avg_pool2d": (lambda lib: lib.nn.AvgPool2d(2), (2, 3, 6, 6)),
    "avg_pool2d_options": (lambda lib: lib.nn.AvgPool2d(3, stride=2, padding=1, ceil_mode=True,
                                                        count_include_pad=False), (2, 3, 7, 6)),
    "adaptive_avg_pool1d": (lambda lib: lib.nn.AdaptiveAvgPool1d(3), (2, 3, 8)),
    "adaptive_avg_pool2d": (lambda lib: lib.nn.AdaptiveAvgPool2d((3, 2)), (2, 3, 7, 5)),
    "adaptive_avg_pool2d_global": (lambda lib: lib.nn.AdaptiveAvgPool2d(1), (2, 3, 4, 4)),
    "adaptive_avg_pool2d_none": (lambda lib: lib.nn.AdaptiveAvgPool2d((None, 2)), (2, 3, 4, 5)),
    "adaptive_max_pool1d": (lambda lib: lib.nn.AdaptiveMaxPool1d(3), (2, 3, 8)),
    "adaptive_max_pool2d": (lambda lib: lib.nn.AdaptiveMaxPool2d((3, 2)), (2, 3, 7, 5)),
    "batch_norm1d": (lambda lib: lib.nn.BatchNorm1d(4), (6, 4)),
    "batch_norm1d_3d": (lambda lib: lib.nn.BatchNorm1d(4, momentum=None), (3, 4, 5)),
    "batch_norm2d": (lambda lib: lib.nn.BatchNorm2d(3), (4, 3, 3, 3)),
    "batch_norm2d_no_affine": (lambda lib: lib.nn.BatchNorm2d(3, affine=False,
                                                              track_running_stats=False),
                               (4, 3, 3, 3)),
    "batch_norm3d": (lambda lib: lib.nn.BatchNorm3d(2), (2, 2, 2, 2, 2)),
    "instance_norm2d": (lambda lib: lib.nn.InstanceNorm2d(3, affine=True,
                                                          track_running_stats=True),
                        (2, 3, 4, 4)),
    "layer_norm": (lambda lib: lib.nn.LayerNorm(6), (3, 6)),
    "layer_norm_2d": (lambda lib: lib.nn.LayerNorm((3, 4), bias=False), (2, 3, 4)),
    "group_norm": (lambda lib: lib.nn.GroupNorm(2, 4), (3, 4, 5)),
    "flatten": (lambda lib: lib.nn.Flatten(), (2, 3, 4)),
    "flatten_range": (lambda lib: lib.nn.Flatten(0, 1), (2, 3, 4)),
    "unflatten": (lambda lib: lib.nn.Unflatten(1, (2, 3)), (4, 6)),
    "zero_pad2d": (lambda lib: lib.nn.ZeroPad2d((1, 0, 2, 1)), (1, 2, 3, 3)),
    "constant_pad1d": (lambda lib: lib.nn.ConstantPad1d(2, 0.5), (2, 3)),
    "reflection_pad2d": (lambda lib: lib.nn.ReflectionPad2d(1), (1, 2, 3, 3)),
    "replication_pad1d": (lambda lib: lib.nn.ReplicationPad1d((2, 1)), (1, 2, 3)),
    "circular_pad2d": (lambda lib: lib.nn.CircularPad2d(1), (1, 2, 3, 3)),
    "prelu": (lambda lib: lib.nn.PReLU(3), (2, 3, 4)),
    "dropout_eval": (lambda lib: lib.nn.Dropout(0.3).eval(), (4, 5)),
}

ACTIVATIONS = [
    "ReLU", "ReLU6", "LeakyReLU", "ELU", "SELU", "CELU", "GELU", "SiLU", "Mish", "Tanh",
    "Sigmoid", "Softplus", "LogSigmoid", "Softsign", "Tanhshrink", "Hardtanh", "Hardswish",
    "Hardsigmoid", "Hardshrink", "Softshrink",
]
for _name in ACTIVATIONS:
    LAYERS[_name] = (lambda lib, n=_name: getattr(lib.nn, n)(), (3, 5))
LAYERS["GELU_tanh"] = (lambda lib: lib.nn.GELU("tanh"), (3, 5))
LAYERS["Softmax"] = (lambda lib: lib.nn.Softmax(dim=1), (3, 5))
LAYERS["LogSoftmax"] = (lambda lib: lib.nn.LogSoftmax(dim=0), (3, 5))
LAYERS["Softmin"] = (lambda lib: lib.nn.Softmin(dim=-1), (3, 5))
LAYERS["Softmax2d"] = (lambda lib: lib.nn.Softmax2d(), (2, 3, 2, 2))
LAYERS["Threshold"] = (lambda lib: lib.nn.Threshold(0.1, 20.0), (3, 5))
LAYERS["GLU"] = (lambda lib: lib.nn.GLU(1), (3, 4))


@pytest.mark.parametrize("name", sorted(LAYERS))
def test_layer_matches_torch(name: str) -> None:
    build, shape = LAYERS[name]
    chainrule.manual_seed(0)
    ours = build(chainrule)
    theirs = build(torch)
    _copy_weights(ours, theirs)
    x = _input(shape)
    a_in = chainrule.from_numpy(x.copy()).requires_grad_()
    b_in = torch.from_numpy(x.copy()).requires_grad_()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = ours(a_in)
        b = theirs(b_in)
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert a.shape == b.shape and str(a.dtype) == str(b.dtype).replace("torch", "chainrule")
    if b.grad_fn is not None and "CopySlices" not in b.grad_fn.name():
        assert a.grad_fn.name() == b.grad_fn.name()
    cot = _input(tuple(b.shape), seed=1)
    a.backward(chainrule.from_numpy(cot.copy()))
    b.backward(torch.from_numpy(cot.copy()))
    np.testing.assert_allclose(a_in.grad.numpy(), b_in.grad.numpy(), rtol=1e-3, atol=1e-4)
    for (pname, p), (_, q) in zip(ours.named_parameters(), theirs.named_parameters(),
                                  strict=True):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-3, atol=1e-4,
                                   err_msg=pname)
    for (bname, p), (_, q) in zip(ours.named_buffers(), theirs.named_buffers(), strict=True):
        np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-4, atol=1e-5, err_msg=bname)
    assert normalise_output(repr(ours)) == normalise_output(repr(theirs))


def test_batch_norm_running_statistics_over_steps_and_eval() -> None:
    for momentum in (0.1, None):
        ours = chainrule.nn.BatchNorm2d(3, momentum=momentum)
        theirs = torch.nn.BatchNorm2d(3, momentum=momentum)
        for step in range(4):
            x = _input((5, 3, 2, 2), seed=step) * (step + 1) + step
            ours(chainrule.from_numpy(x.copy()))
            theirs(torch.from_numpy(x.copy()))
        for (name, p), (_, q) in zip(ours.named_buffers(), theirs.named_buffers(), strict=True):
            np.testing.assert_allclose(p.numpy(), q.numpy(), rtol=1e-5, err_msg=name)
        ours.eval()
        theirs.eval()
        x = _input((2, 3, 2, 2), seed=9)
        np.testing.assert_allclose(ours(chainrule.from_numpy(x.copy())).detach().numpy(),
                                   theirs(torch.from_numpy(x.copy())).detach().numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_dropout_statistics_and_modes() -> None:
    chainrule.manual_seed(0)
    layer = chainrule.nn.Dropout(0.25)
    x = chainrule.ones(200, 200, requires_grad=True)
    y = layer(x)
    kept = y.detach().numpy() != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(y.detach().numpy()[kept], 1 / 0.75, rtol=1e-6)
    assert y.grad_fn.name() == "MulBackward0"
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy() != 0, kept)
    layer.eval()
    assert layer(x) is x
    assert chainrule.nn.functional.dropout(x, 0.0) is x
    zeroed = chainrule.nn.functional.dropout(x, 1.0)
    assert not zeroed.detach().numpy().any() and zeroed.grad_fn.name() == "MulBackward0"
    channels = chainrule.nn.Dropout2d(0.5)(chainrule.ones(4, 8, 3, 3)).numpy()
    per_channel = channels.reshape(4, 8, -1)
    assert np.all((per_channel == 0).all(-1) | (per_channel == 2).all(-1))
    with pytest.raises(ValueError, match="dropout probability has to be between 0 and 1, but got"):
        chainrule.nn.Dropout(1.5)
    t = chainrule.ones(10)
    assert chainrule.nn.functional.dropout(t, 0.5, inplace=True) is t


def test_embedding_matches_torch() -> None:
    for kwargs in ({}, {"padding_idx": 2}, {"max_norm": 1.0}, {"scale_grad_by_freq": True}):
        chainrule.manual_seed(0)
        ours = chainrule.nn.Embedding(6, 3, **kwargs)
        theirs = torch.nn.Embedding(6, 3, **kwargs)
        _copy_weights(ours, theirs)
        idx = np.array([[0, 2, 5], [2, 2, 1]])
        a = ours(chainrule.from_numpy(idx))
        b = theirs(torch.from_numpy(idx))
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-6)
        assert a.grad_fn.name() == b.grad_fn.name() == "EmbeddingBackward0"
        cot = _input((2, 3, 3), seed=2)
        a.backward(chainrule.from_numpy(cot.copy()))
        b.backward(torch.from_numpy(cot.copy()))
        np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(ours.weight.detach().numpy(), theirs.weight.detach().numpy(),
                                   rtol=1e-6)
        assert repr(ours) == repr(theirs)
    pre = chainrule.nn.Embedding.from_pretrained(chainrule.eye(3))
    assert not pre.weight.requires_grad
    with pytest.raises(IndexError, match="index out of range in self"):
        pre(chainrule.tensor([3]))


def test_bilinear_matches_torch() -> None:
    chainrule.manual_seed(0)
    ours = chainrule.nn.Bilinear(3, 4, 2)
    theirs = torch.nn.Bilinear(3, 4, 2)
    _copy_weights(ours, theirs)
    x1, x2 = _input((5, 3)), _input((5, 4), seed=1)
    a = ours(chainrule.from_numpy(x1.copy()), chainrule.from_numpy(x2.copy()))
    b = theirs(torch.from_numpy(x1.copy()), torch.from_numpy(x2.copy()))
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5, atol=1e-6)
    a.sum().backward()
    b.sum().backward()
    np.testing.assert_allclose(ours.weight.grad.numpy(), theirs.weight.grad.numpy(), rtol=1e-5)
    assert repr(ours) == repr(theirs)


# ----------------------------------------------------------------------------------------------
# Default initialisation: PyTorch's distributions


def _bound_ok(t, bound):
    values = t.detach().numpy()
    assert values.min() >= -bound and values.max() <= bound
    assert values.max() > 0.7 * bound and values.min() < -0.7 * bound  # it fills the range


def test_default_initialisation_distributions() -> None:
    chainrule.manual_seed(0)
    linear = chainrule.nn.Linear(400, 300)
    _bound_ok(linear.weight, 1 / np.sqrt(400))
    _bound_ok(linear.bias, 1 / np.sqrt(400))
    conv = chainrule.nn.Conv2d(8, 64, 3)
    _bound_ok(conv.weight, 1 / np.sqrt(8 * 9))
    _bound_ok(conv.bias, 1 / np.sqrt(8 * 9))
    convt = chainrule.nn.ConvTranspose2d(8, 64, 3)
    _bound_ok(convt.weight, 1 / np.sqrt(64 * 9))
    rnn = chainrule.nn.LSTM(10, 50)
    for p in rnn.parameters():
        _bound_ok(p, 1 / np.sqrt(50))
    emb = chainrule.nn.Embedding(1000, 50, padding_idx=3).weight.detach().numpy()
    assert abs(emb.std() - 1) < 0.02 and not emb[3].any()
    bn = chainrule.nn.BatchNorm1d(4)
    assert bn.weight.tolist() == [1.0] * 4 and bn.bias.tolist() == [0.0] * 4
    assert chainrule.nn.PReLU().weight.tolist() == [0.25]
    bil = chainrule.nn.Bilinear(20, 30, 40)
    _bound_ok(bil.weight, 1 / np.sqrt(20))
    chainrule.manual_seed(0)
    again = chainrule.nn.Linear(400, 300)
    # The same seed gives the same weights; the next module gets different ones.
    np.testing.assert_array_equal(again.weight.detach().numpy(), linear.weight.detach().numpy())
    assert not np.array_equal(chainrule.nn.Linear(400, 300).weight.detach().numpy(),
                              linear.weight.detach().numpy())


def test_module_reprs_match_torch() -> None:
    builds = [
        lambda lib: lib.nn.Conv2d(3, 16, (3, 5), stride=2, padding=1, dilation=2, bias=False,
                                  padding_mode="reflect"),
        lambda lib: lib.nn.ConvTranspose2d(3, 4, 3, stride=2, output_padding=1),
        lambda lib: lib.nn.MaxPool2d(3, 1, 1, ceil_mode=True),
        lambda lib: lib.nn.AvgPool2d(3, 2, 1, count_include_pad=False, divisor_override=2),
        lambda lib: lib.nn.AvgPool1d(3),
        lambda lib: lib.nn.BatchNorm2d(3, affine=False, track_running_stats=False,
                                       momentum=None),
        lambda lib: lib.nn.LayerNorm((2, 3), elementwise_affine=False, bias=False),
        lambda lib: lib.nn.GroupNorm(2, 4, affine=False),
        lambda lib: lib.nn.Dropout(0.2, inplace=True),
        lambda lib: lib.nn.Embedding(10, 3, padding_idx=0, max_norm=1.0,
                                     scale_grad_by_freq=True),
        lambda lib: lib.nn.LSTM(3, 4, 2, batch_first=True, bidirectional=True, dropout=0.1),
        lambda lib: lib.nn.GRU(3, 4, bias=False),
        lambda lib: lib.nn.RNN(3, 4, nonlinearity="relu"),
        lambda lib: lib.nn.LSTMCell(3, 4),
        lambda lib: lib.nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
        lambda lib: lib.nn.ReLU(inplace=True),
        lambda lib: lib.nn.LeakyReLU(0.2, True),
        lambda lib: lib.nn.Softplus(2, 10),
        lambda lib: lib.nn.Softmax(),
        lambda lib: lib.nn.CrossEntropyLoss(label_smoothing=0.1),
        lambda lib: lib.nn.ConstantPad1d((1, 2), 0.5),
        lambda lib: lib.nn.InstanceNorm1d(3, affine=True),
        lambda lib: lib.nn.AlphaDropout(),
        lambda lib: lib.nn.CosineSimilarity(),
    ]
    for build in builds:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert repr(build(chainrule)) == repr(build(torch))


# ----------------------------------------------------------------------------------------------
# Errors: PyTorch's exception types and messages


def _error(fn, lib):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            fn(lib)
        except Exception as e:  # noqa: BLE001 - comparing what each library raises
            return type(e).__name__, normalise_output(str(e)).split("\n")[0]
    return None


ERRORS = {
    "conv_dtype": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 3, 3).double(),
                                                       lib.ones(1, 1, 2, 2)),
    "conv_bias_dtype": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 3, 3),
                                                            lib.ones(1, 1, 2, 2),
                                                            lib.ones(1).double()),
    "conv_dims": lambda lib: lib.nn.functional.conv2d(lib.ones(3, 3), lib.ones(1, 1, 2, 2)),
    "conv_channels": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 2, 3, 3),
                                                          lib.ones(4, 3, 2, 2)),
    "conv_kernel_too_big": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 2, 2),
                                                                lib.ones(1, 1, 3, 3)),
    "conv_groups": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 3, 4, 4),
                                                        lib.ones(4, 3, 2, 2), groups=2),
    "conv_stride": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 4, 4),
                                                        lib.ones(1, 1, 2, 2), stride=0),
    "conv_padding": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 4, 4),
                                                         lib.ones(1, 1, 2, 2), padding=-1),
    "conv_same_strided": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 4, 4),
                                                              lib.ones(1, 1, 2, 2), stride=2,
                                                              padding="same"),
    "conv_bias_shape": lambda lib: lib.nn.functional.conv2d(lib.ones(1, 1, 4, 4),
                                                            lib.ones(2, 1, 2, 2), lib.ones(3)),
    "conv1d_dims": lambda lib: lib.nn.functional.conv1d(lib.ones(2, 3, 8), lib.ones(4, 3, 3, 3)),
    "max_pool_padding": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 1, 4, 4), 3,
                                                                 padding=2),
    "max_pool_dims": lambda lib: lib.nn.functional.max_pool2d(lib.ones(4, 4), 2),
    "max_pool_output": lambda lib: lib.nn.functional.max_pool2d(lib.ones(1, 3, 4, 4), 5),
    "avg_pool_output": lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 3, 4, 4), 5),
    "avg_pool_padding": lambda lib: lib.nn.functional.avg_pool2d(lib.ones(1, 3, 4, 4), 3,
                                                                 padding=2),
    "batch_norm_one_value": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(1, 3), lib.zeros(3), lib.ones(3), training=True),
    "batch_norm_size": lambda lib: lib.nn.functional.batch_norm(
        lib.ones(2, 3), lib.zeros(4), lib.ones(4), training=True),
    "batch_norm_module_dims": lambda lib: lib.nn.BatchNorm2d(3)(lib.ones(2, 3)),
    "layer_norm_shape": lambda lib: lib.nn.functional.layer_norm(lib.ones(2, 3), (4,)),
    "group_norm_groups": lambda lib: lib.nn.functional.group_norm(lib.ones(2, 3, 4), 2),
    "embedding_index": lambda lib: lib.nn.functional.embedding(lib.tensor([5]), lib.ones(3, 2)),
    "embedding_dtype": lambda lib: lib.nn.functional.embedding(lib.tensor([1.0]),
                                                               lib.ones(3, 2)),
    "linear_shapes": lambda lib: lib.nn.functional.linear(lib.ones(2, 3), lib.ones(4, 5)),
    "pad_odd": lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 2, 3)),
    "pad_reflect_size": lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (3, 1),
                                                          mode="reflect"),
    "pad_mode": lambda lib: lib.nn.functional.pad(lib.ones(1, 2, 3), (1, 1), mode="foo"),
    "glu_odd": lambda lib: lib.nn.functional.glu(lib.ones(3, 3), 1),
    "rnn_input_size": lambda lib: lib.nn.RNN(3, 4)(lib.ones(5, 2, 2)),
    "rnn_hidden_size": lambda lib: lib.nn.GRU(3, 4)(lib.ones(5, 2, 3), lib.zeros(1, 3, 4)),
    "rnn_dtype": lambda lib: lib.nn.LSTM(3, 4)(lib.ones(5, 2, 3).double()),
    "conv_module_groups": lambda lib: lib.nn.Conv2d(3, 4, 2, groups=2),
    "unflatten_size": lambda lib: lib.nn.Unflatten(1, (2, 4))(lib.ones(2, 6)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name: str) -> None:
    ours = _error(ERRORS[name], chainrule)
    theirs = _error(ERRORS[name], torch)
    assert theirs is not None
    assert ours == theirs
