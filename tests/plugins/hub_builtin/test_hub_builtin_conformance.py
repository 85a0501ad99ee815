"""The built-in ``hub:`` plugin passes hub's conformance kit (``hub.testing``)."""

import pytest


@pytest.mark.hub_conformance("hub", envs=["hub:Counting", "hub:MultiAgentCounting"])
def test_conformance(hub_conformance_case):
    hub_conformance_case.run()
