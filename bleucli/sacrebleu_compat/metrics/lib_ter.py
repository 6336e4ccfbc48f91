"""``sacrebleu.metrics.lib_ter``: the translation edit rate of one tokenised sentence pair,
from bleucli's TER engine (same search, same numbers), and tercom's limits under
SacreBLEU's names."""

from __future__ import annotations

from bleucli.metrics.ter_edit import (
    BEAM_WIDTH as _BEAM_WIDTH,
)
from bleucli.metrics.ter_edit import (
    MAX_SHIFT_CANDIDATES as _MAX_SHIFT_CANDIDATES,
)
from bleucli.metrics.ter_edit import (
    MAX_SHIFT_DIST as _MAX_SHIFT_DIST,
)
from bleucli.metrics.ter_edit import (
    MAX_SHIFT_SIZE as _MAX_SHIFT_SIZE,
)
from bleucli.metrics.ter_edit import (
    translation_edit_rate,
)

__all__ = [
    "translation_edit_rate",
    "_BEAM_WIDTH",
    "_MAX_SHIFT_CANDIDATES",
    "_MAX_SHIFT_DIST",
    "_MAX_SHIFT_SIZE",
]
