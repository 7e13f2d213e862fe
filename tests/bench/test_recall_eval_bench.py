"""Our recall evaluation set and the recall-eval benchmark: data checks and a fake-model run."""

from __future__ import annotations

import json
import re
from collections import Counter
from datetime import date
from pathlib import Path

import pytest

from bench import BENCHMARKS
from bench import recall_eval as bench
from bench._evalset import (
    CATEGORIES,
    EvalSet,
    build_evalset,
    generate,
    language_of,
    load_evalset,
    render,
    resolve_when,
)
from langmem_layers.testing import DeterministicEmbeddings


@pytest.fixture(scope="module")
def evalset() -> EvalSet:
    return build_evalset()


def test_generation_is_deterministic_and_its_json_reads_back(tmp_path: Path) -> None:
    first = render(generate())
    assert first == render(generate())
    path = tmp_path / "chats.json"
    assert bench.main(["--write-data", str(path)]) == 0
    assert path.read_bytes() == first
    assert load_evalset(path) == build_evalset()


def test_size_languages_and_categories(evalset: EvalSet) -> None:
    qs = evalset.questions
    assert len(qs) >= 300
    langs = Counter(q.lang for q in qs)
    assert langs["zh"] * 3 >= len(qs), langs
    assert set(langs) == {"en", "zh"}
    assert {q.category for q in qs} == set(CATEGORIES)
    assert all(language_of(q.question) == q.lang for q in qs)
    assert len({q.id for q in qs}) == len(qs)
    assert 12 <= len(evalset.users) <= 20
    assert all(4 <= len(u.sessions) <= 8 for u in evalset.users)


def test_every_evidence_turn_exists_and_is_content(evalset: EvalSet) -> None:
    for q in evalset.questions:
        assert q.evidence, q
        for tid in q.evidence + q.superseded:
            turn = evalset.turn(q.user, tid)
            assert turn is not None, (q.id, tid)
            assert not turn.chatter, (q.id, tid)
        assert not set(q.evidence) & set(q.superseded)


def test_cross_lingual_questions_ask_in_the_other_language(evalset: EvalSet) -> None:
    crossed = [q for q in evalset.questions if q.category == "cross-lingual"]
    assert len(crossed) >= 30
    assert {q.lang for q in crossed} == {"en", "zh"}
    assert all(q.lang not in q.evidence_lang.split("+") for q in crossed)


def test_updates_keep_the_superseded_statements(evalset: EvalSet) -> None:
    updates = [q for q in evalset.questions if q.category == "update"]
    assert updates and all(q.superseded for q in updates)
    for q in updates:
        latest = max(int(tid[1:].split(":")[0]) for tid in q.evidence)
        assert all(int(t[1:].split(":")[0]) <= latest for t in q.superseded)


def test_sessions_turns_and_chatter_look_like_chats(evalset: EvalSet) -> None:
    roles: Counter[str] = Counter()
    texts = set()
    for user in evalset.users:
        dates = [s.date for s in user.sessions]
        assert dates == sorted(dates) and len(set(dates)) == len(dates)
        for sess in user.sessions:
            assert [t.id for t in sess.turns] == [f"{sess.id}:{i}" for i in range(len(sess.turns))]
            roles.update(t.role for t in sess.turns)
            texts |= {t.text for t in sess.turns if t.chatter}
            assert all(t.name for t in sess.turns if t.role == "tool")
    assert set(roles) == {"user", "assistant", "tool"}
    for noise in ("Noted.", "好的", "Got it!", "error 429 rate limited"):
        assert noise in texts
    relative = ("last Saturday", "two weeks ago", "上周二", "前天", "三天前")
    every_text = " ".join(t.text for u in evalset.users for s in u.sessions for t in s.turns)
    assert all(r in every_text for r in relative)


def test_time_questions_carry_resolved_dates(evalset: EvalSet) -> None:
    timed = [q for q in evalset.questions if q.category == "temporal"]
    assert len(timed) >= 30 and all(q.answer for q in timed)
    by_date = [q for q in evalset.questions if q.category == "by-date"]
    assert len(by_date) >= 15 and all(q.answer for q in by_date)
    whens = [q.question for q in timed]
    assert any(w.startswith("When") for w in whens) and any("什么时候" in w for w in whens)
    assert resolve_when("last:sat", date(2023, 5, 8)) == "2023-05-06"
    with pytest.raises(ValueError, match="unknown time code"):
        resolve_when("someday", date(2023, 5, 8))


def test_companion_questions_cover_each_kind_in_both_languages(evalset: EvalSet) -> None:
    kinds = {"recommended", "on-day", "yes-no"}
    by_kind = {k: [q for q in evalset.questions if q.kind == k] for k in kinds}
    assert {q.kind for q in evalset.questions} == kinds | {""}
    for kind, qs in by_kind.items():
        assert len(qs) >= 8 and {q.lang for q in qs} == {"en", "zh"}, kind
        assert any(q.category == "cross-lingual" for q in qs), kind
    for q in by_kind["recommended"]:  # what the assistant said, right after the request
        for tid in q.evidence:
            sid, _, at = tid.partition(":")
            turn, ask = evalset.turn(q.user, tid), evalset.turn(q.user, f"{sid}:{int(at) - 1}")
            assert turn is not None and ask is not None and turn.role == "assistant", q
            assert ask.role == "user" and not ask.chatter and tid not in q.superseded, q
    assert any(len(q.evidence) > 1 for q in by_kind["recommended"])
    for q in by_kind["on-day"]:  # a day without its year, the evidence said on that day
        assert q.answer and not re.search(r"\b\d{4}\b|\d{4}年", q.question), q
        sessions = {s.id: s.date[:10] for u in evalset.users if u.id == q.user for s in u.sessions}
        assert {sessions[t.split(":")[0]][5:] for t in q.evidence} == {q.answer[5:]}, q
    # one day of the year said in two years: both are the evidence, "去年" picks the older
    years = [q for q in by_kind["on-day"] if len({t.split(":")[0] for t in q.evidence}) == 2]
    assert years and any(q.question.startswith("去年") for q in by_kind["on-day"])


