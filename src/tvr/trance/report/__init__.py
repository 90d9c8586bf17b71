"""`tvr report`: a dataset's balance plots, Table 8, the order-sensitive share and examples page."""

from tvr._moved import forwarding_getattr

# `tvr.trance.report` was one module: its names resolve here for one release
__getattr__ = forwarding_getattr(
    __name__,
    "tvr.trance.report",
    "tvr.trance.report.writer",
    "tvr.trance.report.tables",
    "tvr.trance.sampling.stats",
    "tvr.trance.paper",
)
