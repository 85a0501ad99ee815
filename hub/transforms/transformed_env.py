"""``TransformedEnv``: an env whose data goes through a transform (or a ``Compose`` of them).

Its specs are the base env's, transformed from the innermost transform to the outermost; they
are computed once and again only when the base env's specs or the transforms change. A step
runs the inverse transforms on a copy of the input (outermost first), steps the base env, then
runs the forward transforms on the output (innermost first). A reset does the same with the
reset output; partial resets and steps keep the previous (transformed) values wherever the
``"_reset"`` / ``"_step"`` mask is ``False``, as for any env.

Example:
    >>> import hub
    >>> from hub.transforms import Compose, RewardSum, StepCounter, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Counting"), Compose(StepCounter(), RewardSum()))
    >>> data = env.rollout(3)
    >>> data["next", "step_count"].squeeze(-1).tolist()
    [1, 2, 3]
"""

from __future__ import annotations

from typing import Any

from tensordict import TensorDictBase

from hub.envs.base import EnvBase
from hub.envs.spec_store import SpecStore, refuse_spec_change
from hub.envs.utils import fast_get
from hub.errors import HubError
from hub.specs import Composite, TensorSpec
from hub.transforms.compose import Compose
from hub.transforms.transform import Transform

__all__ = ["TransformedEnv"]


class TransformedEnv(EnvBase):
    """``TransformedEnv(base_env, transform=None)``: ``base_env`` seen through ``transform``.

    Args:
        base_env: the env to transform (any :class:`hub.EnvBase`, batched or not).
        transform: a :class:`Transform` (often a :class:`Compose`); ``None`` starts with an
            empty ``Compose`` (add transforms with :meth:`append_transform`).
        checks: check every action and output against the transformed specs (default: the
            base env's setting).

    A transform that already belongs to an env is refused: pass ``transform.clone()``.
    Attributes the transformed env lacks are read from the base env (``env.max_steps``).

    Example:
        >>> import hub
        >>> from hub.transforms import StepCounter, TransformedEnv
        >>> env = TransformedEnv(hub.make_env("hub:Counting"), StepCounter(max_steps=2))
        >>> env.rollout(5)["next", "truncated"].squeeze(-1).tolist()
        [False, True]
    """

    def __init__(
        self,
        base_env: EnvBase,
        transform: Transform | None = None,
        *,
        checks: bool | None = None,
        _view: bool = False,
    ) -> None:
        if not isinstance(base_env, EnvBase):
            raise TypeError(
                f"TransformedEnv wraps a hub env (an EnvBase), got {type(base_env).__name__}."
            )
        if transform is None:
            transform = Compose()
        elif not isinstance(transform, Transform):
            raise TypeError(
                f"TransformedEnv takes a hub Transform (or a Compose of them), got "
                f"{type(transform).__name__}."
            )
        self.__dict__["_base_env"] = base_env
        self._owns_base = not _view
        self._tracks_ends = not _view  # a transform's view: the env it belongs to resets
        super().__init__(
            device=base_env.device,
            batch_size=base_env.batch_size,
            checks=base_env.checks if checks is None else checks,
            spec_locked=base_env.is_spec_locked,
            allow_done_after_reset=base_env.allow_done_after_reset or base_env.auto_reset,
        )
        transform.set_container(self)
        self.__dict__["_transform"] = transform

    # ------------------------------------------------------------------ structure
    @property
    def base_env(self) -> EnvBase:
        """The env below the transforms."""
        return self._base_env

    @property
    def transform(self) -> Transform:
        """The transform (a :class:`Compose` once several were added)."""
        return self._transform

    @transform.setter
    def transform(self, transform: Transform) -> None:
        if not isinstance(transform, Transform):
            raise TypeError(f"expected a hub Transform, got {type(transform).__name__}")
        transform.set_container(self)
        old = self._transform
        if old is not transform:
            old.reset_parent()
        self.__dict__["_transform"] = transform
        self._transforms_changed()

    @property
    def batch_locked(self) -> bool:  # type: ignore[override]
        """The base env's: a transformed env accepts the batch sizes its base env accepts."""
        return self._base_env.batch_locked

    def append_transform(self, transform: Transform) -> TransformedEnv:
        """Add ``transform`` as the outermost transform, in place; returns ``self``.

        Example:
            >>> import hub
            >>> from hub.transforms import RewardSum, StepCounter, TransformedEnv
            >>> env = TransformedEnv(hub.make_env("hub:Counting"), StepCounter())
            >>> env.append_transform(RewardSum()) is env, len(env.transform)
            (True, 2)
        """
        self._as_compose().append(transform)
        return self

    def insert_transform(self, index: int, transform: Transform) -> TransformedEnv:
        """Insert ``transform`` at ``index`` of the chain (0: innermost), in place."""
        self._as_compose().insert(index, transform)
        return self

    def _as_compose(self) -> Compose:
        current = self._transform
        if isinstance(current, Compose):
            return current
        current.reset_parent()
        compose = Compose(current)
        compose.set_container(self)
        self.__dict__["_transform"] = compose
        return compose

    # container protocol (see Transform.parent)
    def _env_before(self, transform: Transform) -> TransformedEnv:
        return TransformedEnv(self._base_env, _view=True)

    # ------------------------------------------------------------------ specs
    def _post_init(self) -> None:
        self.__dict__["_specs"] = _TransformedSpecs(self)
        self._specs.refresh()

    def _transforms_changed(self) -> None:
        specs = self.__dict__.get("_specs")
        if isinstance(specs, _TransformedSpecs) and "_transform" in self.__dict__:
            specs.refresh()

    # ------------------------------------------------------------------ step and reset
    def _step(self, tensordict: TensorDictBase) -> TensorDictBase:
        transform = self._transform
        inner = transform.inv(tensordict.copy()) if transform.has_inverse else tensordict
        next_td = fast_get(self._base_env.step(inner), "next")
        return transform._step(tensordict, next_td)

    def _reset(self, tensordict: TensorDictBase | None, **kwargs: Any) -> TensorDictBase:
        transform = self._transform
        inner = None
        if tensordict is not None:
            inner = tensordict.select(*self._specs.reset_select, strict=False)
        inner = transform._reset_env_preprocess(inner)
        out = transform._base_reset_override(inner)
        if out is None:
            out = self._base_env.reset(inner, **kwargs)
        source = tensordict if tensordict is not None else out.empty()
        return transform._reset(source, out)

    # ------------------------------------------------------------------ seeding and life cycle
    def set_seed(self, seed: int | None = None, static_seed: bool = False) -> int | None:
        out = self._base_env.set_seed(seed, static_seed=static_seed)
        self._transform._set_seed(seed)
        return out

    set_seed.__doc__ = EnvBase.set_seed.__doc__

    def _set_seed(self, seed: int | None) -> None:
        self._base_env.set_seed(seed)

    @property
    def is_closed(self) -> bool:
        return self._closed or self._base_env.is_closed

    def _close(self) -> None:
        self._transform.close()
        if self._owns_base:
            self._base_env.close()

    def render_frames(self, tensordict: TensorDictBase | None = None) -> Any:
        """The base env's frames (:meth:`hub.EnvBase.render_frames`), given this env's data."""
        return self._base_env.render_frames(tensordict)

    def __getattr__(self, name: str) -> Any:
        base = self.__dict__.get("_base_env")
        if base is None or name.startswith("_"):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(base, name)

    def __repr__(self) -> str:
        inner = repr(self._transform).replace("\n", "\n    ")
        return f"TransformedEnv(\n    env={self._base_env!r},\n    transform={inner})"


