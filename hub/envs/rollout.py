"""``rollout``: run an env for a number of steps and stack the results along a "time" dim.

Example:
    >>> import hub
    >>> env = hub.make_env("hub:Counting", num_envs=3, max_steps=4)
    >>> data = env.rollout(6, break_when_any_done=False)
    >>> data.batch_size
    torch.Size([3, 6])
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import torch
from tensordict import LazyStackedTensorDict, TensorDict, TensorDictBase

from hub.envs._fast_td import fast_get
from hub.envs.base import any_true
from hub.envs.rollout_actions import block_random_policy
from hub.envs.stacking import stack_like
from hub.errors import HubError

if TYPE_CHECKING:
    from hub.envs.base import EnvBase

__all__ = ["run_rollout"]


def _stack_steps(
    steps: list[TensorDictBase], dim: int, out: TensorDictBase | None = None
) -> TensorDictBase:
    """Stack the steps along ``dim`` (into ``out`` if given): leaf by leaf when they share one
    structure of tensors (several times faster than ``torch.stack`` on tensordicts), else with
    ``torch.stack``."""
    if all(type(step) is TensorDict for step in steps):
        try:
            return stack_like(steps, dim=dim, out=out)
        except (KeyError, RuntimeError, TypeError):
            pass  # differing keys or shapes: torch.stack gives the informative error
    if out is None:
        return torch.stack(steps, dim)
    return torch.stack(steps, dim, out=out)


def _unalias(tensordict: TensorDictBase, out: TensorDictBase) -> None:
    """Copy, in place, the entries of ``tensordict`` that live in ``out``'s memory.

    The natural way to go on from a rollout is ``td = env.step_mdp(data[..., -1])`` and then
    ``rollout(..., tensordict=td, out=data)``: ``td`` then views the last slot of ``data``, which
    the new rollout overwrites while its first step may still need those values.
    """
    storages = {
        leaf.untyped_storage().data_ptr()
        for leaf in out.values(include_nested=True, leaves_only=True)
        if isinstance(leaf, torch.Tensor)
    }
    for key, leaf in tensordict.items(include_nested=True, leaves_only=True):
        if isinstance(leaf, torch.Tensor) and leaf.untyped_storage().data_ptr() in storages:
            tensordict.set(key, leaf.clone())


def _output_slots(out: TensorDictBase, dim: int, steps: int) -> TensorDictBase:
    """The part of a rollout's ``out=`` tensordict that ``steps`` steps fill: all of it, or
    (when the rollout stopped early) a view of its first ``steps`` time slots."""
    if out.batch_dims != dim + 1 or out.batch_size[dim] < steps:
        raise ValueError(
            f"out= has batch size {list(out.batch_size)}; a rollout of this env needs the "
            f"env's batch size followed by a time dim of at least {steps} steps (pass the "
            "output of an earlier rollout with the same max_steps)."
        )
    if out.batch_size[dim] == steps:
        return out
    return out[(slice(None),) * dim + (slice(0, steps),)]


def _any_done(env: EnvBase, td: TensorDictBase) -> bool:
    for key in env._done_flag_keys:
        done = fast_get(td, key)
        if done is not None and any_true(done):
            return True
    return False


def _root_done(env: EnvBase, td: TensorDictBase) -> torch.Tensor:
    done = td.get(env._done_flag_keys[0])
    if done.ndim > td.batch_dims:
        done = done.reshape(td.batch_size + (-1,)).any(-1)
    return done


@contextmanager
def _gc_paused() -> Iterator[None]:
    """Pause the garbage collector: a rollout keeps every step alive until it stacks them, and
    the collector's full passes over those thousands of young objects would otherwise cost more
    than the steps themselves. The rollout frees the steps before it restores the collector:
    the allocations counted meanwhile would otherwise start a collection over all of them at
    once (measured: 7% of a dm_control rollout)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def run_rollout(
    env: EnvBase,
    max_steps: int,
    *,
    policy: Callable[[TensorDictBase], TensorDictBase] | None,
    callback: Callable[[EnvBase, TensorDictBase], Any] | None,
    auto_reset: bool,
    break_when_any_done: bool,
    break_when_all_done: bool,
    return_contiguous: bool,
    tensordict: TensorDictBase | None,
    out: TensorDictBase | None = None,
) -> TensorDictBase:
    """The body of :meth:`hub.EnvBase.rollout` (see there for the arguments); the loop runs with
    the garbage collector paused (see :func:`_gc_paused`)."""
    if max_steps < 1:
        raise ValueError(f"max_steps must be at least 1, got {max_steps}.")
    if break_when_any_done and break_when_all_done:
        raise ValueError("break_when_any_done and break_when_all_done cannot both be True.")
    if out is not None and not return_contiguous:
        raise ValueError("out= needs return_contiguous=True (a lazy stack keeps the steps).")
    with _gc_paused():
        if auto_reset:
            td = env.reset(tensordict)
        elif tensordict is None:
            raise HubError("rollout(auto_reset=False) needs the first input: pass tensordict=...")
        else:
            td = tensordict
        if out is not None:
            _unalias(td, out)
        env._keys()
        random_policy = block_random_policy(env, td, max_steps) if policy is None else None
        if policy is None:
            policy = random_policy or env.rand_action
        steps: list[TensorDictBase] = []
        for i in range(max_steps):
            result = policy(td)
            if result is not None:
                td = result
            if break_when_all_done and steps:
                done = _root_done(env, td)
                if bool(done.any()):
                    td.set("_step", ~done)
            td = env.step(td)
            if break_when_all_done and td.get("_step", None) is not None:
                td = td.exclude("_step")
            steps.append(td)
            if callback is not None:
                callback(env, td)
            if i == max_steps - 1:
                break
            next_td = env.step_mdp(td)
            if break_when_any_done:
                if _any_done(env, next_td):
                    break
            elif break_when_all_done:
                if bool(_root_done(env, next_td).all()):
                    break
            else:
                env._reset_finished(next_td)
            td = next_td
        if random_policy is not None:
            random_policy.finish()
        dim = td.batch_dims
        if return_contiguous:
            slots = None if out is None else _output_slots(out, dim, len(steps))
            data = _stack_steps(steps, dim, slots)
            steps.clear()  # freed before the collector is back on (see _gc_paused)
        else:
            data = LazyStackedTensorDict.lazy_stack(steps, dim)
    try:
        data.refine_names(*([None] * dim), "time")
    except Exception:  # noqa: BLE001 - names are a convenience; lazy stacks may refuse them
        pass
    return data
