"""The gym plugin passes hub's conformance kit (``hub.testing``) on a sample of ids: CartPole
(discrete) in each installed backend and Pendulum (continuous) in the first."""

import pytest

from tests.plugins.hub_gym.gym_helpers import BACKENDS, NO_BACKEND

SAMPLE = [f"{backend}:CartPole-v1" for backend in BACKENDS] + [
    f"{backend}:Pendulum-v1" for backend in BACKENDS[:1]
]


@pytest.mark.skipif(not BACKENDS, reason=NO_BACKEND)
@pytest.mark.hub_conformance("gym", envs=SAMPLE)
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()
