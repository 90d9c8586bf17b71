"""The TRANCE web app: the human test system (journal paper, appendix E) and the data viewer.

`create_app(config)` (tvr.web.app) builds the FastAPI app; `tvr serve` runs it with uvicorn.
"""

from tvr.web.config import ServeConfig

__all__ = ["ServeConfig"]
