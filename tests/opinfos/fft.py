"""torch.fft: values, first- and second-order gradients against PyTorch, for real and complex
inputs (complex ones made from real pairs with view_as_complex, complex results returned as real
pairs with view_as_real, as tests/opinfos/complex.py does). Errors, dtypes and a wide sweep of
``n``/``s``/``dim``/``norm``: tests/test_fft.py.
"""

from __future__ import annotations

from . import OpInfo


def _uniform(rng, shapes, dtype):
    """Finite inputs: where a non-finite value meets the butterflies, which outputs become NaN
    and which +-inf depends on the FFT algorithm (PyTorch's MKL, chainrule's pocketfft), so the
    special-values sweep (which skips entries with chosen inputs) does not compare them;
    tests/test_fft.py checks that the same outputs are non-finite and the others equal."""
    return [rng.uniform(-2.0, 2.0, s).astype(dtype) for s in shapes]

VECTOR = [((5,),), ((3, 4),)]
MATRIX = [((3, 4),), ((2, 3, 4),)]
PAIRS = [((5, 2),), ((3, 4, 2),)]
MATRIX_PAIRS = [((3, 4, 2),), ((2, 3, 4, 2),)]


def _real(lib, out):
    """A real tensor of ``out`` (complex results as their real pairs)."""
    return lib.view_as_real(out.resolve_conj()) if out.dtype.is_complex else out


def _real_input(name: str, shapes=VECTOR, **kw) -> OpInfo:
    args = {k: v for k, v in kw.items() if k not in ("label",)}
    label = kw.get("label", "")
    return OpInfo(f"fft.{name}{label}",
                  lambda lib, x, f=name, a=args: _real(lib, getattr(lib.fft, f)(x, **a)), shapes,
                  make_inputs=_uniform)


def _complex_input(name: str, shapes=PAIRS, **kw) -> OpInfo:
    args = {k: v for k, v in kw.items() if k not in ("label",)}
    label = kw.get("label", "")
    return OpInfo(
        f"fft.{name}_complex{label}",
        lambda lib, x, f=name, a=args: _real(lib, getattr(lib.fft, f)(lib.view_as_complex(x),
                                                                       **a)),
        shapes, make_inputs=_uniform)


OPS = [
    _real_input("fft"),
    _real_input("fft", n=7, label="_n_padded"),
    _real_input("fft", n=3, label="_n_cut"),
    _real_input("fft", dim=0, norm="ortho", label="_dim0_ortho"),
    _real_input("ifft"),
    _real_input("ifft", norm="forward", label="_norm_forward"),
    _real_input("rfft"),
    _real_input("rfft", n=8, norm="ortho", label="_n_ortho"),
    _real_input("irfft"),
    _real_input("irfft", n=5, label="_n_odd"),
    _real_input("hfft"),
    _real_input("ihfft"),
    _real_input("ihfft", n=6, norm="forward", label="_n_forward"),
    _complex_input("fft"),
    _complex_input("fft", n=4, norm="ortho", label="_n_ortho"),
    _complex_input("ifft"),
    _complex_input("irfft"),
    _complex_input("irfft", n=9, norm="forward", label="_n_forward"),
    _complex_input("irfft", n=3, label="_n_cut"),
    _complex_input("hfft"),
    _complex_input("hfft", n=7, norm="ortho", label="_n_ortho"),
    _real_input("fft2", MATRIX),
    _real_input("ifft2", MATRIX, s=(4, 3), label="_s"),
    _real_input("fftn", MATRIX),
    _real_input("ifftn", MATRIX, dim=(0,), norm="ortho", label="_dim_ortho"),
    _real_input("rfft2", MATRIX),
    _real_input("rfftn", MATRIX, s=(2, 6), label="_s"),
    _real_input("irfft2", MATRIX),
    _real_input("irfftn", MATRIX, s=(4, 5), label="_s"),
    _real_input("hfft2", MATRIX),
    _real_input("hfftn", MATRIX, norm="forward", label="_norm_forward"),
    _real_input("ihfft2", MATRIX),
    _real_input("ihfftn", MATRIX, s=(3, 5), norm="ortho", label="_s_ortho"),
    _complex_input("fft2", MATRIX_PAIRS),
    _complex_input("ifftn", MATRIX_PAIRS, s=(2, 5), label="_s"),
    _complex_input("irfft2", MATRIX_PAIRS),
    _complex_input("irfftn", MATRIX_PAIRS, s=(3, 6), dim=(0, -1), label="_s_dim"),
    _complex_input("hfft2", MATRIX_PAIRS, norm="ortho", label="_ortho"),
    _complex_input("hfftn", MATRIX_PAIRS, s=(4, 3), label="_s"),
    _real_input("fftshift", MATRIX),
    _real_input("ifftshift", MATRIX, dim=-1, label="_dim"),
    OpInfo("fft.fftfreq", lambda lib: lib.fft.fftfreq(7, 0.25), [()], grad=False),
    OpInfo("fft.rfftfreq", lambda lib: lib.fft.rfftfreq(8, dtype=lib.float64), [()],
           grad=False),
]
for _info in OPS:  # (no half-precision sweep: PyTorch's CPU FFTs refuse float16 and bfloat16)
    _info.extra["complex"] = True
