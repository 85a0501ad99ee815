"""An in-memory plugin for the CLI tests: namespace ``clitest`` with an env that has pixels.

``clitest:Pixels`` observes ``"pixels"`` (uint8, CHW, 3 x 16 x 20) whose colour is the step count,
and ends its episodes after ``max_steps`` steps. ``clitest:Dispatching`` has a version-dispatched
function in this module, for ``hub info``'s dispatch section.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import torch
from tensordict import TensorDict, TensorDictBase

import hub
from hub.dispatch import implement_for
from hub.specs import Bounded, Categorical, Composite, Unbounded

NAME = "cli-test-plugin"
HEIGHT, WIDTH = 16, 20


@implement_for("packaging", None, "1")
def packaging_flavour() -> str:
    return "ancient packaging"


@implement_for("packaging", "1")
def packaging_flavour() -> str:  # noqa: F811 - a second implementation, as implement_for wants
    return "modern packaging"


class PixelEnv(hub.EnvBase):
    """Counts steps and shows the count as the colour of a ``3 x 16 x 20`` image."""

    def __init__(
        self, max_steps: int = 5, *, batch_size: Sequence[int] = (), device: Any = None, **kw: Any
    ) -> None:
        super().__init__(batch_size=batch_size, device=device, **kw)
        bs = self.batch_size
        self.max_steps = max_steps
        self.observation_spec = Composite(
            pixels=Bounded(0, 255, shape=bs + (3, HEIGHT, WIDTH), dtype=torch.uint8), shape=bs
        )
        self.action_spec = Bounded(-1.0, 1.0, shape=bs + (1,))
        self.reward_spec = Unbounded(bs + (1,))
        self.done_spec = Categorical(2, shape=bs + (1,), dtype=torch.bool)
        self.count = torch.zeros(bs + (1,), dtype=torch.int64)

    def _pixels(self) -> torch.Tensor:
        level = (self.count * 40).clamp(max=255).to(torch.uint8)
        shape = self.batch_size + (3, HEIGHT, WIDTH)
        return level.reshape(self.batch_size + (1, 1, 1)).expand(shape).clone()

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        reset = tensordict.get("_reset", None) if tensordict is not None else None
        if reset is None:
            self.count.zero_()
        else:
            self.count.masked_fill_(reset.reshape(self.count.shape), 0)
        return TensorDict({"pixels": self._pixels()}, batch_size=self.batch_size)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        self.count += 1
        return TensorDict(
            {
                "pixels": self._pixels(),
                "reward": torch.ones(self.batch_size + (1,)),
                "terminated": self.count >= self.max_steps,
            },
            batch_size=self.batch_size,
        )

    def _set_seed(self, seed: int | None) -> None:
        """Deterministic: nothing to seed."""


def make(env_id: str, num_envs: int | None = None, **kwargs: Any) -> hub.EnvBase:
    batch_size = () if num_envs is None else (num_envs,)
    return PixelEnv(batch_size=batch_size, **kwargs)


class Plugin:
    """The hooks of the test plugin."""

    @hub.hookimpl
    def hub_namespaces(self) -> list[hub.Namespace]:
        return [
            hub.Namespace(
                "clitest",
                make=make,
                list_envs=lambda: ["Pixels"],
                native_batching=True,
                requires=("packaging",),
                description="envs of the CLI tests",
            ),
            hub.Namespace(
                "clitest_missing",
                make=make,
                list_envs=lambda: ["Nothing"],
                extra="clitest-extra",
                requires=("a_module_that_is_not_installed",),
                description="a namespace whose library is missing",
            ),
        ]
