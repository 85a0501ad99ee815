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

import torch
from tensordict import TensorDict, TensorDictBase

from hub.envs.base import EnvBase
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
        render_mode: ``"rgb_array"`` (or ``None``), as gymnasium's ``render_mode``: then
            :meth:`render_frames` gives RGB frames, and the exports' ``render()`` too.
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
        self.rng = torch.Generator(device=device if device is not None else "cpu")
        self.rng.seed()

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

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        batch = tensordict.batch_size if tensordict is not None else self.batch_size
        shape = batch + (1,)
        dev = self.device
        th = (torch.rand(shape, generator=self.rng, device=dev) * 2 - 1) * math.pi
        thdot = torch.rand(shape, generator=self.rng, device=dev) * 2 - 1
        count = torch.zeros(shape, dtype=torch.int64, device=dev)
        return TensorDict(self._observe(th, thdot, count, batch), batch_size=batch)

    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        th = tensordict["th"]
        thdot = tensordict["thdot"]
        count = tensordict["step_count"] + 1
        u = tensordict["action"].clamp(-self.max_torque, self.max_torque)
        cost = _angle_normalize(th) ** 2 + 0.1 * thdot**2 + 0.001 * u**2
        new_thdot = (
            thdot
            + (3 * self.g / (2 * self.length) * th.sin() + 3.0 / (self.m * self.length**2) * u)
            * self.dt
        )
        new_thdot = new_thdot.clamp(-self.max_speed, self.max_speed)
        new_th = _angle_normalize(th + new_thdot * self.dt)
        out = self._observe(new_th, new_thdot, count, tensordict.batch_size)
        out["reward"] = -cost
        out["terminated"] = torch.zeros_like(count, dtype=torch.bool)
        out["truncated"] = count >= self.max_steps
        return TensorDict(out, batch_size=tensordict.batch_size)

    def _set_seed(self, seed: int | None) -> None:
        if seed is None:
            self.rng.seed()
        else:
            self.rng.manual_seed(int(seed))

    def set_render_mode(self, mode: str | None) -> None:
        """Render in ``mode`` (``"rgb_array"``, or ``None``: no frames)."""
        if mode not in (None, "rgb_array"):
            raise ValueError(
                f"PendulumEnv renders RGB frames: render_mode='rgb_array' (or None), not {mode!r}."
            )
        self.render_mode = mode

    def render_frames(self, tensordict: TensorDictBase | None = None) -> torch.Tensor:
        """RGB frames (``uint8``) of the pendulums in ``tensordict``, batch dims first:
        ``(H, W, 3)`` for one env, ``(*batch, H, W, 3)`` for a batch.

        Example:
            >>> env = PendulumEnv(render_mode="rgb_array")
            >>> env.render_frames(env.reset()).shape
            torch.Size([64, 64, 3])
        """
        if tensordict is None:
            raise ValueError("PendulumEnv is stateless: pass the tensordict to render.")
        return _draw(tensordict["th"], self.pixels_size)

    def render(self, tensordict: TensorDictBase | None = None) -> torch.Tensor:
        """An RGB image (``uint8``, height x width x 3) of the pendulum in ``tensordict``
        (its first batch element)."""
        if tensordict is None:
            raise ValueError("PendulumEnv is stateless: pass the tensordict to render.")
        th = tensordict["th"].reshape(-1, 1)[:1]
        return _draw(th, self.pixels_size)[0]


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
