"""WMT's AutoRank: several metrics' system scores combined into one rank-like number per
system (WMT25's and WMT24's recipes), from WMT's published score files, from system
scores, or from bleucli's own metrics and any segment scores; with rank ranges and
clusters from a bootstrap over documents. The command is ``bleucli autorank``; the Python
entry point is :func:`bleucli.autoranking.api.autorank` (``bleucli.autorank(...)``)."""
