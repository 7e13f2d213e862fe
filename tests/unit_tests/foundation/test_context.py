from dataclasses import dataclass

import pytest

from langmem_layers import ConfigurationError, MemoryContext, MissingUserIdError
from langmem_layers.identity import decode_label, encode_label, resolve_identity, user_namespace


class _Runtime:
    def __init__(self, context):
        self.context = context


def test_explicit_beats_context_and_configurable_which_must_agree():
    cfg = {"configurable": {"user_id": "from-config", "thread_id": "t-config"}}
    rt = _Runtime(MemoryContext(user_id="from-context"))
    with pytest.raises(ConfigurationError, match="conflicting user ids"):
        resolve_identity(runtime=rt, config=cfg)  # no longer "the context wins"
    assert resolve_identity(user_id="explicit", runtime=rt, config=cfg).user_id == "explicit"
    assert resolve_identity(config=cfg).user_id == "from-config"
    assert resolve_identity(runtime=rt).user_id == "from-context"
    same = _Runtime(MemoryContext(user_id="from-config"))
    assert resolve_identity(runtime=same, config=cfg).thread_id == "t-config"


def test_context_may_be_mapping_or_object():
    @dataclass
    class Ctx:
        user_id: str
        agent_id: str

    assert resolve_identity(runtime=_Runtime({"user_id": "m"})).user_id == "m"
    ident = resolve_identity(runtime=_Runtime(Ctx("o", "agent-7")))
    assert (ident.user_id, ident.agent_id) == ("o", "agent-7")


@pytest.mark.parametrize("value", [None, "", "   "])
def test_missing_user_id_is_an_error_never_global(value):
    with pytest.raises(MissingUserIdError, match="user_id"):
        resolve_identity(user_id=value, config={"configurable": {"user_id": value}})


def test_require_thread():
    with pytest.raises(ConfigurationError, match="thread_id"):
        resolve_identity(user_id="u", require_thread=True)


@pytest.mark.parametrize(
    "uid", ["ada.lovelace@example.com", "张三", "a%2Eb", "a.b", "%", "x%25.y", "with space"]
)
def test_labels_roundtrip_and_have_no_dots(uid):
    label = encode_label(uid)
    assert "." not in label and label
    assert decode_label(label) == uid


def test_distinct_ids_never_collide():
    ids = ["a.b", "a%2Eb", "a%252Eb", "a_b", "a-b"]
    assert len({encode_label(i) for i in ids}) == len(ids)


def test_user_namespace_is_valid_for_langgraph_store():
    from langgraph.store.memory import InMemoryStore

    store = InMemoryStore()
    ns = user_namespace("semantic", "ada@example.com")
    store.put(ns, "k", {"v": 1})
    assert store.get(ns, "k").value == {"v": 1}
    other = user_namespace("semantic", "bob@example.com")
    assert store.get(other, "k") is None
    with pytest.raises(MissingUserIdError):
        user_namespace("semantic", "")
    with pytest.raises(ConfigurationError):
        user_namespace("bad.layer", "u")
