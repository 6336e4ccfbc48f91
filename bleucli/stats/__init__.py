"""Statistics over scores, below every front end: bootstrap confidence intervals
(:mod:`.bootstrap`), paired significance tests between systems (:mod:`.paired`), rankings
with significance clusters (:mod:`.ranking`) and ``comet-compare``'s tests
(:mod:`.cometcompare`). Metric-specific statistics stay with their users: the gate's in
:mod:`bleucli.gating`, meta-evaluation's in :mod:`bleucli.metaeval`."""
