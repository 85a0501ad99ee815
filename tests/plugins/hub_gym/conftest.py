"""The hub_gym tests run against the installed backends (gymnasium and/or gym)."""

import os

os.environ.setdefault("SDL_VIDEODRIVER", "dummy")
