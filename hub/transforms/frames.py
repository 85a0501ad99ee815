"""Transforms over time: ``CatFrames``, ``TimeMaxPool``, ``FrameSkipTransform``,
``NoopResetEnv``, ``EndOfLifeTransform``.

``CatFrames`` and ``TimeMaxPool`` keep the last frames of each sub-env; partial resets restart
only the reset sub-envs' frames, and partial steps leave the skipped ones as they were.
``FrameSkipTransform`` and ``NoopResetEnv`` step the env below them (their :attr:`parent`):
put them first in the chain, so that the transforms they step through are the ones before them.

Example:
    >>> import hub
    >>> from hub.transforms import CatFrames, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Counting"),
    ...                      CatFrames(3, dim=-1, in_keys=["observation"]))
    >>> env.rollout(2)["next", "observation"].tolist()
    [[0, 0, 1], [0, 1, 2]]
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import Any

import torch
from tensordict import TensorDictBase

from hub.errors import HubError
from hub.specs import Bounded, Categorical, Composite, MultiOneHot, OneHot, TensorSpec
from hub.transforms._utils import (
    NestedKey,
    map_spec_shape,
    reset_mask,
    step_again,
    where_mask,
)
from hub.transforms.transform import Transform

__all__ = [
    "CatFrames",
    "TimeMaxPool",
    "FrameSkipTransform",
    "NoopResetEnv",
    "EndOfLifeTransform",
]


def _step_mask(tensordict: TensorDictBase) -> torch.Tensor | None:
    mask = tensordict.get("_step", None)
    if mask is None or bool(mask.all()):
        return None
    return mask


class CatFrames(Transform):
    """Concatenate the last ``N`` frames of an entry along ``dim`` (counted from the end).

    After a reset the missing past frames are copies of the first one (``padding="same"``) or
    ``padding_value`` (``padding="constant"``).

    Args:
        N: the number of frames.
        dim: the dim to concatenate along (``-3`` for channels-first images, ``-1`` for vectors).
        in_keys: default ``["pixels"]``.
        out_keys: default: ``in_keys``.
        padding: ``"same"`` or ``"constant"``.
        padding_value: the value of constant padding.

    Example:
        >>> import hub
        >>> from hub.transforms import CatFrames, Compose, GrayScale, ToTensorImage, TransformedEnv
        >>> base = hub.make_env("hub:Pendulum", from_pixels=True, pixels_size=16)
        >>> env = TransformedEnv(base, Compose(ToTensorImage(), GrayScale(), CatFrames(4, dim=-3)))
        >>> env.rollout(3)["next", "pixels"].shape
        torch.Size([3, 4, 16, 16])
    """

    def __init__(
        self,
        N: int,
        dim: int,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        padding: str = "same",
        padding_value: float = 0.0,
    ) -> None:
        super().__init__(in_keys if in_keys is not None else ["pixels"], out_keys)
        if int(N) != N or N < 1:
            raise ValueError(f"CatFrames needs N >= 1 frames, got {N!r}.")
        if dim >= 0:
            raise ValueError(
                f"CatFrames takes a dim counted from the end (e.g. -3 for C, H, W images), got "
                f"{dim}: a positive dim would depend on the batch size."
            )
        if padding not in ("same", "constant"):
            raise ValueError(f"padding must be 'same' or 'constant', got {padding!r}.")
        self.N = int(N)
        self.dim = dim
        self.padding = padding
        self.padding_value = padding_value
        self._buffers: dict[NestedKey, torch.Tensor] = {}

    def _initial(self, frame: torch.Tensor) -> torch.Tensor:
        if self.padding == "same" or self.N == 1:
            return torch.cat([frame] * self.N, self.dim)
        pad = torch.full_like(frame, self.padding_value)
        return torch.cat([pad] * (self.N - 1) + [frame], self.dim)

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        mask = _step_mask(tensordict)
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            frame = next_tensordict.get(in_key)
            buf = self._buffers.get(in_key)
            size = frame.shape[self.dim]
            if (
                buf is None
                or buf.shape[: frame.ndim + self.dim] != frame.shape[: frame.ndim + self.dim]
            ):
                new = self._initial(frame)
            else:
                total = buf.shape[self.dim]
                new = torch.cat([buf.narrow(self.dim, size, total - size), frame], self.dim)
                if mask is not None:
                    new = where_mask(mask, new, buf)
            self._buffers[in_key] = new
            next_tensordict.set(out_key, new)
        return next_tensordict

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        raise NotImplementedError("CatFrames keeps the past frames of an env: use it in one.")

    forward = _call

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            frame = tensordict_reset.get(in_key, None)
            if frame is None:
                continue
            new = self._initial(frame)
            buf = self._buffers.get(in_key)
            prefix = () if isinstance(in_key, str) else in_key[:-1]
            mask = reset_mask(tensordict, prefix)
            if mask is not None and buf is not None and buf.shape == new.shape:
                new = where_mask(mask, new, buf)
            self._buffers[in_key] = new
            tensordict_reset.set(out_key, new)
        return tensordict_reset

    def _transform_spec(self, spec: TensorSpec) -> TensorSpec:
        out = map_spec_shape(spec, lambda t: torch.cat([t] * self.N, self.dim), "CatFrames")
        if self.padding == "constant" and isinstance(out, Bounded):
            pad = torch.tensor(self.padding_value, dtype=out.dtype)
            out = Bounded(
                torch.minimum(out.low, pad),
                torch.maximum(out.high, pad),
                shape=out.shape,
                device=out.device,
                dtype=out.dtype,
            )
        return out

    def _extra_repr(self) -> str:
        return f"N={self.N}, dim={self.dim}, {super()._extra_repr()}"


class TimeMaxPool(Transform):
    """The element-wise maximum of an entry over its last ``T`` values (Atari's flicker fix).

    Example:
        >>> import hub
        >>> from hub.transforms import TimeMaxPool, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), TimeMaxPool(in_keys=["observation"]))
        >>> env.rollout(2)["next", "observation"].squeeze(-1).tolist()
        [1, 2]
    """

    def __init__(
        self,
        in_keys: NestedKey | Iterable[NestedKey] | None = None,
        out_keys: NestedKey | Iterable[NestedKey] | None = None,
        T: int = 2,
    ) -> None:
        super().__init__(in_keys if in_keys is not None else ["observation"], out_keys)
        if int(T) != T or T < 1:
            raise ValueError(f"TimeMaxPool needs T >= 1, got {T!r}.")
        self.T = int(T)
        self._buffers: dict[NestedKey, torch.Tensor] = {}

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        mask = _step_mask(tensordict)
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            frame = next_tensordict.get(in_key)
            buf = self._buffers.get(in_key)
            if buf is None or buf.shape[1:] != frame.shape:
                new = frame.unsqueeze(0).expand(self.T, *frame.shape).clone()
            else:
                new = torch.cat([buf[1:], frame.unsqueeze(0)], 0)
                if mask is not None:
                    m = mask.reshape(1, *mask.shape, *([1] * (frame.ndim - mask.ndim)))
                    new = torch.where(m, new, buf)
            self._buffers[in_key] = new
            next_tensordict.set(out_key, new.max(0).values)
        return next_tensordict

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        raise NotImplementedError("TimeMaxPool keeps the past values of an env: use it in one.")

    forward = _call

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        for in_key, out_key in zip(self._in_keys, self._out_keys):
            frame = tensordict_reset.get(in_key, None)
            if frame is None:
                continue
            new = frame.unsqueeze(0).expand(self.T, *frame.shape).clone()
            buf = self._buffers.get(in_key)
            mask = reset_mask(tensordict, ())
            if mask is not None and buf is not None and buf.shape == new.shape:
                m = mask.reshape(1, *mask.shape, *([1] * (frame.ndim - mask.ndim)))
                new = torch.where(m, new, buf)
            self._buffers[in_key] = new
            tensordict_reset.set(out_key, frame)
        return tensordict_reset


def _noop_leaf(spec: TensorSpec, extra: torch.Size) -> torch.Tensor:
    """Action 0 of a spec: index 0 for one-hot specs (a zero vector is no valid one-hot)."""
    value = spec.zero(extra)
    if isinstance(spec, OneHot):
        value[..., 0] = 1
    elif isinstance(spec, MultiOneHot):
        start = 0
        for n in spec.nvec:
            value[..., start] = 1
            start += n
    return value


def _action_zeros(env: Any, data: TensorDictBase) -> TensorDictBase:
    extra = data.batch_size[: data.batch_dims - len(env.batch_size)]
    out = data.empty()
    for key, spec in env.full_action_spec.items(include_nested=True, leaves_only=True):
        out.set(key, _noop_leaf(spec, extra))
    return out


class FrameSkipTransform(Transform):
    """Repeat each action ``frame_skip`` times and sum the rewards; a sub-env whose episode ends
    stops repeating (its last data is kept).

    Put it first (innermost): it steps the env below it.

    Example:
        >>> import hub
        >>> from hub.transforms import FrameSkipTransform, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting", max_steps=10), FrameSkipTransform(3))
        >>> env.rollout(5)["next", "observation"].squeeze(-1).tolist()
        [3, 6, 9, 10]
    """

    def __init__(self, frame_skip: int = 1) -> None:
        super().__init__()
        if int(frame_skip) != frame_skip or frame_skip < 1:
            raise ValueError(f"frame_skip must be a positive int, got {frame_skip!r}.")
        self.frame_skip = int(frame_skip)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        if self.frame_skip == 1:
            return next_tensordict
        parent = self.parent
        if parent is None:
            raise HubError("FrameSkipTransform steps the env it belongs to: use it in one.")
        actions = tensordict.select(*parent.action_keys)
        return step_again(
            parent,
            tensordict,
            next_tensordict,
            self.frame_skip,
            lambda _, inputs: inputs.update(actions),
        )

    def _extra_repr(self) -> str:
        return f"frame_skip={self.frame_skip}"


class NoopResetEnv(Transform):
    """After each reset, take a random number (1 to ``noops``) of no-op steps (action 0);
    with ``random=False``, exactly ``noops``. Episodes that end meanwhile are reset again.

    Put it first (innermost): it steps the env below it. In a batched env all reset sub-envs
    take the same number of no-ops; sub-envs that were not reset are not stepped.

    Example:
        >>> import hub
        >>> from hub.transforms import NoopResetEnv, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting", max_steps=50),
        ...                      NoopResetEnv(noops=4, random=False))
        >>> env.reset()["observation"].tolist()
        [4]
    """

    def __init__(self, noops: int = 30, random: bool = True) -> None:
        super().__init__()
        if int(noops) != noops or noops < 1:
            raise ValueError(f"noops must be a positive int, got {noops!r}.")
        self.noops = int(noops)
        self.random = random
        self._rng = torch.Generator()
        self._rng.seed()

    def _set_seed(self, seed: int | None) -> None:
        if seed is None:
            self._rng.seed()
        else:
            self._rng.manual_seed(int(seed))

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        parent = self.parent
        if parent is None:
            raise HubError("NoopResetEnv steps the env it belongs to: use it in one.")
        count = self.noops
        if self.random:
            count = int(torch.randint(1, self.noops + 1, (), generator=self._rng))
        mask = reset_mask(tensordict, ())
        current = tensordict_reset
        done_key = parent.done_key
        for _ in range(count):
            inputs = current.copy().update(_action_zeros(parent, current))
            if mask is not None:
                inputs.set("_step", mask.reshape(current.batch_size))
            out = parent.step(inputs)
            current = parent.step_mdp(out)
            done = current.get(done_key)
            if bool(done.any()):
                current.set("_reset", done.clone())
                current = parent.reset(current)
        return current.exclude("_step")

    def _extra_repr(self) -> str:
        return f"noops={self.noops}, random={self.random}"


class EndOfLifeTransform(Transform):
    """Flag the loss of a life (games with lives, like Atari) in ``"end-of-life"``, without
    ending the episode: use it as a done signal in a value loss.

    Lives are read from the ``lives_key`` entry when the env writes one, else from the base env's
    attribute ``eol_attribute`` (a dotted path, called if it is a method).

    Example:
        >>> import hub
        >>> from hub.transforms import EndOfLifeTransform, TransformedEnv
        >>> base = hub.make_env("hub:Counting")
        >>> base.lives = lambda: 3
        >>> env = TransformedEnv(base, EndOfLifeTransform(eol_attribute="lives"))
        >>> env.rollout(2)["next", "end-of-life"].squeeze(-1).tolist()
        [False, False]
    """

    def __init__(
        self,
        eol_key: str = "end-of-life",
        lives_key: str = "lives",
        done_key: str = "done",
        eol_attribute: str = "unwrapped.ale.lives",
    ) -> None:
        super().__init__()
        self.eol_key = eol_key
        self.lives_key = lives_key
        self.done_key = done_key
        self.eol_attribute = eol_attribute
        self._lives: torch.Tensor | None = None
        self._shape = torch.Size((1,))

    def transform_done_spec(self, done_spec: Composite) -> Composite:
        flag = done_spec[self.done_key]
        self._shape = flag.shape[len(done_spec.shape) :]
        done_spec[self.eol_key] = Categorical(2, shape=flag.shape, dtype=torch.bool)
        return done_spec

    def _read_lives(self, data: TensorDictBase) -> torch.Tensor:
        lives = data.get(self.lives_key, None)
        if lives is None:
            parent = self.parent
            if parent is None:
                raise HubError("EndOfLifeTransform reads lives from its env: use it in one.")
            try:
                value = functools.reduce(getattr, self.eol_attribute.split("."), parent.base_env)
            except AttributeError:
                raise HubError(
                    f"EndOfLifeTransform found no {self.lives_key!r} entry and no attribute "
                    f"{self.eol_attribute!r} on {type(parent.base_env).__name__}: pass "
                    "lives_key= or eol_attribute= to say where the lives are."
                ) from None
            value = value() if callable(value) else value
            if isinstance(value, list):
                value = [v() if callable(v) else v for v in value]
            lives = torch.as_tensor(value)
        return lives.reshape(data.batch_size + self._shape).to(torch.int64)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        return next_tensordict

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        lives = self._read_lives(next_tensordict)
        previous = self._lives if self._lives is not None else lives
        if previous.shape != lives.shape:
            previous = lives
        next_tensordict.set(self.eol_key, lives < previous)
        self._lives = lives
        return next_tensordict

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        lives = self._read_lives(tensordict_reset)
        mask = reset_mask(tensordict, ())
        if mask is not None and self._lives is not None and self._lives.shape == lives.shape:
            lives = where_mask(mask, lives, self._lives)
        self._lives = lives
        flag = torch.zeros(lives.shape, dtype=torch.bool, device=tensordict_reset.device)
        tensordict_reset.set(self.eol_key, flag)
        return tensordict_reset
