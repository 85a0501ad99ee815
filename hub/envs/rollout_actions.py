"""The random actions of ``rollout(policy=None)``, drawn a block of steps at a time.

Drawing one action costs a few tensor calls per step (allocation, fill, clamp), a noticeable
part of a fast env's step. A rollout without a policy draws :data:`BLOCK` steps of actions in one
call instead and hands out one row per step. The values are the same as one draw per step: the
specs allowed here (:data:`ROW_BY_ROW`) fill their tensors with torch's serial CPU kernels
(``uniform_``, ``random_``), which consume the generator element by element, so ``n`` rows drawn
at once equal ``n`` rows drawn one after the other. At the end of the rollout the generator is
rewound to where per-step drawing would have left it (the unused rows are given back).

One thing breaks the equality: something else drawing from torch's global generator during the
rollout (an env whose reset uses ``torch.rand``, a callback). The actions of such a rollout
differ from those of a loop calling ``rand_action`` step by step (the other draws fall between
the blocks' draws instead of between the steps'), but they are still all drawn from the same
seeded generator: the same seed gives the same rollout, every time. The generator is then not
rewound at the end either (that would undo the other draws).

Example:
    >>> import torch, hub
    >>> env = hub.make_env("hub:Counting", max_steps=100)
    >>> _ = torch.manual_seed(0); blocks = env.rollout(10)["action"]; then = torch.rand(3)
    >>> _ = torch.manual_seed(0); td = env.reset()
    >>> steps = [env.rand_action(td)["action"].clone() for _ in range(10)]
    >>> torch.equal(blocks, torch.stack(steps)), torch.equal(then, torch.rand(3))
    (True, True)
"""

from __future__ import annotations

from typing import Any

import torch
from tensordict import TensorDictBase

from hub.envs._fast_td import fast_set
from hub.envs.action_checks import ActionCheck
from hub.specs import Binary, Bounded, Categorical, OneHot

__all__ = ["BLOCK", "ROW_BY_ROW", "block_random_policy"]

BLOCK = 64
"""Steps of random actions drawn in one call."""

ROW_BY_ROW = (Bounded, Categorical, Binary, OneHot)
"""Spec classes whose ``rand`` fills with serial kernels (see the module docstring);
``Unbounded`` is not one: ``randn`` fills tensors of 16 elements or more in another order."""


def block_random_policy(
    single: ActionCheck | None, tensordict: TensorDictBase, batch_dims: int, steps: int
) -> BlockRandomPolicy | None:
    """A policy writing random actions drawn in blocks, or ``None`` when the env's actions
    cannot be drawn that way (``single`` is ``None``: several action entries; another spec
    class, dynamic shapes, a device other than the CPU, a batch-unlocked env given extra batch
    dims: ``tensordict`` has more than the env's ``batch_dims``)."""
    if single is None:
        return None
    key, spec = single.key, single.spec
    if type(spec) not in ROW_BY_ROW or any(d < 0 for d in spec.shape):
        return None
    if spec.device is not None and spec.device.type != "cpu":
        return None
    if tensordict.batch_dims != batch_dims:
        return None
    return BlockRandomPolicy(key, spec, steps)


class BlockRandomPolicy:
    """Writes ``spec``'s random values under ``key``, drawn up to :data:`BLOCK` steps at once.

    Call :meth:`finish` when the rollout ends: it gives back the rows that were not used.
    """

    def __init__(self, key: Any, spec: Any, steps: int) -> None:
        self.key, self.spec, self.left = key, spec, steps
        self.rows: tuple[torch.Tensor, ...] = ()
        self.used = 0
        self.before: torch.Tensor | None = None  # generator state before the current block
        self.after: torch.Tensor | None = None  # and right after it was drawn

    def __call__(self, tensordict: TensorDictBase) -> TensorDictBase:
        if self.used == len(self.rows):
            self._draw()
        fast_set(tensordict, self.key, self.rows[self.used])
        self.used += 1
        return tensordict

    def _draw(self) -> None:
        generator = torch.default_generator
        before = generator.get_state()
        n = max(1, min(BLOCK, self.left))
        self.left -= n
        self.rows = self.spec.rand((n,)).unbind(0)
        self.used = 0
        self.before, self.after = before, generator.get_state()

    def finish(self) -> None:
        """Rewind torch's generator to where drawing one action per step would have left it."""
        unused = len(self.rows) - self.used
        if not unused or self.before is None:
            return
        generator = torch.default_generator
        if not torch.equal(generator.get_state(), self.after):
            return  # something else drew since: rewinding would undo its draws
        generator.set_state(self.before)
        if self.used:
            self.spec.rand((self.used,))
