"""Transitional: the format's module, moved into its package (split next)."""

from .reader import *  # noqa: F401,F403
