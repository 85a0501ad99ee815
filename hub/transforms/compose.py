"""``Compose``: a chain of transforms that acts as one.

Forward (outputs) and spec transforms run in order, inner to outer; the inverse (inputs) runs
in reverse order. Indexing with an int returns the transform itself (it keeps its parent);
indexing with a slice returns a new ``Compose`` without a parent, holding clones.

Example:
    >>> import hub
    >>> from hub.transforms import Compose, RewardSum, StepCounter, TransformedEnv
    >>> env = TransformedEnv(hub.make_env("hub:Counting"), Compose(StepCounter(), RewardSum()))
    >>> last = env.transform[-1:]
    >>> type(last).__name__, last.parent is None, last[0] is env.transform[1]
    ('Compose', True, False)
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from tensordict import TensorDictBase

from hub.errors import HubError
from hub.specs import Composite
from hub.transforms.transform import Transform

if TYPE_CHECKING:
    from hub.transforms.transformed_env import TransformedEnv

__all__ = ["Compose"]


class Compose(Transform):
    """Chain transforms: ``Compose(t1, t2, t3)`` applies ``t1`` first to the env's outputs.

    Example:
        >>> from hub.transforms import Compose, DoubleToFloat, StepCounter
        >>> c = Compose(StepCounter(), DoubleToFloat())
        >>> len(c), type(c[0]).__name__
        (2, 'StepCounter')
    """

    def __init__(self, *transforms: Transform) -> None:
        super().__init__()
        self._steps: list[Any] | None = None  # set once the keys are resolved (see specs)
        for t in transforms:
            _check_transform(t)
        self.transforms: list[Transform] = []
        for t in transforms:
            t.set_container(self)
            self.transforms.append(t)

    # ------------------------------------------------------------------ list-like
    def __len__(self) -> int:
        return len(self.transforms)

    def __iter__(self) -> Iterator[Transform]:
        return iter(self.transforms)

    def __getitem__(self, index: int | slice | list[int]) -> Transform:
        if isinstance(index, slice):
            return Compose(*[t.clone() for t in self.transforms[index]])
        if isinstance(index, list):
            return Compose(*[self.transforms[i].clone() for i in index])
        return self.transforms[index]

    def append(self, transform: Transform) -> None:
        """Add ``transform`` as the outermost one."""
        _check_transform(transform)
        transform.set_container(self)
        self.transforms.append(transform)
        self._transforms_changed()

    def insert(self, index: int, transform: Transform) -> None:
        """Insert ``transform`` at ``index`` (0: innermost)."""
        _check_transform(transform)
        if not -len(self.transforms) - 1 <= index <= len(self.transforms):
            raise IndexError(
                f"cannot insert at index {index} in a Compose of {len(self.transforms)} transforms"
            )
        transform.set_container(self)
        self.transforms.insert(index, transform)
        self._transforms_changed()

    def pop(self, index: int = -1) -> Transform:
        """Remove and return the transform at ``index`` (it loses its parent)."""
        transform = self.transforms.pop(index)
        transform.reset_parent()
        self._transforms_changed()
        return transform

    # ------------------------------------------------------------------ data
    @property
    def has_inverse(self) -> bool:
        return any(t.has_inverse for t in self.transforms)

    def _call(self, next_tensordict: TensorDictBase) -> TensorDictBase:
        for t in self.transforms:
            next_tensordict = t._call(next_tensordict)
        return next_tensordict

    def forward(self, tensordict: TensorDictBase) -> TensorDictBase:
        for t in self.transforms:
            tensordict = t.forward(tensordict)
        return tensordict

    __call__ = forward

    def _step(self, tensordict: TensorDictBase, next_tensordict: TensorDictBase) -> TensorDictBase:
        steps = self._steps
        if steps is None:
            steps = [t._step for t in self.transforms]
        for step in steps:
            next_tensordict = step(tensordict, next_tensordict)
        return next_tensordict

    @property
    def steps_nothing(self) -> bool:
        return all(t.steps_nothing for t in self.transforms)

    def _reset(
        self, tensordict: TensorDictBase, tensordict_reset: TensorDictBase
    ) -> TensorDictBase:
        for t in self.transforms:
            tensordict_reset = t._reset(tensordict, tensordict_reset)
        return tensordict_reset

    def _reset_env_preprocess(self, tensordict: TensorDictBase | None) -> TensorDictBase | None:
        for t in reversed(self.transforms):
            tensordict = t._reset_env_preprocess(tensordict)
        return tensordict

    def _base_reset_override(self, tensordict: TensorDictBase | None) -> TensorDictBase | None:
        for i, t in enumerate(self.transforms):
            out = t._base_reset_override(tensordict)
            if out is not None:
                if i:
                    raise HubError(
                        f"{type(t).__name__} replaces the base env's reset output, so it must be "
                        f"the first (innermost) transform; it is at position {i}."
                    )
                return out
        return None

    def _inv_call(self, tensordict: TensorDictBase) -> TensorDictBase:
        for t in reversed(self.transforms):
            tensordict = t.inv(tensordict)
        return tensordict

    def inv(self, tensordict: TensorDictBase) -> TensorDictBase:
        return self._inv_call(tensordict)

    # ------------------------------------------------------------------ specs
    def transform_output_spec(self, output_spec: Composite) -> Composite:
        for t in self.transforms:
            output_spec = t.transform_output_spec(output_spec)
        # the keys are resolved now: keep the step functions of the transforms that do something
        self._steps = [t._step for t in self.transforms if not t.steps_nothing]
        return output_spec

    def transform_input_spec(self, input_spec: Composite) -> Composite:
        for t in self.transforms:
            input_spec = t.transform_input_spec(input_spec)
        return input_spec

    def transform_observation_spec(self, observation_spec: Composite) -> Composite:
        for t in self.transforms:
            observation_spec = t.transform_observation_spec(observation_spec)
        return observation_spec

    def transform_reward_spec(self, reward_spec: Composite) -> Composite:
        for t in self.transforms:
            reward_spec = t.transform_reward_spec(reward_spec)
        return reward_spec

    def transform_done_spec(self, done_spec: Composite) -> Composite:
        for t in self.transforms:
            done_spec = t.transform_done_spec(done_spec)
        return done_spec

    def transform_action_spec(self, action_spec: Composite) -> Composite:
        for t in self.transforms:
            action_spec = t.transform_action_spec(action_spec)
        return action_spec

    def transform_state_spec(self, state_spec: Composite) -> Composite:
        for t in self.transforms:
            state_spec = t.transform_state_spec(state_spec)
        return state_spec

    # ------------------------------------------------------------------ parents
    def _env_before(self, transform: Transform) -> TransformedEnv | None:
        """A view of the env up to ``transform`` (one of this Compose's transforms)."""
        env = self.parent
        if env is None:
            return None
        for t in self.transforms:
            if t is transform:
                return env
            env.append_transform(t.clone())
        raise HubError(f"{type(transform).__name__} is not part of this Compose")

    @property
    def parent(self) -> TransformedEnv | None:
        # a fresh view each time: callers extend it with the transforms before one of ours
        if self._container is None:
            return None
        return self._container._env_before(self)

    def _transforms_changed(self) -> None:
        self._steps = None
        for t in self.transforms:
            t._forget_parent()
        if self._container is not None:
            self._container._transforms_changed()

    def _forget_parent(self) -> None:
        super()._forget_parent()
        for t in self.transforms:
            t._forget_parent()

    def clone(self) -> Compose:
        """A new Compose of clones of the transforms, without a parent."""
        return Compose(*[t.clone() for t in self.transforms])

    def _set_seed(self, seed: int | None) -> None:
        for t in self.transforms:
            t._set_seed(seed)

    def close(self) -> None:
        for t in self.transforms:
            t.close()

    def __repr__(self) -> str:
        if not self.transforms:
            return "Compose()"
        inner = ",\n".join("    " + repr(t).replace("\n", "\n    ") for t in self.transforms)
        return f"Compose(\n{inner})"


def _check_transform(transform: Any) -> None:
    if not isinstance(transform, Transform):
        raise TypeError(
            f"Compose takes hub transforms (subclasses of hub.transforms.Transform), got "
            f"{type(transform).__name__}. Write a Transform subclass that applies it."
        )
