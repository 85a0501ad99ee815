"""``check_env_specs``: roll an env out and check its data against its specs.

Example:
    >>> import hub
    >>> check_env_specs(hub.make_env("hub:Pendulum"))
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDictBase

from hub.envs.base import EnvBase
from hub.envs.checks import dynamic_match, expected_shape
from hub.envs.describe import describe
from hub.errors import SpecMismatchError
from hub.specs import TensorSpec

__all__ = ["check_env_specs"]


def check_env_specs(
    env: EnvBase,
    *,
    return_contiguous: bool = True,
    check_dtype: bool = True,
    seed: int | None = None,
    n_steps: int = 3,
) -> None:
    """Roll the env out for a few steps and check that its data matches its specs.

    Every entry of the rollout must be declared by a spec (and every spec must appear in the
    rollout), with the spec's shape (batch dims first; ``-1`` dims may vary) and dtype, and its
    values inside the spec. Raises :class:`hub.errors.SpecMismatchError` naming the first entry
    that does not match. ``ParallelEnv`` builds its buffers from the specs, so an env must pass
    this before it is run in worker processes.

    Example:
        >>> import hub
        >>> check_env_specs(hub.make_env("hub:Counting", num_envs=2))
    """
    if seed is not None:
        env.set_seed(seed)
    del return_contiguous  # each step is checked on its own, so varying shapes are fine
    steps: list[TensorDictBase] = []
    env.rollout(
        n_steps,
        break_when_any_done=False,
        return_contiguous=False,
        callback=lambda _env, td: steps.append(td),
    )
    fake = env.fake_tensordict()
    want = set(fake.keys(include_nested=True, leaves_only=True))
    specs = _all_specs(env)
    for t, data in enumerate(steps):
        got = set(data.keys(include_nested=True, leaves_only=True))
        where = f"check_env_specs, step {t}"
        missing = want - got
        if missing:
            key = sorted(missing, key=str)[0]
            raise SpecMismatchError(
                key,
                specs.get(key, "an entry declared by the specs"),
                "no such entry in the rollout",
                where=where,
            )
        extra = got - want
        if extra:
            key = sorted(extra, key=str)[0]
            raise SpecMismatchError(
                key,
                "no entry (none of the specs declares it: declare it in a spec or drop it)",
                describe(data.get(key)),
                where=where,
            )
        for key in want:
            spec = specs.get(key)
            value = data.get(key)
            if spec is None or not isinstance(value, torch.Tensor):
                continue
            if check_dtype and value.dtype != spec.dtype:
                raise SpecMismatchError(key, spec, describe(value), where=where)
            if not dynamic_match(value.shape, expected_shape(spec, env.batch_size)):
                raise SpecMismatchError(key, spec, describe(value), where=where)
            if -1 not in spec.shape and not spec.is_in(value):
                raise SpecMismatchError(key, spec, describe(value) + " (out of range)", where=where)


def _all_specs(env: EnvBase) -> dict[Any, TensorSpec]:
    specs: dict[Any, TensorSpec] = {}
    out = env.output_spec
    inp = env.input_spec
    for group, prefix in (
        (inp["full_state_spec"], ()),
        (inp["full_action_spec"], ()),
        (out["full_observation_spec"], ()),
        (out["full_done_spec"], ()),
        (out["full_observation_spec"], ("next",)),
        (out["full_reward_spec"], ("next",)),
        (out["full_done_spec"], ("next",)),
    ):
        for key in group.keys(include_nested=True, leaves_only=True):
            tkey = (key,) if isinstance(key, str) else tuple(key)
            full = prefix + tkey
            specs[full[0] if len(full) == 1 else full] = group[key]
    return specs
