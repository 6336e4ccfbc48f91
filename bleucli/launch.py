"""``main`` where console scripts written before the command line moved into ``bleucli.cli``
look for it: an install made then (an editable one above all) keeps its old ``bleucli``
script until it is reinstalled, and that script must still start the tool."""

from bleucli.cli.launch import main

__all__ = ["main"]
