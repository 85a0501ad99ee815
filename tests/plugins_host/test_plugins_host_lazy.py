"""Loading is lazy: ``import hub`` and the plugin API import no plugin and no backend."""

from __future__ import annotations

import json

BACKENDS = ("gym", "gymnasium", "envpool", "dm_control", "dm_env", "mujoco")

IMPORTS = """
import json, sys
import hub
after_hub = sorted(sys.modules)
import hub.plugins, hub.registry
hub.hookimpl, hub.Namespace, hub.SpecConversion, hub.register_spec_conversion
after_api = sorted(sys.modules)
print(json.dumps({"hub": after_hub, "api": after_api}))
"""


def test_importing_hub_and_its_plugin_api_loads_no_plugin_or_backend(run_python):
    out = json.loads(run_python(IMPORTS).stdout)
    for stage in ("hub", "api"):
        loaded = out[stage]
        tops = {name.split(".")[0] for name in loaded}
        assert not tops & set(BACKENDS), stage
        assert not [name for name in loaded if name.startswith("hub_")], stage  # no plugin
        assert "torch" not in tops, stage  # the plugin API is cheap to import
    assert "hub.plugins" not in out["hub"]


FAMILY_PLUGIN = """
import hub
from hub.dispatch import BackendFamily

@hub.hookimpl
def hub_backends():
    return [BackendFamily("hubtest-family", ("json", "csv"))]
"""

ASK_FAMILY = """
import sys
import hub
from hub.dispatch import get_backend_family
from hub.errors import BackendError
try:
    get_backend_family("hubtest-family")  # dispatch does not call up into the plugin system
except BackendError:
    print("unknown before loading", "hubtest_family" in sys.modules)
hub.list_plugins()  # the plugin manager pushes the families it loads down into dispatch
print(get_backend_family("hubtest-family").candidates, "hubtest_family" in sys.modules)
"""


def test_plugin_families_arrive_when_the_plugins_load(tmp_path, run_python):
    site = tmp_path / "site"
    (site / "hubtest_family").mkdir(parents=True)
    (site / "hubtest_family" / "__init__.py").write_text("")
    (site / "hubtest_family" / "plugin.py").write_text(FAMILY_PLUGIN)
    info = site / "hubtest_family-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: hubtest-family\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text("[hub.plugins]\nfamily = hubtest_family.plugin\n")
    result = run_python(ASK_FAMILY, path=[site])
    assert result.stdout.split("\n")[:2] == ["unknown before loading False", "('json', 'csv') True"]
