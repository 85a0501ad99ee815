"""``PendulumEnv``: the classic inverted pendulum in pure torch, batch-unlocked and stateless.

The state (``th``, ``thdot``, ``step_count``) travels in the tensordict, so one env object
serves inputs of any batch size. The dynamics and the reward are those of gymnasium's
``Pendulum-v1``; episodes are truncated after ``max_steps`` steps.

Example:
    >>> import torch
    >>> from tensordict import TensorDict
    >>> env = PendulumEnv()
    >>> env.batch_locked
    False
    >>> td = env.reset(TensorDict({}, [5]))
    >>> env.rand_step(td)["next", "observation"].shape
    torch.Size([5, 3])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import torch
from tensordict import TensorDictBase

from hub.envs.base import EnvBase
from hub.errors import NoFramesError
from hub.specs import Bounded, Composite, Unbounded

__all__ = ["PendulumEnv"]


def _angle_normalize(x: torch.Tensor) -> torch.Tensor:
    return ((x + math.pi) % (2 * math.pi)) - math.pi


class PendulumEnv(EnvBase):
    """An inverted pendulum to swing up and balance (continuous action: the torque).

    Args:
        g: gravity.
        max_steps: episodes are truncated after this many steps.
        from_pixels: add a ``"pixels"`` observation (an RGB image of the pendulum).
        pixels_size: the image's height and width (of the ``"pixels"`` entry and of frames).
        render_mode: ``"rgb_array"`` or ``None``, taken as gymnasium's ``make`` takes it (the
            env draws frames either way: :meth:`render_frames`); the exports' ``render()``
            gives frames when it is ``"rgb_array"``.
        batch_size: the default batch size (inputs of any batch size are accepted).
        device: where the tensors live.
        **kwargs: the other :class:`hub.EnvBase` arguments.
    """

    batch_locked = False
    max_speed = 8.0
    max_torque = 2.0
    dt = 0.05
    m = 1.0
    length = 1.0

    def __init__(
        self,
        g: float = 10.0,
        max_steps: int = 200,
        *,
        from_pixels: bool = False,
        pixels_size: int = 64,
        render_mode: str | None = None,
        batch_size: Sequence[int] = (),
        device: Any = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(batch_size=batch_size, device=device, **kwargs)
        self.g = g
        self.max_steps = int(max_steps)
        self.from_pixels = from_pixels
        self.pixels_size = pixels_size
        self.set_render_mode(render_mode)
        bs = self.batch_size
        high = torch.tensor([1.0, 1.0, self.max_speed])
        state = Composite(
            th=Unbounded(bs + (1,)),
            thdot=Bounded(-self.max_speed, self.max_speed, shape=bs + (1,)),
            step_count=Bounded(0, self.max_steps, shape=bs + (1,), dtype=torch.int64),
            shape=bs,
        )
        obs = state.clone()
        obs["observation"] = Bounded(
            -high.expand(bs + (3,)), high.expand(bs + (3,)), shape=bs + (3,)
        )
        if from_pixels:
            size = (pixels_size, pixels_size, 3)
            obs["pixels"] = Bounded(0, 255, shape=bs + size, dtype=torch.uint8)
        self.observation_spec = obs
        self.state_spec = state
        self.action_spec = Bounded(-self.max_torque, self.max_torque, shape=bs + (1,))
        self.reward_spec = Unbounded(bs + (1,))
        # one generator per env of the batch, seeded seed + i: a batch of n equals n envs
        # seeded one after the other (the seeding rule of every hub batch)
        where = device if device is not None else "cpu"
        self.rngs = [torch.Generator(device=where) for _ in range(max(1, bs.numel()))]
        for rng in self.rngs:
            rng.seed()

    def _observe(
        self, th: torch.Tensor, thdot: torch.Tensor, count: torch.Tensor, batch: torch.Size
    ) -> dict[str, torch.Tensor]:
        out = {
            "th": th,
            "thdot": thdot,
            "step_count": count,
            "observation": torch.cat([th.cos(), th.sin(), thdot], -1),
        }
        if self.from_pixels:
            out["pixels"] = _draw(th, self.pixels_size)
        return out

    def _reset_arrays(
        self, rows: Any = None, inputs: Any = None, **kwargs: Any
    ) -> dict[str, torch.Tensor]:
        batch = inputs.batch_size if inputs is not None else self.batch_size
        shape = batch + (1,)
        dev = self.device
        count = torch.zeros(shape, dtype=torch.int64, device=dev)
        if batch != self.batch_size or not len(batch):  # any batch: the first generator
            rng = self.rngs[0]
            th = (torch.rand(shape, generator=rng, device=dev) * 2 - 1) * math.pi
            thdot = torch.rand(shape, generator=rng, device=dev) * 2 - 1
            return self._observe(th, thdot, count, batch)
        th = torch.zeros(shape, device=dev)
        thdot = torch.zeros(shape, device=dev)
        flat_th, flat_thdot = th.view(-1, 1), thdot.view(-1, 1)
        chosen = None if rows is None else torch.as_tensor(rows).reshape(-1).tolist()
        for i, rng in enumerate(self.rngs):  # each env draws from its own generator
            if chosen is None or chosen[i]:
                flat_th[i] = (torch.rand(1, generator=rng, device=dev) * 2 - 1) * math.pi
                flat_thdot[i] = torch.rand(1, generator=rng, device=dev) * 2 - 1
        return self._observe(th, thdot, count, batch)

    def _step_arrays(self, inputs: Any, rows: Any = None) -> dict[str, torch.Tensor]:
        dev = self.device
        th = torch.as_tensor(inputs["th"], device=dev)
        thdot = torch.as_tensor(inputs["thdot"], device=dev)
        count = torch.as_tensor(inputs["step_count"], device=dev) + 1
        u = torch.as_tensor(inputs["action"], device=dev).clamp(-self.max_torque, self.max_torque)
        cost = _angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * u**2
        new_thdot = (
            thdot
            + (3 * self.g / (2 * self.length) * th.sin() + 3.0 / (self.m * self.length**2) * u)
            * self.dt
        )
        new_thdot = new_thdot.clamp(-self.max_speed, self.max_speed)
        new_th = _angle_normalize(th + new_thdot * self.dt)
        out = self._observe(new_th, new_thdot, count, count.shape[:-1])
        out["reward"] = -cost
        out["terminated"] = torch.zeros_like(count, dtype=torch.bool)
        out["truncated"] = count >= self.max_steps
        return out

    def _set_seed(self, seed: int | None) -> None:
        for i, rng in enumerate(self.rngs):
            if seed is None:
                rng.seed()
            else:
                rng.manual_seed((int(seed) + i) % 2**32)

    def set_render_mode(self, mode: str | None) -> None:
        """Take gymnasium's ``render_mode``: ``"rgb_array"``, or ``None`` (the exports then give
        no frames; :meth:`render_frames` draws either way)."""
        if mode not in (None, "rgb_array"):
            raise ValueError(
                f"PendulumEnv renders RGB frames: render_mode='rgb_array' (or None), not {mode!r}."
            )
        self.render_mode = mode

    def render_frames(self, tensordict: TensorDictBase | None = None) -> np.ndarray:
        """RGB images (``uint8 [*batch, height, width, 3]``) of the pendulums in
        ``tensordict``, which this stateless env needs: its state travels in the data.

        Example:
            >>> env = PendulumEnv(pixels_size=32)
            >>> env.render_frames(env.reset()).shape
            (32, 32, 3)
        """
        if tensordict is None or "th" not in tensordict.keys():
            raise NoFramesError(
                "PendulumEnv is stateless: it draws the pendulums of the data it is given, so "
                "pass the env's current data: env.render_frames(td). In a SerialEnv or "
                "ParallelEnv its sub-envs have no data to draw: make it with from_pixels=True "
                "and record the 'pixels' observation instead."
            )
        return _draw(tensordict.get("th"), self.pixels_size).cpu().numpy()


def _draw(th: torch.Tensor, size: int) -> torch.Tensor:
    """Draw the pendulum: a rod from the centre at angle ``th`` (0 points up)."""
    batch = th.shape[:-1]
    flat = th.reshape(-1)
    coords = torch.linspace(-1.2, 1.2, size, device=th.device)
    y, x = torch.meshgrid(-coords, coords, indexing="ij")
    tip_x = torch.sin(flat)[:, None, None]
    tip_y = torch.cos(flat)[:, None, None]
    t = ((x * tip_x + y * tip_y) / 1.0).clamp(0, 1)
    dist = torch.sqrt((x - t * tip_x) ** 2 + (y - t * tip_y) ** 2)
    rod = dist < 0.08
    hub_dot = (x**2 + y**2) < 0.01
    img = torch.full((flat.shape[0], size, size, 3), 255, dtype=torch.uint8, device=th.device)
    img[rod] = torch.tensor([204, 77, 77], dtype=torch.uint8, device=th.device)
    img[:, hub_dot] = torch.tensor([0, 0, 0], dtype=torch.uint8, device=th.device)
    return img.reshape(batch + (size, size, 3))
