"""The gym plugin passes hub's conformance kit (``hub.testing``) on a sample of gymnasium ids:
a discrete and a continuous classic-control env."""

import pytest


@pytest.mark.hub_conformance("gym", envs=["gymnasium:CartPole-v1", "gymnasium:Pendulum-v1"])
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()
