"""Grounding: a profile value the model proposes must be in the user's own words."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.semantic import ProfileUpdate
from langmem_layers.semantic._grounding import ground_updates, grounded, user_text


@pytest.mark.parametrize(
    ("said", "value", "kept"),
    [
        ("We moved from MySQL to PostgreSQL", "PostgreSQL", True),
        ("I work as a data engineer", "data engineer", True),
        ("I write Rust now", "Rust programming", True),  # half the words said
        ("I love my dogs", "dog", True),  # a plain suffix
        ("Rust's borrow checker is great", "Rust", True),
        ("我用Python", "Python", True),  # Latin inside an unspaced script
        ("我今年30岁", "30", True),
        ("我在Google工作", "Google", True),
        ("我住在北京", "北京", True),
        ("I use Python every day", "Lyon", False),  # invented
        ("I use Python every day", ".250M", False),
        ("I use JavaScript", "Java", False),  # another word, not a suffix
        ("I write C", "C#", False),
        ("I write C", "C++", False),
        ("I live in Oslo", "the", False),  # stop words alone ground nothing
    ],
)
def test_grounded(said: str, value: str, kept: bool) -> None:
    assert grounded(value, user_text([HumanMessage(said)])) is kept


def test_only_the_users_words_ground_a_value() -> None:
    msgs = [HumanMessage("I moved last year."), AIMessage("Did you move to Lisbon?")]
    u = ProfileUpdate(field="context", key="location", value="Lisbon", kind="overwrite",
                      importance=0.9)  # fmt: skip
    kept, dropped = ground_updates([u], msgs)
    assert kept == [] and dropped == [u]


def test_an_invented_replaces_is_cleared_and_a_said_one_kept() -> None:
    msgs = [HumanMessage("We moved from MySQL to PostgreSQL")]
    said = ProfileUpdate(field="tech_stack", key="database", value="PostgreSQL",
                         kind="overwrite", replaces="MySQL", importance=0.9)  # fmt: skip
    invented = said.model_copy(update={"replaces": "Oracle"})
    kept, _ = ground_updates([said, invented], msgs)
    assert [k.replaces for k in kept] == ["MySQL", None]
