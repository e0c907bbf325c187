"""The public names of the persistence modules are pinned."""

from __future__ import annotations

import importlib


def test_persistence_modules_export_their_names() -> None:
    exported = {
        module: sorted(importlib.import_module(f'edgewise.graph.persistence{module}').__all__)
        for module in ('', '.file', '.sqlite', '.postgres', '.store', '.raw')
    }
    assert exported == {
        '': [
            'BaseStatePersistence',
            'EndSnapshot',
            'NodeError',
            'NodeSnapshot',
            'RunEndT',
            'RunInfo',
            'RunStatus',
            'Snapshot',
            'SnapshotStatus',
            'StateT',
            'build_snapshot_list_type_adapter',
            'build_snapshot_type_adapter',
            'set_nodes_type_context',
        ],
        '.file': ['FileStatePersistence'],
        '.sqlite': ['SqliteStatePersistence'],
        '.postgres': ['PostgresStatePersistence'],
        '.store': [
            'DurableStatePersistence',
            'RunPage',
            'RunQuery',
            'StoreURL',
            'last_raw_snapshots',
            'list_runs',
            'list_runs_page',
            'parse_store_url',
            'persistence_from_url',
        ],
        '.raw': ['RAW_SNAPSHOT_ADAPTER', 'RawEndSnapshot', 'RawNode', 'RawNodeSnapshot', 'RawSnapshot'],
    }
