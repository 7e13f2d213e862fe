"""Metric code of the embeddings benchmark, on synthetic data and fake embeddings."""

import json
import math

import pytest
from langchain_core.embeddings import Embeddings

from bench import _crosslingual as crosslingual
from bench import embeddings as bench
from bench._locomo_data import (
    Conversation,
    Question,
    Session,
    Turn,
    load_conversation,
    load_conversations,
)
from bench._metrics import percentile, recall_at_k
from langmem_layers.testing import DeterministicEmbeddings


class TableEmbeddings(Embeddings):
    """Fake: each text maps to a fixed vector; records query/document calls."""

    def __init__(self, table: dict[str, list[float]]) -> None:
        self.table = table
        self.queries: list[str] = []
        self.documents: list[str] = []

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        self.documents.extend(texts)
        return [self.table[t] for t in texts]

    def embed_query(self, text: str) -> list[float]:
        self.queries.append(text)
        return self.table[text]


def test_recall_at_k_counts_evidence_in_top_k():
    ranked = ["a", "b", "c", "d"]
    assert recall_at_k(ranked, ["c"], 2) == 0.0
    assert recall_at_k(ranked, ["c"], 3) == 1.0
    assert recall_at_k(ranked, ["a", "d", "z"], 4) == pytest.approx(2 / 3)
    assert recall_at_k(ranked, ["a", "a"], 1) == 1.0  # duplicates count once
    assert recall_at_k(ranked, [], 4) == 0.0


def test_percentile_is_numpy_linear_and_nan_when_empty():
    assert percentile([4.0, 1.0, 3.0, 2.0], 50) == 2.5
    assert percentile([1.0, 2.0], 100) == 2.0
    assert math.isnan(percentile([], 95))


def _conv(name, ids, texts, questions):
    """One session whose turns say ``texts``; indexed as the bare text (``_said``)."""
    turns = [Turn(i, "S", t, t) for i, t in zip(ids, texts, strict=True)]
    return Conversation(name, [Session(1, 0.0, "", turns)], questions)


def _said(turn, session):
    return turn.said


def _write_conversation(tmp_path):
    data = {
        "speaker_a": "Ann",
        "speaker_b": "Bo",
        "session_2_date_time": "2 June",
        "session_2": [{"speaker": "Bo", "dia_id": "D2:1", "text": "bye"}],
        "session_1_date_time": "1 May",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "hello"},
            {"speaker": "Bo", "dia_id": "D1:2", "text": "see", "blip_caption": "a red kite"},
        ],
        "session_3_date_time": "3 July",  # a date with no session: ignored
        "session_1_observation": {"Ann": []},
        "qa": [
            {"question": "q1", "answer": "x", "evidence": ["D1:2; D2:1"], "category": 1},
            {"question": "q2", "answer": "x", "evidence": ["D:1:1"], "category": 4},
            {"question": "q3", "evidence": ["D1:1"], "category": 5},
            {"question": "q4", "answer": "x", "evidence": [], "category": 2},
        ],
    }
    path = tmp_path / "7.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_load_conversation_orders_sessions_formats_turns_and_filters_questions(tmp_path):
    conv = load_conversation(_write_conversation(tmp_path))
    assert conv.id == "7"
    turn_ids, texts = bench.indexed_turns(conv)
    assert turn_ids == ["D1:1", "D1:2", "D2:1"]
    assert texts == [
        "[1 May] Ann: hello",
        "[1 May] Bo: see (photo: a red kite)",
        "[2 June] Bo: bye",
    ]
    # the episodic benchmark indexes the same turn with the caption in its own format
    assert conv.sessions[0].turns[1].text == "see [shares a photo: a red kite]"
    # category 5 and empty evidence are dropped; evidence typos are repaired
    assert [(q.question, q.evidence, q.category) for q in conv.questions] == [
        ("q1", ["D1:2", "D2:1"], 1),
        ("q2", ["D1:1"], 4),
    ]


def test_load_conversations_explains_an_empty_folder(tmp_path):
    with pytest.raises(FileNotFoundError, match="--data"):
        load_conversations(tmp_path)


def test_evaluate_dense_ranks_by_cosine_per_conversation():
    # 2-d vectors chosen so the ranking is known: turn t0 > t1 > t2 for q_a, reverse for q_b.
    table = {
        "t0": [1.0, 0.0],
        "t1": [0.8, 0.6],
        "t2": [0.0, 1.0],
        "q_a": [1.0, 0.1],
        "q_b": [0.0, 2.0],  # unnormalised on purpose
        "u0": [1.0, 0.0],
        "q_c": [1.0, 0.0],
    }
    conv1 = _conv(
        "c1",
        ["D1:1", "D1:2", "D1:3"],
        ["t0", "t1", "t2"],
        [
            Question("q_a", ["D1:3"], 1),  # rank 3
            Question("q_b", ["D1:3", "D1:1"], 2),  # ranks 1 and 3
        ],
    )
    conv2 = _conv("c2", ["D1:1"], ["u0"], [Question("q_c", ["D9:9"], 4)])
    fake = TableEmbeddings(table)
    r = bench.evaluate_dense(fake, [conv1, conv2], text=_said)
    assert fake.queries == ["q_a", "q_b", "q_c"]
    assert fake.documents == ["t0", "t1", "t2", "u0"]
    assert (r.turns, r.questions, r.evidence_missing) == (4, 3, 1)
    # k=5 covers every turn: q_a 1, q_b 1, q_c 0 (its evidence is in no turn)
    assert r.recall[5] == pytest.approx(2 / 3)
    by_cat = r.recall10_by_category
    assert (by_cat[1], by_cat[2], by_cat[4]) == (1.0, 1.0, 0.0)
    assert math.isnan(by_cat[3])  # no question of category 3
    assert r.questions_by_category == {1: 1, 2: 1, 3: 0, 4: 1}
    assert r.texts_per_second > 0


