"""``SerialEnv``: several envs stepped one after the other in this process, as one batched env.

Batch first: a step reads each action column once, steps every sub-env through its
array-level hook (no tensordict per sub-env), and joins their outputs into one array per key
(:class:`hub.batching.gather.Gather`); in ``step_and_maybe_reset`` and ``rollout`` a sub-env
whose episode ended is reset in the same loop. The actions are checked once for the whole batch
(hub's step pipeline), and sub-env ``i`` of a ``SerialEnv`` seeded with ``s`` is seeded with
``s + i``. Where the sub-envs' class steps a whole group in one function (the optional
``_group_stepper`` hook; the gym plugin's single envs), a step of every sub-env is one call of
it, with the same data.

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

from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from hub.batching.batched import BatchedEnvBase, EnvFactory, check_sub_env
from hub.batching.deadline import call_within
from hub.batching.gather import Gather
from hub.envs.base import EnvBase
from hub.errors import ClosedEnvError, HubError, WorkerTimeoutError

__all__ = ["SerialEnv"]

T = TypeVar("T")


class SerialEnv(BatchedEnvBase):
    """Run ``num_envs`` envs in this process as one env of batch size ``[num_envs]``.

    Args:
        num_envs: the number of sub-envs (TorchRL calls it ``num_workers``).
        create_env_fn: a callable that builds one hub env (or one callable per sub-env).
        create_env_kwargs: keyword arguments for ``create_env_fn`` (one dict for all, or one per
            sub-env).
        device: where the batched data lives (default: the sub-envs' device).
        checks: check actions and outputs against the specs (see :class:`hub.EnvBase`).
        timeout: seconds a ``step``, ``reset``, ``set_seed`` or ``call`` of the sub-envs may take
            before it is interrupted with :class:`hub.errors.WorkerTimeoutError` naming the
            sub-env (``None``: no limit). The call is interrupted with ``SIGALRM`` in the main
            thread: it bounds sub-envs running Python code or waiting in a system call, not
            native code that never returns to the interpreter (see
            :mod:`hub.batching.deadline`; ``ParallelEnv``'s timeout kills the worker instead).

    The sub-envs are in ``env.envs``; partial steps and resets reach only the sub-envs that
    need them. A sub-env's output of another shape than its spec, or of a dtype the spec cannot
    hold without changing it, raises :class:`hub.errors.SpecMismatchError` naming the sub-env.
    """

    def __init__(
        self,
        num_envs: int,
        create_env_fn: EnvFactory | Sequence[EnvFactory],
        create_env_kwargs: dict[str, Any] | Sequence[dict[str, Any]] | None = None,
        *,
        timeout: float | None = None,
        **kwargs: Any,
    ) -> None:
        self.timeout = timeout
        self._envs: list[EnvBase] = []
        self._current = 0  # the sub-env being called (named by a timeout)
        self._in_flight: str | None = None  # a step or reset that raised part-way
        super().__init__(num_envs, create_env_fn, create_env_kwargs, **kwargs)
        self._gather = Gather(self._gather_specs(), self.num_envs, type(self).__name__)
        # each sub-env's step-then-reset, the function called once per sub-env and step
        self._steppers = [env.array_stepper() for env in self._envs]
        # or one function for all, where the sub-envs' class has one (used without a timeout
        # only: a timeout names the sub-env that overran)
        self._group = EnvBase.group_stepper(self._envs)

    def _meta_env(self) -> EnvBase:
        envs = []
        try:
            for i, (fn, kw) in enumerate(zip(self._factories, self._factory_kwargs)):
                envs.append(check_sub_env(fn(**kw), i, fn))
        except BaseException:
            for env in envs:
                env.close()
            raise
        self._envs = envs
        return envs[0]

    def _worker_specs(self) -> list[EnvBase]:
        return self._envs

    def _gather_specs(self) -> Any:
        spec = self.full_observation_spec.clone()
        spec.unlock_()
        for name in ("full_reward_spec", "full_done_spec", "full_state_spec"):
            group = getattr(self, name)
            for key in group.keys(include_nested=True, leaves_only=True):
                if key not in spec.keys(include_nested=True, leaves_only=True):
                    spec[key] = group[key]
        return spec

    @property
    def num_workers(self) -> int:
        """The number of sub-envs (TorchRL's name for it)."""
        return self.num_envs

    @property
    def envs(self) -> list[EnvBase]:
        """The sub-envs, in order."""
        return list(self._envs)

    def __getitem__(self, index: int) -> EnvBase:
        return self._envs[index]

    def __len__(self) -> int:
        return self.num_envs

    # ---------------------------------------------------------------- bounded calls
    def _who(self) -> tuple[str, int]:
        i = self._current
        name = type(self._envs[i]).__name__ if i < len(self._envs) else "env"
        return f"sub-env {i} ({name}) of this SerialEnv", i

    def _run(self, what: str, fn: Callable[[], T]) -> T:
        """``fn()`` (a loop over the sub-envs that sets ``self._current``) within ``timeout``;
        a step or reset that fails after a sub-env was called leaves ``_in_flight`` set."""
        self._current = 0
        try:
            return call_within(self._timeout, self._who, what, fn)
        except BaseException as exc:
            cut = self._current > 0 or isinstance(exc, WorkerTimeoutError)
            if what in ("step", "reset") and (cut or not isinstance(exc, Exception)):
                self._in_flight = what
            raise

    def _refuse_after_failure(self, what: str) -> None:
        raise HubError(
            f"the last {self._in_flight} of this SerialEnv did not complete (it raised, timed "
            f"out or was interrupted after some sub-envs ran), so the sub-envs' states are not "
            f"known: call env.reset() (every sub-env) before {what}."
        )

    # ---------------------------------------------------------------- the hooks
    def _row_inputs(self, inputs: dict[Any, Any]) -> list[dict[Any, Any]]:
        """One inputs dict per sub-env: row ``i`` of each input column."""
        if len(inputs) == 1:
            ((key, column),) = inputs.items()
            return [{key: row} for row in column]
        keys = list(inputs)
        return [dict(zip(keys, row)) for row in zip(*inputs.values())]

    def _group_step(self, inputs: dict[Any, Any], active: Any, reset_ended: bool) -> Any:
        """The step of every sub-env by the group's own function (see ``_group_stepper``):
        ``(step, first)``, or ``None`` where it does not apply (no group function, a partial
        step, a timeout, which names the sub-env that overran) or declined the step."""
        if self._group is None or active is not None or self._timeout is not None:
            return None
        try:
            done = self._group(inputs, reset_ended)
        except BaseException:
            self._in_flight = "step"  # any sub-env may have stepped
            raise
        if done is None:
            return None
        out, firsts = done
        step = self._gather.batch(out, "step")
        if firsts is None or firsts.count(None) == len(firsts):
            return step, None
        return step, self._gather.rows_over(step, firsts, "reset")

    def _step_arrays(self, inputs: dict[Any, Any], rows: Any = None) -> dict[Any, Any]:
        if self._in_flight is not None:
            self._refuse_after_failure("stepping again")
        active = self._rows(rows)
        done = self._group_step(inputs, active, False)
        if done is not None:
            return done[0]
        row_inputs = self._row_inputs(inputs)
        envs = self._envs

        def run() -> list[dict[Any, Any] | None]:
            outs: list[dict[Any, Any] | None] = [None] * len(envs)
            for i, env in enumerate(envs):
                if active is None or active[i]:
                    self._current = i
                    outs[i] = env.step_arrays(row_inputs[i])
            return outs

        return self._gather.columns(self._run("step", run), "step")

    def _step_reset_arrays(
        self, inputs: dict[Any, Any], rows: Any = None
    ) -> tuple[dict[Any, Any], dict[Any, Any] | None]:
        if self._in_flight is not None:
            self._refuse_after_failure("stepping again")
        active = self._rows(rows)
        done = self._group_step(inputs, active, True)
        if done is not None:
            return done
        row_inputs = self._row_inputs(inputs)
        steppers = self._steppers

        def run() -> tuple[list[Any], list[Any]]:
            outs: list[dict[Any, Any] | None] = [None] * len(steppers)
            firsts: list[dict[Any, Any] | None] = [None] * len(steppers)
            for i, step in enumerate(steppers):
                if active is None or active[i]:
                    self._current = i
                    outs[i], firsts[i] = step(row_inputs[i], None)
            return outs, firsts

        outs, firsts = self._run("step", run)
        step = self._gather.columns(outs, "step")
        if firsts.count(None) == len(firsts):
            return step, None
        return step, self._gather.rows_over(step, firsts, "reset")

    def _reset_arrays(self, rows: Any = None, inputs: Any = None, **kwargs: Any) -> dict[Any, Any]:
        need = self._rows(rows)
        if need is not None and self._in_flight is not None:
            self._refuse_after_failure("a partial reset")
        seed = kwargs.pop("seed", None)
        envs = self._envs

        def run() -> list[dict[Any, Any] | None]:
            outs: list[dict[Any, Any] | None] = []
            for i, env in enumerate(envs):
                self._current = i
                if need is not None and not need[i]:
                    outs.append(None)
                    continue
                options = kwargs if seed is None else {**kwargs, "seed": seed + i}
                outs.append(env.reset_arrays(**options))
            return outs

        out = self._gather.columns(self._run("reset", run), "reset")
        self._in_flight = None
        return out

    # ---------------------------------------------------------------- seeds and attributes
    def _seed_envs(self, seed: int | None) -> None:
        def run() -> None:
            next_seed = seed
            for i, env in enumerate(self._envs):
                self._current = i
                next_seed = env.set_seed(next_seed)

        self._run("set_seed", run)

    def get_attr(self, name: str) -> list[Any]:
        self._refuse_closed_attr(name)
        return [getattr(env, name) for env in self._envs]

    def set_attr(self, name: str, values: Any) -> None:
        self._refuse_closed_attr(name)
        for env, value in zip(self._envs, self._per_env(values)):
            setattr(env, name, value)

    def call(self, name: str, *args: Any, **kwargs: Any) -> list[Any]:
        self._refuse_closed_attr(name)

        def run() -> list[Any]:
            results = []
            for i, env in enumerate(self._envs):
                self._current = i
                results.append(getattr(env, name)(*args, **kwargs))
            return results

        return self._run(f"call({name!r})", run)

    def call_at(self, indices: Sequence[int], name: str, *args: Any, **kwargs: Any) -> list[Any]:
        self._refuse_closed_attr(name)
        chosen = [int(i) for i in indices]
        for i in chosen:
            if not 0 <= i < self.num_envs:
                raise IndexError(f"call_at: sub-env {i} of {self.num_envs} does not exist.")

        def run() -> list[Any]:
            results = []
            for i in chosen:
                self._current = i
                results.append(getattr(self._envs[i], name)(*args, **kwargs))
            return results

        return self._run(f"call({name!r})", run)

    def _refuse_closed_attr(self, name: str) -> None:
        if self._closed:
            raise ClosedEnvError(
                f"{name!r} was asked of a closed SerialEnv: its sub-envs are closed. Build a "
                "new env."
            )

    def _close(self) -> None:
        for env in self._envs:
            env.close()
