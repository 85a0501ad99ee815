"""The JAX plugin passes hub's conformance kit (``hub.testing``), natively batched partial
resets included.

``make test`` checks a sample: one env of each kind of gymnax env (classic control, discrete and
continuous, MinAtar, bsuite), Brax's small ``fast`` env and Jumanji's Game2048.
``HUB_JAX_CONFORMANCE=all`` (the tox env ``jax``) checks every id ``hub envs gymnax``,
``hub envs craftax`` and ``hub envs jumanji`` list, and Brax's ``fast`` and ``ant`` (each Brax env compiles for about a minute on a CPU, in every worker of the
parallel check)."""

import importlib.util
import os

import pytest

pytest.importorskip("gymnax")

HAS_BRAX = importlib.util.find_spec("brax") is not None
HAS_JUMANJI = importlib.util.find_spec("jumanji") is not None
SAMPLE = [
    "gymnax:CartPole-v1",
    "gymnax:Pendulum-v1",
    "gymnax:Breakout-MinAtar",
    "gymnax:Catch-bsuite",
    *(["brax:fast"] if HAS_BRAX else []),
    *(["jumanji:Game2048-v1"] if HAS_JUMANJI else []),
]


def _envs() -> list[str]:
    if os.environ.get("HUB_JAX_CONFORMANCE") != "all":
        return SAMPLE
    from hub_jax.gymnax_family import craftax_ids, gymnax_ids
    from hub_jax.jumanji_family import jumanji_ids

    has_craftax = importlib.util.find_spec("craftax") is not None
    return [
        *(f"gymnax:{name}" for name in gymnax_ids()),
        *(f"craftax:{name}" for name in craftax_ids() if has_craftax),
        *(f"jumanji:{name}" for name in (jumanji_ids() if HAS_JUMANJI else [])),
        *(["brax:fast", "brax:ant"] if HAS_BRAX else []),
    ]


@pytest.mark.timeout(3600)  # "dispatch" builds every env; Craftax and Brax compile for minutes
@pytest.mark.hub_conformance("jax", envs=_envs())
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()