def test_evaluate_dense_top_k_cuts_off(monkeypatch):
    # With k=1 and k=2 only, the evidence ranked 3rd is a miss and the 2nd a hit.
    monkeypatch.setattr(bench, "KS", (1, 2))
    table = {"a": [1.0, 0.0], "b": [0.9, 0.1], "c": [0.0, 1.0], "q": [1.0, 0.0]}
    conv = _conv("c", ["x", "y", "z"], ["a", "b", "c"], [Question("q", ["y", "z"], 4)])
    r = bench.evaluate_dense(TableEmbeddings(table), [conv], text=_said)
    assert r.recall == {1: 0.0, 2: 0.5}


def test_cross_lingual_check_reports_rank_of_the_paraphrase():
    table = {
        "zh1": [1.0, 0.0, 0.0],
        "zh2": [0.0, 1.0, 0.0],
        "en1": [1.0, 0.0, 0.0],
        "en2": [0.0, 0.0, 1.0],  # far from zh2: a miss
        "enX": [0.1, 1.0, 0.0],  # the distractor zh2 lands on
        "zhX": [0.0, 0.0, -1.0],
    }
    r = crosslingual.cross_lingual_check(
        TableEmbeddings(table), [("zh1", "en1"), ("zh2", "en2")], ["enX"], ["zhX"]
    )
    assert r.pool_size == 3
    assert r.zh_to_en_ranks[0] == 1
    assert r.zh_to_en_ranks[1] > 1
    assert r.hit1(r.zh_to_en_ranks) == 0.5
    # en2 is orthogonal to zh1 and zh2 and opposite to zhX: ties rank first
    assert r.en_to_zh_ranks == [1, 1]


def test_builtin_pairs_are_aligned_and_distinct():
    zh = [p[0] for p in crosslingual.PAIRS]
    en = [p[1] for p in crosslingual.PAIRS]
    assert len(set(zh)) == len(zh) and len(set(en)) == len(en)
    han = [any("\u4e00" <= ch <= "\u9fff" for ch in s) for s in [*zh, *crosslingual.ZH_DISTRACTORS]]
    assert all(han)
    assert all(s.isascii() for s in en + list(crosslingual.EN_DISTRACTORS))


def _protect_env(monkeypatch):
    # main() sets these for the engines; monkeypatch restores them afterwards.
    for key in (
        "OMP_NUM_THREADS",
        "HF_HUB_OFFLINE",
        "TRANSFORMERS_OFFLINE",
        "HF_HUB_DISABLE_PROGRESS_BARS",
        "TRANSFORMERS_VERBOSITY",
    ):
        monkeypatch.setenv(key, "1")


def _fake_load(batch_size, threads):
    return DeterministicEmbeddings(size=32)


def test_format_table_and_main_skip_unimportable(tmp_path, monkeypatch, capsys):
    _protect_env(monkeypatch)
    _write_conversation(tmp_path)
    fake = bench._Candidate("fake", ("json",), _fake_load, "-")
    gone = bench._Candidate("gone", ("no_such_module_xyz",), _fake_load, "pip install xyz")
    monkeypatch.setattr(bench, "CANDIDATES", {"fake": fake, "gone": gone})
    out_json = tmp_path / "out.json"
    code = bench.main(
        ["--data", str(tmp_path), "--candidates", "gone", "fake", "--json", str(out_json)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "skip gone: no_such_module_xyz not importable here (pip install xyz)" in out
    assert "| fake |" in out and "| gone |" not in out
    assert "R@10 by category 1 / 2 / 3 / 4" in out
    saved = json.loads(out_json.read_text(encoding="utf-8"))
    assert [r["name"] for r in saved["results"]] == ["fake"]
    assert saved["results"][0]["dense"]["questions"] == 2


def test_main_returns_2_when_nothing_can_run(tmp_path, monkeypatch):
    _protect_env(monkeypatch)
    _write_conversation(tmp_path)
    gone = bench._Candidate("gone", ("no_such_module_xyz",), _fake_load, "-")
    monkeypatch.setattr(bench, "CANDIDATES", {"gone": gone})
    assert bench.main(["--data", str(tmp_path), "--candidates", "gone"]) == 2
