"""The names TRANCE's options choose among (no numpy: the CLI's parsers list them for --help)."""

from __future__ import annotations

#: the baselines of `tvr baseline` (`tvr.trance.eval.baselines`)
BASELINES = ("oracle", "reversed", "random")
#: the balance scopes of the sampler (`tvr.trance.sampling.sampler`)
BALANCE_SCOPES = ("global", "shard")
#: the looks of TRANCE images: the renderer that made them (`tvr.trance.perception.looks`)
LOOKS = ("raster", "cycles")
#: the solver's matchings of initial to final objects (`tvr.trance.solver.matching`)
MATCHINGS = ("rules", "gt")
#: the solver's perceptions of the final image (`tvr.trance.solver.perception`)
PERCEPTIONS = ("gt", "parser")
#: the solver's render checks (`tvr.trance.solver.render_check`)
RENDER_CHECKS = ("auto", "off")
