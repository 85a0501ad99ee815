"""hub-plugin-pettingzoo: PettingZoo's parallel envs as hub envs. Importing it imports nothing."""

__version__ = "0.1.0"
