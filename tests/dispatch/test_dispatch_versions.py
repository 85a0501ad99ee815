"""Version lookup: __version__ of imported modules, else distribution metadata, never an import."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from packaging.version import Version

from hub.dispatch import clear_version_cache, is_installed, module_version, versions
from hub.dispatch.versions import (
    VersionRangeError,
    distribution_name,
    parse_version,
    version_and_source,
)
from hub.errors import HubError

ROOT = Path(__file__).resolve().parents[2]


def test_imported_module_uses_its_dunder_version(fake_module):
    fake_module("hubfake_gym", "0.26.0rc1")
    assert module_version("hubfake_gym") == Version("0.26.0rc1")
    assert version_and_source("hubfake_gym")[1] == "hubfake_gym.__version__"


def test_dotted_names_give_the_top_level_version(fake_module):
    fake_module("hubfake_gym", "0.23.1")
    fake_module("hubfake_gym.wrappers")
    assert module_version("hubfake_gym.wrappers") == Version("0.23.1")


def test_metadata_is_read_without_importing(fake_distribution):
    fake_distribution("hubfake_alpha", "hubfake-alpha", "1.2.3")
    assert module_version("hubfake_alpha") == Version("1.2.3")
    assert "hubfake_alpha" not in sys.modules
    assert is_installed("hubfake_alpha")
    assert "hubfake_alpha" not in sys.modules
    assert version_and_source("hubfake_alpha")[1] == "metadata of distribution 'hubfake-alpha'"


def test_distribution_with_another_name_is_found(fake_distribution):
    fake_distribution("hubfake_beta", "totally-different-dist", "4.5")
    assert distribution_name("hubfake_beta") == "totally-different-dist"
    assert module_version("hubfake_beta") == Version("4.5")
    assert "hubfake_beta" not in sys.modules


def test_dunder_version_wins_over_metadata(fake_distribution, fake_module):
    fake_distribution("hubfake_gamma", "hubfake-gamma", "1.0")
    assert module_version("hubfake_gamma") == Version("1.0")
    fake_module("hubfake_gamma", "2.0.dev3")  # e.g. a source checkout on sys.path
    assert module_version("hubfake_gamma") == Version("2.0.dev3")


def test_missing_module_has_no_version():
    assert module_version("hubfake_not_installed_anywhere") is None
    assert not is_installed("hubfake_not_installed_anywhere")


def test_module_without_version_falls_back_to_metadata(fake_module):
    fake_module("hubfake_noversion")
    assert module_version("hubfake_noversion") is None
    assert is_installed("hubfake_noversion")


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("1.2.3", "1.2.3"), ("v2.1.0 (custom build)", "2.1.0"), ("3.0.0rc2", "3.0.0rc2")],
)
def test_free_form_dunder_versions(fake_module, raw, expected):
    fake_module("hubfake_loose", raw)
    assert module_version("hubfake_loose") == Version(expected)


def test_unparseable_dunder_version_is_ignored(fake_module):
    fake_module("hubfake_unknown", "unknown")
    assert module_version("hubfake_unknown") is None


def test_metadata_answers_are_cached_until_cleared(fake_distribution, monkeypatch):
    fake_distribution("hubfake_delta", "hubfake-delta", "1.0")
    assert module_version("hubfake_delta") == Version("1.0")
    monkeypatch.setattr(versions, "_metadata_version", lambda dist: "9.9")
    assert module_version("hubfake_delta") == Version("1.0")  # cached
    clear_version_cache()
    assert module_version("hubfake_delta") == Version("9.9")


def test_parse_version_errors_are_clear():
    with pytest.raises(VersionRangeError, match="not a valid version") as info:
        parse_version("one point two")
    assert isinstance(info.value, HubError) and isinstance(info.value, ValueError)


def test_prereleases_order_before_their_release():
    assert parse_version("0.26.0rc1") < parse_version("0.26.0")
    assert parse_version("1.0a1") < parse_version("1.0") < parse_version("1.0.post1")
    assert parse_version("1.0") == parse_version("1.0.0")


def test_real_backends_are_looked_up_without_import():
    """gymnasium and dm_control (distribution dm-control): versions without importing them."""
    code = (
        "import sys, importlib.metadata as md\n"
        "from hub.dispatch import module_version\n"
        "assert str(module_version('gymnasium')) == md.version('gymnasium')\n"
        "assert str(module_version('dm_control')) == md.version('dm-control')\n"
        "bad = [m for m in ('gymnasium', 'dm_control', 'torch', 'numpy') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_importing_hub_dispatch_imports_no_backend():
    code = (
        "import sys, time\n"
        "t = time.perf_counter()\n"
        "import hub.dispatch\n"
        "print(time.perf_counter() - t)\n"
        "heavy = ('torch', 'numpy', 'tensordict', 'gymnasium', 'gym', 'envpool', 'dm_control',\n"
        "         'hub.plugins', 'hub.envs')\n"
        "bad = [m for m in heavy if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert float(done.stdout) < 0.5  # generous: about 30 ms on a laptop


versions_text = st.builds(
    lambda rel, pre: ".".join(map(str, rel)) + pre,
    st.lists(st.integers(0, 12), min_size=1, max_size=3),
    st.sampled_from(["", "a1", "b2", "rc1", ".post1", ".dev0"]),
)


@given(version=versions_text, low=st.none() | versions_text, high=st.none() | versions_text)
def test_ranges_follow_pep440(version, low, high):
    from hub.dispatch.implement_for import _make_impl

    v, lo, hi = Version(version), low and Version(low), high and Version(high)
    if lo is not None and hi is not None and lo >= hi:
        with pytest.raises(VersionRangeError):
            _make_impl("x", low, high, len)
        return
    impl = _make_impl("x", low, high, len)
    assert impl.contains(v) == ((lo is None or lo <= v) and (hi is None or v < hi))


@given(a=st.tuples(versions_text, versions_text), b=st.tuples(versions_text, versions_text))
def test_overlap_means_a_shared_version(a, b):
    from hub.dispatch.implement_for import _make_impl

    (a_lo, a_hi), (b_lo, b_hi) = sorted(a, key=Version), sorted(b, key=Version)
    if Version(a_lo) == Version(a_hi) or Version(b_lo) == Version(b_hi):
        return
    one, two = _make_impl("x", a_lo, a_hi, len), _make_impl("x", b_lo, b_hi, len)
    probe = max(Version(a_lo), Version(b_lo))  # the lowest version both could share
    assert one.overlaps(two) == two.overlaps(one) == (one.contains(probe) and two.contains(probe))
