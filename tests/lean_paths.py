"""Shared helpers of the tests of the plugins' lean step paths (a ``step_and_maybe_reset`` that
skips ``step``'s generic dispatch): run a plugin's env and the same env held on the generic
path over the same actions, and compare what they give, step by step.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> assert_same_td(TensorDict({"a": torch.zeros(2)}, [2]), TensorDict({"a": torch.zeros(2)}, [2]))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch


def count_calls(env, method: str) -> list[int]:
    """Count the calls of ``env.<method>`` (``[count]``, updated in place), wrapped on the
    instance: the class's methods, which the env checks to choose its path, stay."""
    calls = [0]
    original = getattr(env, method)

    def counted(*args, **kwargs):
        calls[0] += 1
        return original(*args, **kwargs)

    setattr(env, method, counted)
    return calls


def step_loop(env, actions: torch.Tensor, hidden: torch.Tensor | None = None) -> list:
    """``(data, next_input)`` clones of ``step_and_maybe_reset`` over ``actions``, from a reset
    holding ``hidden`` if given (a policy's entry, which the steps carry over)."""
    td = env.reset()
    if hidden is not None:
        td.set("hidden", hidden)
    out = []
    for action in actions:
        td.set("action", action)
        data, td = env.step_and_maybe_reset(td)
        out.append((data.clone(), td.clone()))
    return out


def assert_same_td(td, ref) -> None:
    """Equal keys and values (NaN placeholders of ``auto_reset`` equal too), bit for bit."""
    assert set(td.keys(True, True)) == set(ref.keys(True, True))
    for key in ref.keys(True, True):
        torch.testing.assert_close(td[key], ref[key], rtol=0, atol=0, equal_nan=True)


def scripted_policy(actions: Iterable[torch.Tensor]) -> Callable:
    """A rollout policy that sets the next of ``actions`` at each step."""
    it = iter(actions)
    return lambda td: td.set("action", next(it))
