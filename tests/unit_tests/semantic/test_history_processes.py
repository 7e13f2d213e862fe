"""Three OS processes overwriting one profile slot on one SQLite file keep one history line."""

from __future__ import annotations

from langmem_layers.semantic import ProfileStore
from langmem_layers.storage.defaults import Storage
from tests.unit_tests.semantic._history_worker import Slots, check_linear, race

PROCESSES, TURNS = 3, 20


def test_three_processes_on_one_sqlite_file_keep_one_line(storage: Storage) -> None:
    with storage.store():  # create the file once
        pass
    tags = [f"p{n}" for n in range(PROCESSES)]
    race("sqlite", str(storage.path), "ada", tags, TURNS)
    with storage.store() as store:
        check_linear(ProfileStore(store, schema=Slots), "ada", tags, TURNS)
