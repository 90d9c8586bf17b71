"""Writing a matplotlib figure as a PNG file atomically, for every benchmark's plots."""

from __future__ import annotations

import io
import sys
from pathlib import Path
from typing import Any

from tvr.core.jsonl import write_file_bytes


def save_figure(fig: Any, path: Path, dpi: int = 110) -> Path:
    """Lay `fig` out (tight, unless it has a layout engine of its own), write it to `path` as a
    PNG atomically (a reader never sees half a file) and close it if pyplot made it."""
    try:
        if fig.get_layout_engine() is None:
            fig.tight_layout()
        buffer = io.BytesIO()
        fig.savefig(buffer, format="png", dpi=dpi)
        write_file_bytes(Path(path), buffer.getvalue())
        return Path(path)
    finally:
        pyplot = sys.modules.get("matplotlib.pyplot")
        if pyplot is not None:
            pyplot.close(fig)
