"""Module-level envs and factories for the ParallelEnv tests (picklable, so spawn can use them)."""

from __future__ import annotations

import os
import time
from typing import Any

import torch
from tensordict import TensorDict

from hub import GymLikeEnv
from hub.envs.builtin import CountingEnv, PendulumEnv
from hub.specs import Categorical, Composite, NonTensor, Unbounded


class FlakyEnv(CountingEnv):
    """Counts; raises ``ValueError("boom")`` at step ``fail_at`` (never when it is 0)."""

    def __init__(self, fail_at: int = 0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fail_at = fail_at
        self.steps = 0

    def _step(self, tensordict):
        self.steps += 1
        if self.fail_at and self.steps == self.fail_at:
            raise ValueError("boom")
        return super()._step(tensordict)

    def double(self, x: int) -> int:
        return 2 * x

    def torch_threads(self) -> int:
        return torch.get_num_threads()


class SleepyEnv(CountingEnv):
    """Counts, sleeping ``delay`` seconds in each step."""

    def __init__(self, delay: float = 0.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.delay = delay

    def _step(self, tensordict):
        time.sleep(self.delay)
        return super()._step(tensordict)

    def nap(self) -> float:
        """Sleep ``delay`` seconds outside a step."""
        time.sleep(self.delay)
        return self.delay


class NanRewardEnv(CountingEnv):
    """Counts, with a NaN reward."""

    def _step(self, tensordict):
        out = super()._step(tensordict)
        out["reward"] = torch.full_like(out["reward"], float("nan"))
        return out


class NonTensorStateEnv(CountingEnv):
    """Declares a non-tensor state entry (an input, which shared memory cannot carry)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.state_spec = Composite(text=NonTensor(shape=self.batch_size), shape=self.batch_size)


class WordEnv(CountingEnv):
    """Counts, with a non-tensor observation ``"word"``: ``"<name>:<count>"`` (one string per
    counter; the ``i``-th of a batch is named ``"<name><i>"``)."""

    def __init__(self, name: str = "w", **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.name = name
        self.observation_spec["word"] = NonTensor(shape=self.batch_size, example_data="")

    def _words(self, count: torch.Tensor) -> Any:
        if not len(self.batch_size):
            return f"{self.name}:{int(count)}"
        return [f"{self.name}{i}:{c}" for i, c in enumerate(count.reshape(-1).tolist())]

    def _reset_arrays(self, rows: Any = None, inputs: Any = None, **kwargs: Any) -> dict:
        out = super()._reset_arrays(rows, inputs, **kwargs)
        out["word"] = self._words(out["observation"])
        return out

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict:
        out = super()._step_arrays(inputs, rows)
        out["word"] = self._words(out["observation"])
        return out


class BrokenEnv(CountingEnv):
    """Fails while it is built."""

    def __init__(self, **kwargs: Any) -> None:
        raise RuntimeError("cannot build this env")


def backend_probe(**kwargs: Any) -> PendulumEnv:
    """A PendulumEnv that remembers the backend choices it saw when built."""
    from hub.dispatch import backend_state

    env = PendulumEnv(**kwargs)
    env.seen_backends = backend_state()
    env.pid = os.getpid()
    return env


def nested_parallel(max_steps: int = 3) -> Any:
    """A ParallelEnv of one worker, built inside a ParallelEnv worker."""
    import hub

    return hub.ParallelEnv(1, CountingEnv, {"max_steps": max_steps})


class CartPoleEnv(GymLikeEnv):
    """gymnasium's CartPole-v1 through GymLikeEnv (stands in for the gym plugin's env)."""

    def _build_env(self, **kwargs: Any) -> Any:
        import gymnasium

        return gymnasium.make("CartPole-v1")

    def _make_specs(self, env: Any) -> None:
        self.observation_spec = Composite(observation=Unbounded((4,)))
        self.action_spec = Categorical(2, shape=())
        self.reward_spec = Unbounded((1,))

    def _set_seed(self, seed: int | None) -> None:
        self._env.reset(seed=seed)
        self._env.action_space.seed(seed)


def zeros_like_row(env: Any) -> TensorDict:
    """A zero tensordict of the env's full batch (for partial-reset inputs)."""
    return env.fake_tensordict().exclude("next")


class FaultyEnv(CountingEnv):
    """Counts; at its next step after ``fault`` is set (``set_attr``), fails in that way:
    ``"raise"``, ``"kill"`` (SIGKILL), ``"segv"`` (a real invalid read), ``"exit"``
    (``os._exit(3)``), ``"hang"`` (sleeps an hour), ``"slow"`` (sleeps a second once),
    ``"interrupt"`` (sends SIGINT to the process ``interrupt_pid``, the test's, then sleeps a
    second: a Ctrl-C that lands while the test waits for this step) or ``"shape"`` (an
    observation of the wrong shape)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fault: str | None = None
        self.interrupt_pid = 0

    def _step(self, tensordict):
        fault, self.fault = self.fault, None
        if fault == "raise":
            raise ValueError("injected fault")
        if fault == "kill":
            os.kill(os.getpid(), 9)
        if fault == "segv":
            import ctypes
            import faulthandler

            faulthandler.disable()  # a real crash, without the inherited dump on stderr
            ctypes.string_at(0)
        if fault == "exit":
            os._exit(3)
        if fault == "hang":
            time.sleep(3600)
        if fault == "slow":
            time.sleep(1.0)
        if fault == "interrupt":
            self.interrupt_and_nap()
        out = super()._step(tensordict)
        if fault == "shape":
            out["observation"] = torch.zeros(3, dtype=out["observation"].dtype)
        return out

    def interrupt_and_nap(self) -> None:
        """Send SIGINT to ``interrupt_pid`` (if set), then sleep a second."""
        if self.interrupt_pid:
            os.kill(self.interrupt_pid, 2)
        time.sleep(1.0)

    def gc_state(self) -> tuple[bool, int]:
        import gc

        return gc.isenabled(), gc.get_freeze_count()


class WideObservationEnv(CountingEnv):
    """Declares an observation of shape (1,) and returns one of shape (3,)."""

    def _step(self, tensordict):
        out = super()._step(tensordict)
        out["observation"] = torch.zeros(3, dtype=out["observation"].dtype)
        return out


class SleepyBuildEnv(CountingEnv):
    """Takes 5 seconds to build."""

    def __init__(self, **kwargs: Any) -> None:
        time.sleep(5.0)
        super().__init__(**kwargs)


class FlakyWordEnv(WordEnv):
    """A :class:`WordEnv` whose step ``fail_at`` raises ``ValueError("boom")``."""

    def __init__(self, fail_at: int = 2, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.fail_at = fail_at
        self.steps = 0

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict:
        self.steps += 1
        if self.steps == self.fail_at:
            raise ValueError("boom")
        return super()._step_arrays(inputs, rows)