Transform.env_class = TransformedEnv  # what Transform.wrap (env.append_transform) builds


class _TransformedSpecs(SpecStore):
    """The specs of a :class:`TransformedEnv`: its base env's, through the transforms, from the
    innermost to the outermost; computed again only when the base env's specs or the transforms
    change. They cannot be set: they follow the base env."""

    def __init__(self, env: TransformedEnv) -> None:  # noqa: D107 - no SpecStore.__init__
        self.env = env
        self._base_version = -1
        self._version = 0
        self._out: Composite | None = None
        self._in: Composite | None = None
        self.reset_select: list[Any] = []

    def _sync(self) -> None:
        if self.env._base_env.spec_store.version != self._base_version:
            self.refresh()

    def refresh(self) -> None:
        """Compute the specs again from the base env and the transforms."""
        env = self.env
        base: EnvBase = env._base_env
        base_store = base.spec_store
        self._base_version = base_store.version  # first: spec transforms may read our specs
        transform: Transform = env._transform
        out = transform.transform_output_spec(base.output_spec.clone())
        inp = transform.transform_input_spec(base.input_spec.clone())
        if not isinstance(out, Composite) or not isinstance(inp, Composite):
            raise HubError(
                f"{type(transform).__name__}.transform_output_spec / transform_input_spec must "
                "return a Composite."
            )
        if base.is_spec_locked:
            out.lock_()
            inp.lock_()
        self._out, self._in = out, inp
        self.batch_size = base.batch_size
        self.device = out.device if out.device is not None else base.device
        env._batch_size = base.batch_size
        env._device = self.device
        self.reset_select = list(base.reset_keys) + list(base.state_keys)
        self._version += 1

    @property
    def output(self) -> Composite:  # type: ignore[override]
        self._sync()
        return self._out

    @property
    def input(self) -> Composite:  # type: ignore[override]
        self._sync()
        return self._in

    @property
    def version(self) -> int:  # type: ignore[override]
        self._sync()
        return self._version

    def set_full(self, name: str, spec: TensorSpec) -> None:
        raise refuse_spec_change(name)

    def assign(self, name: str, key: Any, spec: TensorSpec) -> None:
        raise refuse_spec_change(name)

    def set_leaf(self, full_name: str, default_key: str, spec: TensorSpec) -> None:
        raise refuse_spec_change(full_name)

    def complete_defaults(self) -> None:
        """Nothing to complete: the base env's specs are complete."""

    def lock(self, mode: bool = True) -> None:
        self._sync()
        for group in (self._out, self._in):
            group.lock_() if mode else group.unlock_()
        self._version += 1
