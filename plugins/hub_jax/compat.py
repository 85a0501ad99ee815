"""What differs between versions of the JAX libraries, one :func:`hub.implement_for` function each.

* :func:`gymnax_broken_ids`: gymnax before 1.0 builds ``SimpleBandit-bsuite``'s state with its
  fields out of order (its first step fails with an ``IndexError``); 1.0 fixed it.
* :func:`gymnax_transition`: gymnax before 1.0 returns one ``done`` flag from ``step_env``, the
  time limit included (its envs count ``state.time`` against ``params.max_steps_in_episode``);
  from 1.0 on ``step_env`` returns ``terminated`` and the time limit is
  ``env.is_truncated(state, params)``. Both give hub ``terminated`` and ``truncated`` apart.

Example:
    >>> gymnax_transition.implementations[0].range
    '<1.0'
"""

from __future__ import annotations

from typing import Any

import hub

__all__ = ["gymnax_transition", "gymnax_broken_ids"]

_NO_LIMIT = 2**30  # a time limit no episode reaches


@hub.implement_for("gymnax", None, "1.0")
def gymnax_transition(env: Any, params: Any, key: Any, state: Any, action: Any) -> tuple:
    """gymnax < 1.0: ``step_env``'s ``done`` holds the time limit. An ending step is terminated
    when ``env.is_terminal`` holds without the time limit (``max_steps_in_episode`` lifted),
    else truncated."""
    import jax.numpy as jnp

    obs, state, reward, done, _ = env.step_env(key, state, action, params)
    done = jnp.asarray(done, dtype=bool)
    if hasattr(params, "max_steps_in_episode"):
        natural = env.is_terminal(state, params.replace(max_steps_in_episode=_NO_LIMIT))
        terminated = done & jnp.asarray(natural, dtype=bool)
    else:
        terminated = done
    return obs, state, reward, terminated, done & ~terminated


@gymnax_transition.register(from_version="1.0")
def _(env: Any, params: Any, key: Any, state: Any, action: Any) -> tuple:
    """gymnax >= 1.0: ``step_env`` returns ``terminated``; ``is_truncated`` is the time limit."""
    import jax.numpy as jnp

    obs, state, reward, terminated, _ = env.step_env(key, state, action, params)
    truncated = jnp.asarray(env.is_truncated(state, params), dtype=bool)
    return obs, state, reward, jnp.asarray(terminated, dtype=bool), truncated


@hub.implement_for("gymnax", None, "1.0")
def gymnax_broken_ids() -> dict[str, str]:
    """gymnax < 1.0: the ids whose env cannot step, with the reason."""
    return {
        "SimpleBandit-bsuite": "gymnax < 1.0 builds its state with the fields out of order, so "
        "its first step fails (IndexError); gymnax 1.0 fixed it"
    }


@gymnax_broken_ids.register(from_version="1.0")
def _() -> dict[str, str]:
    """gymnax >= 1.0: none."""
    return {}
