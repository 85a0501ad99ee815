"""The dm_control plugin passes hub's conformance kit (``hub.testing``) on a sample task."""

import pytest


@pytest.mark.hub_conformance("dm_control", envs=["dm_control:cartpole/balance"])
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()
