"""Shared helpers of the hub_gym tests: installed backends and checks of CartPole data."""

from __future__ import annotations

import os

import pytest
import torch
from packaging.version import Version

import hub
from hub.dispatch import is_installed, module_version

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")

BACKENDS = [b for b in ("gymnasium", "gym") if is_installed(b)]
NO_BACKEND = "neither gymnasium nor gym is installed (the 'minimal' tox env)"


def version(backend: str) -> Version:
    return Version(str(module_version(backend)))


def backend_params() -> list:
    """One pytest param per installed backend (a single skipped param when there is none)."""
    if not BACKENDS:
        return [pytest.param(None, marks=pytest.mark.skip(reason=NO_BACKEND))]
    return BACKENDS


def make(backend: str, env_id: str, **kwargs):
    return hub.make_env(f"{backend}:{env_id}", **kwargs)


def assert_real_cartpole_data(data) -> None:
    """CartPole data holds only real transitions: every step pays 1 (a phantom reset step pays
    0), consecutive steps chain, episode ends carry the true last observation, and the step
    after an end starts from a first observation."""
    obs, nxt = data["observation"], data["next", "observation"]
    done = data["next", "done"].squeeze(-1)
    terminated = data["next", "terminated"].squeeze(-1)
    assert bool((data["next", "reward"] == 1).all()), "a step paid something else than 1"
    chained = ~done[..., :-1]
    assert torch.equal(nxt[..., :-1, :][chained], obs[..., 1:, :][chained])
    last = nxt[terminated]
    assert last.shape[0] > 0, "no episode ended: run longer"
    outside = (last[:, 0].abs() > 2.4) | (last[:, 2].abs() > 0.2095)
    assert bool(outside.all()), f"a terminal observation is inside the bounds: {last[~outside]}"
    starts = obs[..., 1:, :][done[..., :-1]]
    assert bool((starts.abs() <= 0.05).all()), "a step after an episode end is not a first step"


def raw_make_kwargs(backend: str) -> dict:
    """What hub adds to ``make`` for this backend version (``disable_env_checker`` on numpy 2)."""
    from hub_gym.compat import resolve_compat

    return resolve_compat(backend).default_make_kwargs()
