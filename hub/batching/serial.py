"""``SerialEnv``: several envs stepped one after the other in this process, as one batched env.

Example:
    >>> import hub
    >>> from hub.envs.builtin import CountingEnv
    >>> env = hub.SerialEnv(3, CountingEnv, {"max_steps": 4})
    >>> env.batch_size
    torch.Size([3])
    >>> env.rollout(2)["next", "observation"].squeeze(-1).tolist()
    [[1, 2], [1, 2], [1, 2]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tensordict import TensorDictBase

from hub.batching.batched import BatchedEnvBase, EnvFactory
from hub.envs.base import EnvBase
from hub.envs.stacking import split_inputs, stack_like

__all__ = ["SerialEnv"]


class SerialEnv(BatchedEnvBase):
    """Run ``num_workers`` envs in this process as one env of batch size ``[num_workers]``.

    Args:
        num_workers: the number of sub-envs.
        create_env_fn: a callable that builds one env (or one callable per worker).
        create_env_kwargs: keyword arguments for ``create_env_fn`` (one dict for all, or one per
            worker).
        device: where the batched data lives (default: the sub-envs' device).
        checks: check actions and outputs against the specs (see :class:`hub.EnvBase`).

    The sub-envs are in ``env.envs``; partial steps and resets reach only the sub-envs that
    need them.
    """

    def __init__(
        self,
        num_workers: int,
        create_env_fn: EnvFactory | Sequence[EnvFactory],
        create_env_kwargs: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        **kwargs: Any,
    ) -> None:
        self._envs: list[EnvBase] = []
        super().__init__(num_workers, create_env_fn, create_env_kwargs, **kwargs)

    def _meta_env(self) -> EnvBase:
        self._envs = [fn(**kw) for fn, kw in zip(self._factories, self._factory_kwargs)]
        return self._envs[0]

    def _worker_specs(self) -> list[EnvBase]:
        return self._envs

    @property
    def envs(self) -> list[EnvBase]:
        """The sub-envs, in worker order."""
        return list(self._envs)

    def __getitem__(self, index: int) -> EnvBase:
        return self._envs[index]

    def __len__(self) -> int:
        return self.num_workers

    def _input_keys(self) -> list[Any]:
        keys = getattr(self, "_cached_input_keys", None)
        if keys is None or not self._keys_ready:
            self._keys()
            keys = self._cached_input_keys = list(self._action_keys) + list(self._state_keys)
        return keys

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        need = self._reset_workers(tensordict)
        if need is None:
            outs = [env.reset(**kwargs) for env in self._envs]
            return self._output_device(stack_like(outs))
        rows = tensordict.unbind(0)
        outs: list[TensorDictBase | None] = []
        for env, row, flag in zip(self._envs, rows, need):
            outs.append(env.reset(row, **kwargs) if flag else None)
        return self._output_device(stack_like(outs, fallback=tensordict))

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        active = self._step_workers(tensordict)
        if active is not None and not any(active):
            # nothing to step: EnvBase masks this output with the previous values
            return self._zero_step_output()
        inputs = split_inputs(tensordict, self._input_keys(), self._sub_batch)
        outs: list[TensorDictBase | None] = []
        for i, env in enumerate(self._envs):
            if active is not None and not active[i]:
                outs.append(None)
                continue
            outs.append(env.step(inputs[i]).get("next"))
        return self._output_device(stack_like(outs))

    def _seed_workers(self, seed: int | None, static_seed: bool) -> int | None:
        for env in self._envs:
            seed = env.set_seed(seed, static_seed=static_seed)
        return seed

    def get_attr(self, name: str) -> list[Any]:
        return [getattr(env, name) for env in self._envs]

    def set_attr(self, name: str, values: Any) -> None:
        for env, value in zip(self._envs, self._per_worker(values)):
            setattr(env, name, value)

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        return [getattr(env, name)(*args, **kwargs) for env in self._envs]

    def _close(self) -> None:
        for env in self._envs:
            env.close()
