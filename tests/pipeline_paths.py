"""Shared helpers of the tests of the step pipeline's two ways through a backend: the fused
``step_and_maybe_reset`` (one call of the ``_step_reset_arrays`` hook) and the same sequence
taken call by call (``step``, ``step_mdp``, then ``reset`` of the ended rows with ``"_reset"``).
Both must give the same data, bit for bit.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> assert_same_td(TensorDict({"a": torch.zeros(2)}, [2]), TensorDict({"a": torch.zeros(2)}, [2]))
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

import torch


def fused_loop(env, actions: torch.Tensor, hidden: torch.Tensor | None = None) -> list:
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


def split_loop(env, actions: torch.Tensor, hidden: torch.Tensor | None = None) -> list:
    """The same as :func:`fused_loop`, call by call: ``step``, ``step_mdp``, then ``reset``
    with ``"_reset"`` set to the done flags when an episode ended."""
    td = env.reset()
    if hidden is not None:
        td.set("hidden", hidden)
    out = []
    for action in actions:
        td.set("action", action)
        data = env.step(td)
        td = env.step_mdp(data)
        done = td["done"]
        if done.any():
            td.set("_reset", done.clone())
            env.reset(td)  # in place
        out.append((data.clone(), td.clone()))
    return out


def assert_same_td(td, ref) -> None:
    """Equal keys and values (NaN placeholders of ``auto_reset`` equal too), bit for bit."""
    assert set(td.keys(True, True)) == set(ref.keys(True, True))
    for key in ref.keys(True, True):
        torch.testing.assert_close(td[key], ref[key], rtol=0, atol=0, equal_nan=True)


def assert_paths_agree(make: Callable, actions: torch.Tensor, hidden=None) -> int:
    """Build two envs with ``make()``, run :func:`fused_loop` on one and :func:`split_loop`
    on the other, assert the same data step by step; return how many episodes ended."""
    fused, split = make(), make()
    try:
        got, want = fused_loop(fused, actions, hidden), split_loop(split, actions, hidden)
        ended = 0
        for (data, nxt), (data_ref, nxt_ref) in zip(got, want, strict=True):
            assert_same_td(data, data_ref)
            assert_same_td(nxt, nxt_ref)
            assert not nxt["done"].any()  # the next input starts the new episodes
            ended += int(data["next", "done"].sum())
        return ended
    finally:
        fused.close(), split.close()


def scripted_policy(actions: Iterable[torch.Tensor]) -> Callable:
    """A rollout policy that sets the next of ``actions`` at each step."""
    it = iter(actions)
    return lambda td: td.set("action", next(it))
