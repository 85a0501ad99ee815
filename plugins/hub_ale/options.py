"""The options of an ``ale:`` env: EnvPool's Atari names and defaults, read into the arguments of
ale-py's ``AtariVectorEnv``.

``ale:Pong-v5`` takes the options ``envpool:Pong-v5`` takes, with EnvPool's defaults (which
differ from ``AtariVectorEnv``'s: no reward clipping, and the episode limit counted in agent
steps), so that the same arguments give the same preprocessing on either backend. ale-py's own
names (``grayscale``, ``frameskip``, ``reward_clipping``, ``maxpool``, ...) are accepted too.

======================================  =========================================  =========
EnvPool option (hub's name)             ``AtariVectorEnv`` argument                default
======================================  =========================================  =========
``img_height``, ``img_width``           the same                                   84, 84
``stack_num``                           the same                                   4
``gray_scale``                          ``grayscale``                              True
``frame_skip``                          ``frameskip``                              4
``noop_max``                            the same                                   30
``episodic_life``                       the same                                   False
``reward_clip``                         ``reward_clipping``                        False
``repeat_action_probability``           the same                                   0.0
``use_fire_reset``                      the same                                   True
``full_action_space``                   the same                                   False
``max_episode_steps`` (agent steps)     ``max_num_frames_per_episode`` (frames)    27000
``num_threads``                         the same                                   one per CPU, up to ``num_envs``
======================================  =========================================  =========

Example:
    >>> args = vector_env_kwargs({"reward_clip": True, "frame_skip": 2})
    >>> args["reward_clipping"], args["frameskip"], args["max_num_frames_per_episode"]
    (True, 2, 54000)
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["ENVPOOL_NAMES", "DEFAULTS", "UNSUPPORTED", "vector_env_kwargs", "default_threads"]

#: EnvPool's option name -> ale-py's argument name
ENVPOOL_NAMES = {
    "gray_scale": "grayscale",
    "frame_skip": "frameskip",
    "reward_clip": "reward_clipping",
}

#: EnvPool's defaults for its Atari tasks, in ale-py's names (``max_episode_steps`` apart)
DEFAULTS = {
    "img_height": 84,
    "img_width": 84,
    "stack_num": 4,
    "grayscale": True,
    "frameskip": 4,
    "noop_max": 30,
    "episodic_life": False,
    "reward_clipping": False,
    "repeat_action_probability": 0.0,
    "use_fire_reset": True,
    "full_action_space": False,
    "maxpool": True,
}

MAX_EPISODE_STEPS = 27000

#: EnvPool options that ale-py's vector env cannot honour, with what to do instead
UNSUPPORTED = {
    "zero_discount_on_life_loss": "use episodic_life=True, which ends the episode on a life loss",
    "use_inter_area_resize": "ale-py resizes frames its own way; it has no such choice",
    "batch_size": "hub's ale: envs step every sub-env at once (use envpool: for async batches)",
    "continuous": "hub's ale: envs have discrete actions",
    "autoreset_mode": "hub resets ended sub-envs itself (see docs/backends.md)",
}

_ALE_NAMES = {
    *DEFAULTS,
    "num_threads",
    "thread_affinity_offset",
    "life_loss_info",
    "max_num_frames_per_episode",
}


def vector_env_kwargs(options: dict[str, Any]) -> dict[str, Any]:
    """``AtariVectorEnv``'s keyword arguments for the options of an ``ale:`` env.

    Raises:
        TypeError: an option neither EnvPool nor ale-py knows, or one ale-py cannot honour.
    """
    kwargs = dict(DEFAULTS)
    steps = None
    for name, value in options.items():
        if name in UNSUPPORTED:
            raise TypeError(f"ale: envs do not take {name!r}: {UNSUPPORTED[name]}.")
        if name == "max_episode_steps":
            steps = int(value)
            continue
        name = ENVPOOL_NAMES.get(name, name)
        if name not in _ALE_NAMES:
            known = sorted(
                {*ENVPOOL_NAMES, *_ALE_NAMES, "max_episode_steps"} - set(ENVPOOL_NAMES.values())
            )
            raise TypeError(
                f"ale: envs take no option {name!r}; the options are {', '.join(known)}."
            )
        kwargs[name] = value
    if "max_num_frames_per_episode" not in kwargs:
        limit = MAX_EPISODE_STEPS if steps is None else steps
        kwargs["max_num_frames_per_episode"] = limit * int(kwargs["frameskip"])
    elif steps is not None:
        raise TypeError("give max_episode_steps or max_num_frames_per_episode, not both.")
    return kwargs


def default_threads(num_envs: int) -> int:
    """One thread per CPU this process may run on, up to ``num_envs`` (EnvPool's rule in hub).

    Example:
        >>> default_threads(1)
        1
    """
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(cpus, num_envs))
