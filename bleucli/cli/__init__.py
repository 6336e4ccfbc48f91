"""The command line: the launcher (``launch``: ``--help`` and ``--version`` without click),
the table of subcommands (``subcommands``), the scoring command and the commands that share
its options (``main``), and one module per other command group (``server``, ``metaeval``,
``models``, ``autorank``). Nothing here is imported by the library."""
