"""``JaxRunner``: a batch of JAX envs, stepped by one jitted ``jax.vmap`` of their step.

The runner holds the jitted functions and the batch's state (each sub-env's PRNG key, the
library's env state, the current observations) and returns JAX arrays; the env class
(:class:`~hub_jax.env.JaxEnv`) hands them to hub, which reads them through DLPack without a copy.

Semantics, the same as every hub env:

* a step never resets: the step that ends an episode returns that episode's last observation,
  and the sub-env starts again only when it is reset (:meth:`JaxRunner.reset` with its row);
  stepping an ended sub-env before that is an error;
* seeding: :meth:`JaxRunner.seed` with ``s`` gives sub-env ``i`` the key
  ``jax.random.PRNGKey(s + i)`` (modulo ``2**32``); every reset and step of that sub-env splits
  its own key, so a batch of N equals N single envs seeded ``s``, ``s + 1``, ...;
* a step of every sub-env of a simulator with ``fuse_reset`` also computes the reset each sub-env
  would get next (as the library's own auto-resetting step does) and keeps it; the reset of
  exactly the sub-envs that ended then costs no second call. The keys it uses are the ones that
  reset would split, so the data is that of a step followed by a reset.

Example:
    >>> import numpy as np
    >>> from hub_jax.gymnax_family import gymnax_simulator
    >>> runner = JaxRunner(gymnax_simulator("CartPole-v1"), num_envs=3)
    >>> runner.seed(0)
    >>> sorted(runner.reset(None))
    ['observation', 'terminated', 'truncated']
    >>> out = runner.step(np.zeros(3, np.int32), None)
    >>> out["reward"].tolist(), out["terminated"].tolist()
    ([1.0, 1.0, 1.0], [False, False, False])
"""

from __future__ import annotations

import functools
import secrets
from typing import Any

import numpy as np

import hub
from hub_jax.simulator import Simulator

__all__ = ["JaxRunner"]

_SEEDS = 2**32


@functools.lru_cache(maxsize=64)
def _batched_functions(sim: Simulator) -> dict[str, Any]:
    """The jitted batch functions of ``sim`` (see :class:`JaxRunner`), shared by the runners of
    one simulator (JAX compiles them once per batch size)."""
    import jax
    import jax.numpy as jnp

    def strong(tree: Any) -> Any:
        """``tree`` without weak types: a reset's Python scalars (weakly typed) would give
        the step's input another type than its output, and a second compilation."""
        return jax.tree_util.tree_map(lambda x: jnp.asarray(x, dtype=jnp.result_type(x)), tree)

    vreset = jax.vmap(lambda key: strong(sim.reset(key)))
    vstep = jax.vmap(lambda key, state, action: strong(sim.step(key, state, action)))

    def split(keys: Any) -> tuple[Any, Any]:
        both = jax.vmap(jax.random.split)(keys)
        return both[:, 0], both[:, 1]

    def pick(mask: Any, new: Any, old: Any) -> Any:
        """``new`` in the rows of ``mask``, ``old`` elsewhere, leaf by leaf."""

        def one(a: Any, b: Any) -> Any:
            return jnp.where(mask.reshape(mask.shape + (1,) * (a.ndim - 1)), a, b)

        return jax.tree_util.tree_map(one, new, old)

    def blank(keys: Any) -> tuple:
        """Zeros of the shapes of a reset's state and observations (what the first reset,
        through ``reset_rows`` with every row, replaces)."""
        obs, state = jax.eval_shape(vreset, keys)
        zeros = jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype), (state, obs))
        return zeros

    def reset_rows(keys: Any, state: Any, obs: Any, mask: Any) -> tuple:
        new_keys, sub = split(keys)
        new_obs, new_state = vreset(sub)
        return pick(mask, new_keys, keys), pick(mask, new_state, state), pick(mask, new_obs, obs)

    def step_all(keys: Any, state: Any, action: Any) -> tuple:
        keys, sub = split(keys)
        obs, state, reward, terminated, truncated = vstep(sub, state, action)
        return keys, state, obs, reward, terminated, truncated

    def step_all_fused(keys: Any, state: Any, action: Any) -> tuple:
        keys, state, obs, reward, terminated, truncated = step_all(keys, state, action)
        done = terminated | truncated
        next_keys, sub = split(keys)
        first_obs, first_state = vreset(sub)
        prepared = (
            pick(done, next_keys, keys),
            pick(done, first_state, state),
            pick(done, first_obs, obs),
        )
        return (keys, state, obs, reward, terminated, truncated), prepared

    def step_rows(keys: Any, state: Any, obs: Any, action: Any, mask: Any) -> tuple:
        new_keys, new_state, new_obs, reward, terminated, truncated = step_all(keys, state, action)
        return (
            pick(mask, new_keys, keys),
            pick(mask, new_state, state),
            pick(mask, new_obs, obs),
            reward,
            terminated & mask,
            truncated & mask,
        )

    return {
        "blank": jax.jit(blank),
        "reset_rows": jax.jit(reset_rows),
        "step_all": jax.jit(step_all_fused if sim.fuse_reset else step_all),
        "step_rows": jax.jit(step_rows),
        "seed_keys": jax.jit(jax.vmap(jax.random.PRNGKey)),
    }


