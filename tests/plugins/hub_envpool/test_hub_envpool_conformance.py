"""The EnvPool plugin passes hub's conformance kit (``hub.testing``) on a sample id, natively
batched partial resets included."""

import pytest


@pytest.mark.hub_conformance("envpool", envs=["envpool:CartPole-v1"])
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()
