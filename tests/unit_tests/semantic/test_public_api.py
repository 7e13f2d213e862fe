from __future__ import annotations

import langmem_layers.semantic as semantic


def test_all_is_pinned() -> None:
    assert sorted(semantic.__all__) == [
        "BacklogLimits",
        "ExtractionResult",
        "ExtractionStats",
        "FieldSpec",
        "HistoryRecord",
        "LLMProfileExtractor",
        "MergePolicy",
        "OfflineProfileExtractor",
        "Profile",
        "ProfileExtractor",
        "ProfileItem",
        "ProfileSchema",
        "ProfileStore",
        "ProfileUpdate",
        "ProfileUpdater",
        "ProfileUpdates",
        "SupersededValue",
        "create_profile_extraction_node",
        "create_profile_injection_node",
        "profile_fields",
        "render_profile",
    ]
    for name in semantic.__all__:
        assert getattr(semantic, name) is not None
