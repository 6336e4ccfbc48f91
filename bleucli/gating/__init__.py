"""Regression gates on scores: the checks (:mod:`~bleucli.gating.checks`), the paired
bootstrap re-examination of drops (:mod:`~bleucli.gating.significance`) and the verdicts'
renderings (:mod:`~bleucli.gating.render`). Used by ``bleucli gate``, ``bleucli submit
--gate`` and the evaluation server's workers; no command line here."""
