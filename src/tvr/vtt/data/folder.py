"""A VTT data folder in the release's layout (meta/vtt.jsonl, states/), read and checked."""

from __future__ import annotations

from pathlib import Path

from tvr.vtt.data.layout import records_file, states_folder
from tvr.vtt.data.records import VttRecord, check_states, read_records


def read_data(data: str | Path) -> tuple[Path, list[VttRecord], Path]:
    """(records file, its records, states folder) of the folder `data`, with every state image
    checked."""
    records_path = records_file(data)
    states = states_folder(data)
    records = read_records(records_path)
    check_states(records, states, records_path)
    return records_path, records, states
