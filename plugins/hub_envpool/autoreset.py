"""Normalising EnvPool's next-step autoreset to hub's semantic.

EnvPool resets a finished env on the *next* step sent to it: that step's action is dropped and
its output is the new episode's first observation with reward 0 and ``done`` False. Passed on
as it is, that would be a transition whose action was ignored. hub never exposes it:

* sync mode: the step that ends an episode returns its true last observation. The env is then
  *pending*: hub resets it when asked (``reset`` with ``"_reset"``, which
  ``step_and_maybe_reset`` and ``rollout`` do), by sending exactly those env ids a step, which
  EnvPool answers by restarting them as its own autoreset does (:func:`restart_mask`); the
  next step then acts normally. Stepping a pending env is an error, as in every hub env.
  :class:`PendingResets` keeps the books.
* async mode (``step_send`` / ``step_fetch``): sending anything to a finished env resets it, so
  its next row is the first observation of a new episode. :class:`AsyncBook` marks such rows
  ``is_init`` (a reset output, not a transition), and refuses the calls that would make EnvPool
  wait forever or send twice to one env.

Example:
    >>> import numpy as np
    >>> pending = PendingResets(3)
    >>> pending.clear(None)  # the first full reset
    >>> pending.mark(np.array([False, True, False]))
    >>> pending.ids().tolist()
    [1]
"""

from __future__ import annotations

import numpy as np

import hub
from hub.batching import AsyncCallError

__all__ = ["PendingResets", "AsyncBook", "restart_mask"]


def restart_mask(
    pending: PendingResets, ids: np.ndarray, last_action: np.ndarray | None
) -> np.ndarray:
    """Which envs of ``ids`` ended an episode that EnvPool will restart itself when sent a step
    (its own autoreset; the action is ignored): those marked pending by a step since the last
    full reset. The others (never started, or reset in the middle of an episode) need EnvPool's
    ``reset``.

    Example:
        >>> pending = PendingResets(3)
        >>> pending.clear(None)
        >>> pending.mark(np.array([False, True, False]))
        >>> restart_mask(pending, np.array([1, 2]), np.zeros(3)).tolist()
        [True, False]
    """
    if last_action is None or not pending.started:
        return np.zeros(len(ids), dtype=bool)
    return pending.mask[ids].copy()


class PendingResets:
    """Which envs ended an episode (or never started one) and wait for hub to reset them.

    Example:
        >>> pending = PendingResets(2)
        >>> pending.check_step(None)
        Traceback (most recent call last):
        ...
        hub.errors.HubError: the env was never reset: call env.reset() before env.step().
    """

    def __init__(self, num_envs: int) -> None:
        self.mask = np.ones(num_envs, dtype=bool)
        self.any = True
        self.started = False

    def mark(self, done: np.ndarray) -> None:
        """Record the envs whose episode ended at this step (``done`` has one flag per env)."""
        self.mask |= done
        self.any = True

    def clear(self, ids: np.ndarray | None) -> None:
        """Forget the envs ``ids`` (``None``: all) after hub reset them."""
        if ids is None:
            self.mask[:] = False
            self.started = True
        else:
            self.mask[ids] = False
        self.any = bool(self.mask.any())

    def ids(self) -> np.ndarray:
        """The pending env ids."""
        return np.flatnonzero(self.mask)

    def check_step(self, stepped: np.ndarray | None) -> None:
        """Raise if a pending env is about to be stepped (``stepped``: a mask; ``None``: all)."""
        if not self.started:
            raise hub.errors.HubError(
                "the env was never reset: call env.reset() before env.step()."
            )
        hit = self.mask if stepped is None else self.mask & stepped
        if hit.any():
            raise hub.errors.HubError(
                f"sub-envs {np.flatnonzero(hit).tolist()} ended their episode and were not "
                "reset: stepping them would make a transition across two episodes (EnvPool "
                "would drop the action and restart them). Reset them first: use "
                "env.step_and_maybe_reset(td) or env.rollout(...), or call env.reset(td) with "
                "td['_reset'] set to the 'done' flags."
            )


class AsyncBook:
    """The state of EnvPool's async mode: which envs are out, and whose next row starts an
    episode.

    Example:
        >>> book = AsyncBook(num_envs=4, batch_size=2)
        >>> book.reset_all()
        >>> book.fetched(np.array([0, 1]), np.array([False, True])).tolist()  # rows of a reset
        [True, True]
        >>> book.sent(np.array([0, 1]))
        >>> book.fetched(np.array([1, 2]), np.array([False, False])).tolist()  # 1 had ended
        [True, True]
    """

    def __init__(self, num_envs: int, batch_size: int) -> None:
        self.num_envs = num_envs
        self.batch_size = batch_size
        self.fresh = np.ones(num_envs, dtype=bool)  # the env's next row is a reset output
        self.out = np.zeros(num_envs, dtype=bool)  # the env has a call under way in EnvPool
        self.started = False

    def reset_all(self) -> None:
        """Every env was asked to reset: each one's next row starts an episode."""
        self.fresh[:] = True
        self.out[:] = True
        self.started = True

    def sent(self, env_ids: np.ndarray) -> None:
        """Check and record a send to ``env_ids``."""
        if not self.started:
            raise AsyncCallError("step_send() before reset(): call env.reset() first.")
        if np.unique(env_ids).size != env_ids.size:
            raise AsyncCallError(
                f"step_send() got the env ids {env_ids.tolist()}, with repeats; send at most "
                "one action per env."
            )
        busy = self.out[env_ids]
        if busy.any():
            raise AsyncCallError(
                f"step_send() to envs {env_ids[busy].tolist()}, which have a step under way: "
                "send to the env ids of the last step_fetch() (its 'env_id' entry) only."
            )
        self.out[env_ids] = True

    def check_fetch(self) -> None:
        """Refuse a fetch that would wait forever (fewer envs under way than a batch)."""
        if not self.started:
            raise AsyncCallError("step_fetch() before reset(): call env.reset() first.")
        under_way = int(self.out.sum())
        if under_way < self.batch_size:
            raise AsyncCallError(
                f"step_fetch() would wait forever: {under_way} envs have a step under way and a "
                f"fetch returns {self.batch_size}. Call step_send() with the last fetch's data "
                "first."
            )

    def fetched(self, env_ids: np.ndarray, done: np.ndarray) -> np.ndarray:
        """Record the rows of a fetch; returns which of them start an episode (``is_init``)."""
        is_init = self.fresh[env_ids]
        self.fresh[env_ids] = done
        self.out[env_ids] = False
        return is_init
