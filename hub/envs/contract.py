"""The subclass contract of :class:`~hub.EnvBase`: the hooks a backend writes, as code.

An env class writes its step and its reset once, at one of two levels:

* the **array level** (what every plugin of hub writes): :meth:`EnvHooks._step_arrays` and
  :meth:`EnvHooks._reset_arrays` take and return plain arrays keyed by the env's leaf keys, so
  that hub's step pipeline, its batched envs (one sub-env's row at a time, with no tensordict
  per sub-env) and its worker processes (straight into shared memory) all call the same code;
* the **tensordict level**: :meth:`EnvHooks._step` and :meth:`EnvHooks._reset` read and
  write tensordicts, for an env that works on tensordicts itself (a ``TransformedEnv``, or a
  short env written by hand, as in TorchRL).

Everything else (checks, partial steps and resets, done flags, auto-reset, the fused
``step_and_maybe_reset``, ``rollout``) is hub's step pipeline (:mod:`hub.envs.pipeline`); a
backend never overrides it. :func:`contract_hooks` lists the hooks of the classes a backend
subclasses (docs/plugins.md renders the table from it, and hub's tests check that the built-in
plugins override nothing else).

Example:
    >>> [hook.name for hook in contract_hooks(EnvHooks)][:2]
    ['_step_arrays', '_reset_arrays']
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from hub.errors import NoFramesError
from hub.media.frames import no_frames_message
from hub.specs import NestedKey

__all__ = ["EnvHooks", "Hook", "hook", "contract_hooks", "attribute_hooks", "writes_arrays"]


@dataclass(frozen=True)
class Hook:
    """One entry of the subclass contract.

    Attributes:
        name: the method or attribute name.
        owner: the class that declares it (``"EnvBase"``, ``"EnvWrapper"``, ``"GymLikeEnv"``).
        required: ``"yes"``, ``"no"``, or which alternative (``"this or _step"``).
        called: when hub calls (or reads) it.
        contract: what it may assume and what it must do.
    """

    name: str
    owner: str
    required: str
    called: str
    contract: str


def hook(required: str, called: str, contract: str) -> Any:
    """Mark a method (or a property) as a hook of the subclass contract.

    Example:
        >>> class Base:
        ...     @hook("no", "once", "nothing")
        ...     def _warm_up(self):
        ...         pass
        >>> Base._warm_up.__hub_hook__
        ('no', 'once', 'nothing')
    """

    def mark(fn: Any) -> Any:
        target = fn.fget if isinstance(fn, property) else fn
        target.__hub_hook__ = (required, called, contract)
        return fn

    return mark


def contract_hooks(*classes: type) -> list[Hook]:
    """The hooks that ``classes`` declare (in their own bodies, in source order).

    Example:
        >>> "_step" in [h.name for h in contract_hooks(EnvHooks)]
        True
    """
    hooks: list[Hook] = []
    for cls in classes:
        for name, value in vars(cls).items():
            target = value.fget if isinstance(value, property) else value
            mark = getattr(target, "__hub_hook__", None)
            if mark is not None:
                hooks.append(Hook(name, _public_owner(cls), *mark))
    return hooks


def _public_owner(cls: type) -> str:
    return "EnvBase" if cls is EnvHooks else cls.__name__


def writes_arrays(cls: type) -> bool:
    """Whether ``cls`` writes its step at the array level (``_step_arrays``) rather than at the
    tensordict level (``_step``): the one it defines last in its method resolution order.

    Example:
        >>> from hub.envs.builtin import CountingEnv
        >>> writes_arrays(CountingEnv)
        True
    """
    for klass in cls.__mro__:
        if klass is EnvHooks:
            break
        own = vars(klass)
        if "_step_arrays" in own:
            return True
        if "_step" in own:
            return False
    return True


class EnvHooks:
    """The hooks of :class:`~hub.EnvBase` that a backend writes (see the module docstring).

    Class attributes:
        batch_locked: ``False`` when the env accepts inputs of any batch size (the env's batch
            dims then come after the input's extra leading dims).
        masks_partial_resets: ``True`` when the reset hook itself keeps the input's values in
            the rows it does not reset, so that hub does not merge them again.
    """

    batch_locked: bool = True
    masks_partial_resets: bool = False

    @hook(
        "this or _step",
        "by the step pipeline (step, step_and_maybe_reset, rollout) and by batched envs, "
        "with the inputs and the rows to step",
        "inputs[key] is each action and state entry, checked (shape, dtype, discrete values; "
        "bounds with checks=True), a numpy array on the CPU (a tensor on other devices); rows "
        "is None (all) or a bool array of the batch shape. Return a dict from output leaf keys "
        "(observations, rewards, terminated/truncated or done) to arrays of the specs' dtypes "
        "and shapes (numpy arrays, tensors, DLPack arrays, or scalars for one-element entries); "
        "hub keeps them without a copy",
    )
    def _step_arrays(
        self, inputs: Mapping[NestedKey, Any], rows: Any = None
    ) -> Mapping[NestedKey, Any]:
        """Step the backend (see :func:`hook`'s text in :func:`contract_hooks`).

        The default runs the tensordict-level :meth:`_step`.
        """
        raise NotImplementedError(
            f"{type(self).__name__} must implement _step_arrays(inputs, rows) (or _step)."
        )

    @hook(
        "this or _reset",
        "by reset(), step_and_maybe_reset and rollout, with the rows to reset, the partial "
        "reset's input and the reset's options",
        "rows is None (all) or a bool array of the batch shape; inputs is None or the input "
        "tensordict (nested done levels find their masks under prefix + ('_reset',)); return "
        "the whole batch's observation (and state) entries as _step_arrays returns its "
        "output; done flags may be left out (False). Rows outside rows are replaced by the "
        "input's values unless masks_partial_resets is True",
    )
    def _reset_arrays(
        self, rows: Any = None, inputs: Any = None, **kwargs: Any
    ) -> Mapping[NestedKey, Any]:
        """Reset the backend (see :func:`contract_hooks`)."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement _reset_arrays(rows, inputs) (or _reset)."
        )

    @hook(
        "no",
        "by step_and_maybe_reset and rollout, instead of _step_arrays then _reset_arrays",
        "step as _step_arrays does, then reset the sub-envs whose episode ended in this step "
        "(those with terminated or truncated); return (step output, reset output): the reset "
        "output holds the whole batch's observation (and state) entries, the first "
        "observations where an episode ended and the step's values in the other rows "
        "(hub.envs.arrays.rows_over builds it from a partial reset), or None when no episode "
        "ended (with rows given, None may also leave the resets to hub, through "
        "_reset_arrays). Write it when the backend can do both in one pass (a batched env's "
        "loop, a worker process, one call into native code); the default steps and leaves the "
        "resets to hub",
    )
    def _step_reset_arrays(
        self, inputs: Mapping[NestedKey, Any], rows: Any = None
    ) -> tuple[Mapping[NestedKey, Any], Mapping[NestedKey, Any] | None]:
        """Step, then reset the sub-envs that ended (see :func:`contract_hooks`).

        The default is the step pipeline's (:mod:`hub.envs.pipeline`): ``_step_arrays``, and
        ``None`` for the reset, which hub then makes through ``_reset_arrays``.
        """
        raise NotImplementedError  # EnvBase's pipeline gives the default

    @hook(
        "no",
        "once, when a SerialEnv (also a ParallelEnv or Ray worker's) is built and every "
        "sub-env is of this class; its steps of every sub-env then call run (not with a "
        "timeout, nor for partial steps); a classmethod",
        "envs are the sub-envs (open, one class, the same specs); return None (the default: "
        "each env steps through its own hooks) or run(inputs, reset_ended) -> (out, firsts): "
        "inputs as _step_arrays gets them for the whole group (row i is env i's); out maps "
        "each output leaf key to one value per env (a list, or an array with the env dim "
        "first); firsts is None or one reset output per env (None where it did not reset), "
        "reset only when reset_ended. The data must equal the envs' own hooks'. run may "
        "return None, before stepping any env, to leave that step to the envs' own hooks; "
        "an error raised in run leaves the batch's state unknown (it must be reset)",
    )
    @classmethod
    def _group_stepper(cls, envs: Sequence[Any]) -> Callable[..., Any] | None:
        """A function that steps many envs of this class at once (see
        :func:`contract_hooks`); ``None`` by default."""
        return None

    @hook(
        "this or _step_arrays",
        "instead of _step_arrays, by an env that works on tensordicts itself",
        "tensordict holds the checked actions (and state entries; a '_step' mask when only some "
        "rows step); return the next data (not under 'next'): observations, rewards, "
        "terminated/truncated or done",
    )
    def _step(self, tensordict: Any) -> Any:
        """Step at the tensordict level (for envs that do not write :meth:`_step_arrays`)."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement _step_arrays(inputs, rows) (or _step)."
        )

    @hook(
        "this or _reset_arrays",
        "instead of _reset_arrays, by an env that works on tensordicts itself",
        "tensordict is None or holds '_reset' masks (root, or per group); return the first "
        "observations (and state entries) of the batch; done flags may be left out",
    )
    def _reset(self, tensordict: Any, **kwargs: Any) -> Any:
        """Reset at the tensordict level (for envs that do not write :meth:`_reset_arrays`)."""
        raise NotImplementedError(
            f"{type(self).__name__} must implement _reset_arrays(rows, inputs) (or _reset)."
        )

    @hook(
        "yes",
        "by set_seed(seed), with an int in [0, 2**32) or None",
        "seed every source of randomness of the backend (None: unpredictable); set_seed "
        "returns the next seed itself",
    )
    def _set_seed(self, seed: int | None) -> None:
        """Seed the backend."""
        raise NotImplementedError(f"{type(self).__name__} must implement _set_seed(seed).")

    @hook(
        "no",
        "once, by close() (also from the context manager's exit)",
        "release the backend's resources; afterwards every use of the env raises ClosedEnvError",
    )
    def _close(self) -> None:
        """Release the env's resources (nothing by default)."""

    @hook(
        "no",
        "by recorders, hub rollout --record and the exports' render()",
        "return the current RGB frames: uint8 [*batch_size, H, W, 3]; raise NoFramesError "
        "(saying what to pass, e.g. render_mode='rgb_array') when made without rendering",
    )
    def render_frames(self, tensordict: Any = None) -> Any:
        """The env's current RGB frames, for a person to watch: a ``uint8`` numpy array of
        shape ``[*batch_size, H, W, 3]`` (``[H, W, 3]`` for an env of batch size ``[]``).

        ``tensordict`` is the env's current data (what its last ``reset`` or ``step`` gave);
        a stateless env draws from it, others may ignore it. ``VideoRecorder``,
        ``PixelRenderTransform``, ``hub rollout --record`` and the exports' ``render()`` all
        call this method. Envs that render override it: the gym and gymnasium plugins' (made
        with ``render_mode="rgb_array"``), EnvPool's (>= 1.0, same), dm_control's and
        ``hub:Pendulum``; ``SerialEnv`` / ``ParallelEnv`` stack their sub-envs' frames and a
        ``TransformedEnv`` gives its base env's.

        Raises:
            NoFramesError: this env does not render (the default), with how to get frames.

        Example:
            >>> import hub
            >>> hub.make_env("hub:Counting").render_frames()
            Traceback (most recent call last):
            ...
            hub.errors.NoFramesError: CountingEnv gives no frames: its class does not render. ...
        """
        raise NoFramesError(no_frames_message(type(self).__name__, "its class does not render"))


_ATTRIBUTES = [
    Hook(
        "batch_locked",
        "EnvBase",
        "no",
        "read by the pipeline",
        "False when the env accepts inputs of any batch size",
    ),
    Hook(
        "masks_partial_resets",
        "EnvBase",
        "no",
        "read by the pipeline after a partial reset",
        "True when the reset hook keeps the input's values in the rows it does not reset",
    ),
]


def attribute_hooks() -> list[Hook]:
    """The class attributes of the contract, as :class:`Hook` entries."""
    return list(_ATTRIBUTES)
