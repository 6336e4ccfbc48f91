"""The commands of ``bleucli``, one module each, every one taking a small typed request and
returning text; :mod:`bleucli.cli` only declares the options and maps errors to exit codes.

- :mod:`~bleucli.commands.request`: the scoring command's options (``Options``) and their
  validation;
- :mod:`~bleucli.commands.score`: scoring (and ``bleucli stats``), dispatching to
- :mod:`~bleucli.commands.testset_info` (``--list``, ``--echo``, ``--citation``,
  ``--download``, ``--detail``), :mod:`~bleucli.commands.sentence` (``-sl``) and
  :mod:`~bleucli.commands.paired` (``--paired-bs``/``--paired-ar``), over
  :mod:`~bleucli.commands.inputs` (hypotheses, references, test-set selection);
- :mod:`~bleucli.commands.report`, :mod:`~bleucli.commands.gate` (with
  :mod:`~bleucli.commands.gate_significance`; the checks are :mod:`bleucli.gating`) and
  :mod:`~bleucli.commands.merge`: the subcommands, which read results through
  :mod:`bleucli.results` and shards through :mod:`bleucli.shards`.
"""
