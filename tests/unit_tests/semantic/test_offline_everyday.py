"""Offline extraction of everyday facts: diet, allergies, health, home, family, pets, job.

Each statement is one turn of a one-turn session through ``MemoryLayers.add`` with no
model (the path a user without a model takes), in English and Chinese; statements about
someone else, questions and hypotheticals store nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from langmem_layers import MemoryLayers


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryLayers]:
    with MemoryLayers.open(tmp_path_factory.mktemp("everyday")) as layers:
        yield layers


def _profile(memory: MemoryLayers, uid: str, text: str) -> set[str]:
    memory.add([("user", text)], user_id=uid)
    return {item.text for item in memory.get_all(user_id=uid).profile}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # diet
        ("I'm vegetarian.", {"context.diet: vegetarian"}),
        ("I've been vegan for five years.", {"context.diet: vegan"}),
        ("I don't eat spicy food.", {"facts: doesn't eat spicy food"}),
        ("我是素食者。", {"context.diet: 素食"}),
        ("我吃素", {"context.diet: 素食"}),
        ("我不吃辣。", {"facts: 不吃辣"}),
        # allergies, intolerances, health
        ("I have a severe shellfish allergy.", {"facts: allergic to shellfish (severe)"}),
        ("I'm allergic to penicillin.", {"facts: allergic to penicillin"}),
        ("I'm lactose intolerant", {"facts: lactose intolerant"}),
        ("I have asthma.", {"facts: has asthma"}),
        ("我对花生过敏。", {"facts: 对花生过敏"}),
        ("我有哮喘", {"facts: 有哮喘"}),
        # home and origin
        ("I work remotely from Berlin.", {"context.location: Berlin"}),
        (
            "I grew up in Nairobi but moved to Toronto in 2019.",
            {"context.hometown: Nairobi", "context.location: Toronto"},
        ),
        ("我住在成都", {"context.location: 成都"}),
        ("我老家在重庆", {"context.hometown: 重庆"}),
        ("我是北京人。", {"context.hometown: 北京"}),  # neither a name nor a job: an origin
        # children and pets, by name
        ("I have two kids and a dog named Max.", {"facts: has two kids", "context.dog: Max"}),
        (
            "We have three kids, the youngest is Mia.",
            {"facts: has three kids", "context.youngest child: Mia"},
        ),
        ("My dog is called Rex.", {"context.dog: Rex"}),
        ("My daughter is named Lily.", {"context.daughter: Lily"}),
        ("我家的猫叫咪咪", {"context.cat: 咪咪"}),
        ("我女儿叫朵朵", {"context.daughter: 朵朵"}),
        ("大的叫乐乐", {"context.eldest child: 乐乐"}),
        # job
        (
            "I'm a Python backend developer working on LLM deployment.",
            {"context.role: Python backend developer"},
        ),
        (
            "These days I teach high school chemistry.",
            {"context.role: high school chemistry teacher"},
        ),
        (
            "我叫小王，在上海做前端开发",
            {"context.name: 小王", "context.location: 上海", "context.role: 前端开发"},
        ),
        ("我在小学教语文", {"context.employer: 小学", "context.role: 语文老师"}),
        # skills and how to answer
        ("I know Go pretty well.", {"skills: Go"}),
        ("I also know TypeScript.", {"skills: TypeScript"}),
        ("Please keep answers short.", {"preferences.answer_style: short answers"}),
    ],
)
def test_a_single_statement_is_kept(memory: MemoryLayers, text: str, expected: set[str]) -> None:
    uid = f"u-{abs(hash(text))}"
    assert _profile(memory, uid, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "My sister is allergic to nuts.",
        "my best friend just moved to Tokyo and I miss her already",
        "My wife is vegetarian.",
        "Is a vegan diet healthy?",
        "If I were vegan I'd miss cheese.",
        "What should I feed a dog named Max?",
        "我姐姐对花生过敏",
        "我老婆吃素",
        "如果我搬到深圳，会不会更好？",
        "素食健康吗？",
    ],
)
def test_nothing_is_kept_from_others_questions_and_hypotheticals(
    memory: MemoryLayers, text: str
) -> None:
    uid = f"n-{abs(hash(text))}"
    assert _profile(memory, uid, text) == set()


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        ("I live in Berlin.", "I moved to Valencia.", "Berlin", "Valencia"),
        ("我住在成都", "我上个月搬到深圳了", "成都", "深圳"),
        ("I'm vegetarian.", "I'm vegan now.", "vegetarian", "vegan"),
    ],
)
def test_a_later_statement_supersedes_and_the_history_keeps_both(
    memory: MemoryLayers, first: str, later: str, old: str, new: str
) -> None:
    uid = f"s-{abs(hash(first + later))}"
    memory.add([("user", first)], user_id=uid)
    memory.add([("user", later)], user_id=uid)
    current = {item.text for item in memory.get_all(user_id=uid).profile}
    assert any(t.endswith(f": {new}") for t in current), current
    assert not any(t.endswith(f": {old}") for t in current), current
    seen = " | ".join(repr(record) for record in memory.history(user_id=uid))
    assert old in seen and new in seen, seen