class JaxRunner:
    """Resets and steps ``num_envs`` copies of a :class:`~hub_jax.simulator.Simulator`.

    Args:
        sim: the env's functions and specs.
        num_envs: the number of sub-envs.

    Until :meth:`seed` is called, the sub-envs are seeded from the operating system's entropy.
    """

    def __init__(self, sim: Simulator, num_envs: int) -> None:
        if num_envs < 1:
            raise ValueError(f"num_envs must be at least 1, got {num_envs}.")
        self.sim = sim
        self.num_envs = int(num_envs)
        self.fns = _batched_functions(sim)
        self.state: Any = None
        self.obs: dict[str, Any] | None = None
        self.ended = np.zeros(self.num_envs, dtype=bool)
        self.all_rows = np.ones(self.num_envs, dtype=bool)
        self.terminated = np.zeros(self.num_envs, dtype=bool)
        self.truncated = np.zeros(self.num_envs, dtype=bool)
        self.prepared: tuple | None = None  # a fused step's resets of the sub-envs that ended
        self.prepared_rows: np.ndarray | None = None
        self.seed(None)

    # ------------------------------------------------------------------ seeding
    def seed(self, seed: int | None) -> None:
        """Give sub-env ``i`` the key ``PRNGKey((seed + i) % 2**32)`` (``None``: a seed drawn
        from the operating system). The next reset of each sub-env uses it."""

        if seed is None:
            seed = secrets.randbelow(_SEEDS)
        seeds = (int(seed) + np.arange(self.num_envs, dtype=np.uint64)) % _SEEDS
        self.keys = self.fns["seed_keys"](self._commit(seeds.astype(np.uint32)))
        self.prepared = None

    @staticmethod
    def _commit(tree: Any) -> Any:
        """``tree``'s arrays committed to the CPU, as every array the jitted functions return
        from committed inputs and every action that comes through DLPack: arrays that differ
        in that are compiled for anew."""
        import jax

        return jax.device_put(tree, jax.devices("cpu")[0])

    # ------------------------------------------------------------------ reset
    def reset(self, rows: np.ndarray | None, seed: int | None = None) -> dict[str, Any]:
        """Reset the sub-envs of ``rows`` (a bool array; ``None``: all) and return the
        observations of every sub-env and their ``terminated`` / ``truncated`` flags (those of
        the sub-envs not reset are kept)."""
        if seed is not None:
            self.seed(seed)
        fns = self.fns
        if self.state is None:
            self.state, self.obs = self._commit(fns["blank"](self.keys))
            rows = None
        if (
            rows is not None
            and self.prepared is not None
            and np.array_equal(rows, self.prepared_rows)
        ):
            self.keys, self.state, self.obs = self.prepared
        else:  # one compiled reset for all rows and some rows
            mask = self.all_rows if rows is None else rows
            self.keys, self.state, self.obs = fns["reset_rows"](
                self.keys, self.state, self.obs, mask
            )
        reset = slice(None) if rows is None else rows
        self.ended[reset] = False
        self.terminated[reset] = False
        self.truncated[reset] = False
        self.prepared = None
        out = dict(self.obs)
        out["terminated"] = self.terminated.copy()
        out["truncated"] = self.truncated.copy()
        return out

    # ------------------------------------------------------------------ step
    def step(self, action: Any, rows: np.ndarray | None) -> dict[str, Any]:
        """Step the sub-envs of ``rows`` (``None``: all) with ``action`` (one row per sub-env,
        a JAX array of the library's action dtype); return the observations, ``reward``,
        ``terminated`` and ``truncated`` of every sub-env (the rows not stepped are
        meaningless)."""
        if self.state is None:
            raise hub.errors.HubError(f"{self.sim.name}: reset the env before stepping it.")
        stepped = self.ended if rows is None else self.ended & rows
        if stepped.any():
            raise hub.errors.HubError(
                f"{self.sim.name}: sub-envs {np.flatnonzero(stepped).tolist()[:16]} ended their "
                "episode and were not reset; reset them first (env.reset(td) with '_reset' set "
                "for them; step_and_maybe_reset and rollout do it)."
            )
        fns = self.fns
        if rows is None:
            out = fns["step_all"](self.keys, self.state, action)
            if self.sim.fuse_reset:
                out, self.prepared = out
            self.keys, self.state, obs, reward, terminated, truncated = out
        else:
            self.prepared = None
            self.keys, self.state, obs, reward, terminated, truncated = fns["step_rows"](
                self.keys, self.state, self.obs, action, rows
            )
        self.obs = obs
        term, trunc = np.array(terminated), np.array(truncated)
        if rows is not None:  # the rows not stepped keep their flags
            term = np.where(rows, term, self.terminated)
            trunc = np.where(rows, trunc, self.truncated)
        self.terminated, self.truncated = term, trunc
        ended = term | trunc
        self.ended |= ended
        if self.prepared is not None:
            self.prepared_rows = ended
        result = dict(obs)
        result["reward"] = reward
        result["terminated"] = terminated
        result["truncated"] = truncated
        return result
