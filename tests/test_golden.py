"""Byte-identical outputs across refactors: every case of tests/golden_cases.py, stored from
the code before the scoring layer was rebuilt (#43), gives the same bytes today."""

from __future__ import annotations

import pytest

from tests.golden_cases import CASES, GOLDEN, ROOT, WMT, run


@pytest.mark.parametrize("name", list(CASES))
def test_the_output_is_byte_identical(name: str) -> None:
    argv = CASES[name]
    if any(WMT in arg for arg in argv) and not (ROOT / WMT).exists():
        pytest.skip(f"needs {WMT} (the WMT22 data beside the repository)")
    assert run(argv) == (GOLDEN / f"{name}.out").read_bytes()
