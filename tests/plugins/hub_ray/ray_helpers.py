"""What the Ray tests share: a Ray instance per module, envs that fail on purpose, and the
check that no actor of an env outlived it."""

from __future__ import annotations

import contextlib
import os
import socket
import time
from collections.abc import Iterator
from typing import Any

import torch

from hub.envs.builtin import CountingEnv


class ExplodingEnv(CountingEnv):
    """A counting env whose step raises once the count reaches ``explode_at``."""

    def __init__(self, explode_at: int = 3, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.explode_at = explode_at

    def _step(self, tensordict):
        out = super()._step(tensordict)
        if int(out["observation"].max()) >= self.explode_at:
            raise ValueError(f"boom at count {self.explode_at}")
        return out


class SlowCountingEnv(CountingEnv):
    """A counting env whose step takes ``delay`` seconds."""

    def __init__(self, delay: float = 1.0, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.delay = delay

    def _step(self, tensordict):
        time.sleep(self.delay)
        return super()._step(tensordict)


def require_loopback_only() -> None:
    """Raise unless this process sees no network interface but loopback: Ray advertises the
    machine's own address even when told 127.0.0.1, and these tests must not reach beyond it."""
    interfaces = sorted(name for _, name in socket.if_nameindex() if name != "lo")
    if interfaces:
        raise RuntimeError(
            f"the Ray tests run in a network namespace with only loopback, and this one also has "
            f"{interfaces}. Run them with `make test-ray`, or as "
            "unshare -rn sh -c 'ip link set lo up && exec python -m pytest tests/plugins/hub_ray'."
        )


def start_local_ray(**kwargs: Any) -> Iterator[Any]:
    """A local Ray instance for one test module (loopback only; the dashboard serves
    ``ray.util.state``)."""
    import ray

    require_loopback_only()
    os.environ.setdefault("RAY_worker_niceness", "0")  # as hub_ray.connect does
    # the machine is shared: Ray's memory monitor would kill these small workers for
    # what other processes use
    os.environ.setdefault("RAY_memory_monitor_refresh_ms", "0")
    # address="local": a new instance even when another one runs on this machine (ray.init()
    # would look for running ones and refuse to choose between two)
    ray.init(address="local", num_cpus=2, include_dashboard=True, logging_level="warning", **kwargs)
    try:
        with ray_address(ray.get_runtime_context().gcs_address):
            yield ray
    finally:
        ray.shutdown()


@contextlib.contextmanager
def ray_address(address: str) -> Iterator[None]:
    """``RAY_ADDRESS`` set to ``address`` meanwhile: what Ray's calls without an address (its
    state API) use, instead of looking for running instances, which finds those of other
    processes on the machine too."""
    before = os.environ.get("RAY_ADDRESS")
    os.environ["RAY_ADDRESS"] = address
    try:
        yield
    finally:
        if before is None:
            del os.environ["RAY_ADDRESS"]
        else:
            os.environ["RAY_ADDRESS"] = before


def alive_actor_pids(pids: list[int]) -> list[int]:
    """The pids among ``pids`` of actors that Ray's state API lists as alive."""
    from ray.util.state import list_actors

    alive = list_actors(
        filters=[("state", "=", "ALIVE")], detail=True, raise_on_missing_output=False
    )
    return [actor.pid for actor in alive if actor.pid in pids]


def same_data(a: Any, b: Any) -> bool:
    """Whether two tensordicts hold the same keys and values."""
    keys = sorted(a.keys(True, True), key=str)
    if keys != sorted(b.keys(True, True), key=str):
        return False
    return all(torch.equal(a.get(k), b.get(k)) for k in keys)


def cartpole() -> Any:
    """gymnasium's CartPole-v1 with an index action (a picklable factory for the actors)."""
    import hub

    return hub.make_env("gymnasium:CartPole-v1", categorical_action_encoding=True)