def test_questions_are_asked_the_day_after_the_users_last_session(evalset: EvalSet) -> None:
    last = {u.id: u.sessions[-1].timestamp for u in evalset.users}
    for q in evalset.questions:
        assert q.asked_at is not None and 0 < q.asked_at - last[q.user] <= 2 * 86400, q
    cases = bench.corpus_from_evalset(evalset).cases
    assert [c.now for c in cases] == [q.asked_at for q in evalset.questions]
    assert {c.now for c in bench.corpus_from_evalset(evalset, clock=True).cases} == {None}


def test_the_demo_question_is_in_the_set(evalset: EvalSet) -> None:
    (q,) = [q for q in evalset.questions if q.question == "Which database do we use?"]
    turn = evalset.turn(q.user, q.evidence[0])
    assert turn is not None and "PostgreSQL" in turn.text


def test_score_on_a_tiny_fake_set() -> None:
    cases = [
        bench.Case("q1", "u", "?", ["a"], "temporal", "en"),
        bench.Case("q2", "u", "?", ["b", "c"], "update", "zh"),
        bench.Case("q3", "v", "?", ["d"], "temporal", "zh"),
    ]
    ranked = [["x", "y", "a"], ["c", "b"], []]
    out = bench.score(cases, ranked, [1, 3], {("u", "x"), ("u", "y"), ("v", "x")})
    assert out["n"] == 3
    assert out["recall"] == {"1": round(0.5 / 3, 4), "3": round(2 / 3, 4)}
    assert out["by_category"]["temporal"]["recall"] == {"1": 0.0, "3": 0.5}
    assert out["by_language"]["zh"] == {"n": 2, "recall": {"1": 0.25, "3": 0.5}}
    assert out["chatter_top3"] == 0.4  # x, y of ["x", "y", "a", "c", "b"]
    assert bench.score(cases, ranked, [1])["chatter_top3"] is None
    assert out["by_kind"] == {}  # no case has a kind
    kinded = [bench.Case("q4", "u", "?", ["a"], "single-fact", "zh", "yes-no"), *cases]
    by_kind = bench.score(kinded, [["a"], *ranked], [1])["by_kind"]
    assert by_kind == {"yes-no": {"n": 1, "recall": {"1": 1.0}}}


def test_run_on_our_set_with_fake_embeddings(evalset: EvalSet, tmp_path: Path) -> None:
    small = EvalSet(
        evalset.users[:2],
        [q for q in evalset.questions if q.user in {evalset.users[0].id, evalset.users[1].id}],
    )
    corpus = bench.corpus_from_evalset(small)
    result = bench.run([corpus], [5, 10], tmp_path / "store", DeterministicEmbeddings())
    ours = result["ours"]
    assert ours["n"] == len(small.questions) > 30
    assert ours["turns"] == corpus.n_turns
    assert 0.0 < ours["recall"]["5"] <= ours["recall"]["10"] <= 1.0
    assert 0.0 <= ours["chatter_top3"] <= 1.0
    assert set(ours["per_question"]) == {q.id for q in small.questions}
    table = bench.format_table(result)
    assert "chatter in top 3" in table and "language zh" in table


def test_each_question_is_asked_at_its_time(evalset: EvalSet, tmp_path: Path) -> None:
    """The retriever gets the case's now= (and none for a clock case)."""
    user = evalset.users[-1]
    small = EvalSet([user], [q for q in evalset.questions if q.user == user.id][:3])
    corpus = bench.corpus_from_evalset(small)
    corpus.cases[1].now = None
    seen: list[object] = []
    real = bench.EpisodicRetriever._get_relevant_documents

    def spy(self: object, query: str, *, run_manager: object, **kw: object) -> object:
        seen.append(kw.get("now"))
        return real(self, query, run_manager=run_manager, **kw)  # type: ignore[arg-type]

    mp = pytest.MonkeyPatch()
    mp.setattr(bench.EpisodicRetriever, "_get_relevant_documents", spy)
    try:
        bench.run([corpus], [5, 10], tmp_path / "store", DeterministicEmbeddings())
    finally:
        mp.undo()
    asked = small.questions[0].asked_at
    assert seen == [asked, asked, None, None, asked, asked]  # the floored call, then the main one


def test_main_writes_json_and_is_registered(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert BENCHMARKS["recall-eval"][0] == "bench.recall_eval"
    out = tmp_path / "r.json"
    code = bench.main(["--only", "locomo", "--data-dir", str(tmp_path / "missing")])
    assert code == 2
    tiny = tmp_path / "tiny.json"
    full = generate()
    user = full["users"][0]
    full["users"] = [user]
    full["questions"] = [q for q in full["questions"] if q["user"] == user["id"]]
    tiny.write_text(json.dumps(full), encoding="utf-8")
    argv = ["--only", "ours", "--evalset", str(tiny), "--fake-embeddings", "--k", "5,20"]
    assert bench.main([*argv, "--threads", "0", "--json", str(out)]) == 0
    saved = json.loads(out.read_text(encoding="utf-8"))
    assert saved["k"] == [5, 10, 20] and saved["ours"]["n"] == len(full["questions"])
    with pytest.raises(SystemExit):
        bench.main(["--k", "five"])
