"""Generator states are PyTorch's bytes, and seeds are PyTorch's 64-bit values.

``torch.get_rng_state()`` is PyTorch's 5056-byte ``CPUGeneratorImplState`` (seed, mt19937
position and words, the cached normal samples). chainrule returned its own JSON text (7462
bytes), so a state saved under PyTorch (a training checkpoint) could not restore here and a
state compared or printed differently. ``initial_seed()`` after ``manual_seed(-1)`` is
``2**64 - 1`` in PyTorch (chainrule kept -1); out-of-range and non-int seeds raise PyTorch's
errors.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import chainrule

SETUPS = {
    "fresh seed": lambda lib: lib.manual_seed(5),
    "three uniforms": lambda lib: (lib.manual_seed(5), lib.rand(3)),
    "cached double normal": lambda lib: (lib.manual_seed(5), lib.randn(3)),
    "words used up": lambda lib: (lib.manual_seed(1), lib.rand(624)),
    "one word left": lambda lib: (lib.manual_seed(1), lib.rand(623)),
    "regenerated": lambda lib: (lib.manual_seed(1), lib.rand(625)),
    "64-bit seed": lambda lib: (lib.manual_seed(2**40 + 7), lib.randn(1)),
    "negative seed": lambda lib: (lib.manual_seed(-3), lib.randn(40, dtype=lib.float64)),
}


@pytest.mark.parametrize("setup", list(SETUPS))
def test_state_bytes_and_cross_restore(setup):
    SETUPS[setup](torch)
    SETUPS[setup](chainrule)
    theirs, ours = torch.get_rng_state(), chainrule.get_rng_state()
    assert ours.dtype == chainrule.uint8 and tuple(ours.shape) == (5056,)
    np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    assert chainrule.initial_seed() == torch.initial_seed()
    # PyTorch's state restores here (and this library's there): the same next draws
    torch.manual_seed(77)
    chainrule.manual_seed(78)
    chainrule.set_rng_state(chainrule.tensor(theirs.numpy()))
    torch.set_rng_state(torch.tensor(ours.numpy()))
    ours_next = chainrule.randn(5, dtype=chainrule.float64).numpy()
    np.testing.assert_array_equal(ours_next, torch.randn(5, dtype=torch.float64).numpy())
    assert chainrule.initial_seed() == torch.initial_seed()


def test_generator_objects():
    g, h = torch.Generator(), chainrule.Generator()
    np.testing.assert_array_equal(h.get_state().numpy(), g.get_state().numpy())
    g.manual_seed(11)
    h.manual_seed(11)
    torch.rand(2, generator=g)
    chainrule.rand(2, generator=h)
    state = h.get_state()
    np.testing.assert_array_equal(state.numpy(), g.get_state().numpy())
    first = chainrule.rand(4, generator=h).numpy()
    h.set_state(state)
    np.testing.assert_array_equal(chainrule.rand(4, generator=h).numpy(), first)


def _left_zero(lib):
    state = lib.get_rng_state()
    state[8:12] = 0  # (the mt19937 "left" counter: 0 is invalid)
    return state


BAD_STATES = {
    "a list": lambda lib: [1, 2],
    "a float tensor": lambda lib: lib.zeros(5056),
    "wrong size": lambda lib: lib.zeros(10, dtype=lib.uint8),
    "legacy size": lambda lib: lib.zeros(5048, dtype=lib.uint8),
    "invalid counter": _left_zero,
}


@pytest.mark.parametrize("bad", list(BAD_STATES))
def test_bad_state_raises_and_changes_nothing(bad):
    outcomes = []
    for lib in (torch, chainrule):
        lib.manual_seed(3)
        lib.rand(5)
        with pytest.raises(Exception) as info:
            lib.set_rng_state(BAD_STATES[bad](lib))
        after = lib.rand(3).numpy()
        outcomes.append((type(info.value), str(info.value), after, lib.initial_seed()))
    (kind, message, draws, seed), (our_kind, our_message, our_draws, our_seed) = outcomes
    assert (our_kind, our_message, our_seed) == (kind, message, seed)
    np.testing.assert_array_equal(our_draws, draws)


SEEDS = [-1, -(2**63), 2**64 - 1, 0, 2**64, -(2**63) - 1, 1.5, "3", True, np.int64(4)]


@pytest.mark.parametrize("seed", SEEDS, ids=repr)
@pytest.mark.parametrize("where", ["torch.manual_seed", "Generator.manual_seed"])
def test_seed_values_and_errors(where, seed):
    outcomes = []
    for lib in (torch, chainrule):
        lib.manual_seed(9)
        try:
            if where == "torch.manual_seed":
                generator = lib.manual_seed(seed)
            else:
                generator = lib.Generator().manual_seed(seed)
            outcomes.append((generator.initial_seed(), generator.get_state().numpy()[:16].tolist()))
        except Exception as error:  # (compared below: the same type and message)
            outcomes.append((type(error).__name__, str(error), lib.initial_seed()))
    assert outcomes[1] == outcomes[0]
