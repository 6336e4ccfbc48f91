"""``sacrebleu.version``: the SacreBLEU API level this compatibility layer implements."""

from __future__ import annotations

from bleucli.version import __version__ as bleucli_version

__version__ = version = "2.6.0"
__version_tuple__ = version_tuple = (2, 6, 0)
commit_id = None
__bleucli_version__ = bleucli_version
