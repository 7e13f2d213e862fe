from __future__ import annotations

import numpy as np

import langmem_layers.episodic as episodic
from langmem_layers._core.text import tokenize
from langmem_layers.episodic._engine.bm25 import BM25Index, asks_when, mentions_time


def test_public_api_is_pinned() -> None:
    assert sorted(episodic.__all__) == [
        "ArchiveDecision",
        "CacheOptions",
        "CacheStats",
        "Episode",
        "EpisodeStore",
        "EpisodeSummary",
        "EpisodicRetriever",
        "ForgetResult",
        "OnnxCrossEncoder",
        "RecalledItem",
        "Rerank",
        "WritePolicy",
        "aarchive_session",
        "aenforce_cap",
        "aevict_unimportant",
        "aexpire_unused",
        "aforget_all_episodes",
        "archive_session",
        "create_archive_node",
        "create_recall_node",
        "detect_trigger",
        "enforce_cap",
        "episode_id_for",
        "evict_unimportant",
        "expire_unused",
        "forget_all_episodes",
        "render_recalled",
    ]


def test_tokenize_english_and_chinese() -> None:
    assert tokenize("The painters were painting") == ["painter", "paint"]
    assert tokenize("我爱北京") == ["我", "爱", "北", "京", "我爱", "爱北", "北京"]
    mixed = tokenize("用Python写爬虫")
    assert "python" in mixed and "爬虫" in mixed


def test_bm25_prefers_rare_terms_and_appends() -> None:
    idx = BM25Index()
    idx.add([["cat", "dog"], ["cat"], ["cat", "zebra"]])
    s = idx.scores(["cat", "zebra"])
    assert int(np.argmax(s)) == 2
    idx.add([["zebra", "zebra"]])
    s2 = idx.scores(["zebra"])
    assert len(s2) == 4 and s2[0] == 0.0 and s2[3] > s2[2] > 0
    assert idx.scores([]).sum() == 0


def test_time_helpers() -> None:
    assert mentions_time("we met last summer") and mentions_time("去年我去了日本")
    assert not mentions_time("we met at the park")
    assert asks_when("什么时候去的？") and asks_when("How long has she played guitar?")
    assert not asks_when("What does she play?")
