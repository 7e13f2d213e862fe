from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore, EpisodeSummary, episode_id_for
from langmem_layers.errors import ConfigurationError, MissingUserIdError, StorageError
from langmem_layers.testing import DeterministicEmbeddings


def _session(n: int = 4) -> list[Any]:
    msgs: list[Any] = []
    for i in range(n // 2):
        msgs.append(HumanMessage(f"question {i} about postgres tuning"))
        msgs.append(AIMessage(f"answer {i}: raise shared_buffers"))
    return msgs


def test_archive_writes_episode_and_linked_turns(store: EpisodeStore) -> None:
    summary = EpisodeSummary(
        keep=True,
        summary="Tuned Postgres.",
        key_facts=["uses Postgres 16"],
        outcomes=["raise shared_buffers"],
        topic="postgres tuning",
        tags=["Postgres", "perf"],
        importance=0.8,
    )
    ep = store.archive("ada", "thread-1", _session(4), summary=summary, created_at=1000.0)
    assert ep.id == episode_id_for("ada", "thread-1")
    got = store.get_episode("ada", ep.id)
    assert got is not None
    assert got.summary == "Tuned Postgres."
    assert got.key_facts == ("uses Postgres 16",)
    assert got.outcomes == ("raise shared_buffers",)
    assert got.tags == ("postgres", "perf")
    assert got.importance == pytest.approx(0.8)
    assert got.message_count == 4
    assert got.created_at == 1000.0
    assert got.session_id == "thread-1"
    turns = store.get_turns("ada", ep.id)
    # ids: <episode id>:g<generation>:t<turn index>, the generation unique per archive
    assert [t[0].split(":")[::2] for t in turns] == [[ep.id, f"t{i:04d}"] for i in range(4)]
    assert turns[0][1] == "user: question 0 about postgres tuning"
    assert turns[1][1].startswith("assistant: ")
    # turn metadata in Chroma links back to the episode
    raw = store.collection.get(ids=[turns[0][0]], include=["metadatas"])
    assert raw["metadatas"][0]["episode_id"] == ep.id
    assert raw["metadatas"][0]["kind"] == "turn"


def test_archiving_twice_never_duplicates(store: EpisodeStore) -> None:
    store.archive("ada", "t1", _session(4))
    n = store.count("ada")
    store.archive("ada", "t1", _session(4))
    assert store.count("ada") == n == 5
    # the episode, its 4 turns, one pack of those turns and the user's version record
    assert store.collection.count() == 5 + 1 + 1
    assert len(store.list_episodes("ada")) == 1


def test_missing_user_is_rejected(store: EpisodeStore) -> None:
    with pytest.raises(MissingUserIdError):
        store.archive("", "t1", _session(4))
    with pytest.raises(MissingUserIdError):
        store.count("  ")


def test_other_users_episode_is_invisible(store: EpisodeStore) -> None:
    ep = store.archive("ada", "t1", _session(4))
    assert store.get_episode("bob", ep.id) is None
    assert store.list_episodes("bob") == []
    assert store.get_turns("bob", ep.id) == []


def test_email_and_chinese_user_ids(store: EpisodeStore) -> None:
    store.archive("ada.l@example.com", "t1", [HumanMessage("hello there")])
    store.archive("张伟", "t1", [HumanMessage("我喜欢喝茶")])
    assert store.count("ada.l@example.com") == 2
    assert store.get_turns("张伟", episode_id_for("张伟", "t1"))[0][1] == "user: 我喜欢喝茶"


def test_reopen_with_other_embeddings_is_refused(chroma_client: Any) -> None:
    EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(size=64))
    with pytest.raises(ConfigurationError, match="deterministic-hash-64"):
        EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(size=32))


def test_reopen_with_same_embeddings_sees_data(chroma_client: Any) -> None:
    a = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings())
    a.archive("ada", "t1", _session(4))
    b = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings())
    assert b.count("ada") == 5


def test_index_reloads_when_another_writer_changes_chroma(chroma_client: Any) -> None:
    a = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings())
    b = EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings())
    assert b.count("ada") == 0  # b caches an empty index
    a.archive("ada", "t1", _session(4))
    assert b.count("ada") == 5  # stale cache detected through the collection count


def test_bad_collection_name(chroma_client: Any) -> None:
    with pytest.raises(ConfigurationError, match="3-512"):
        EpisodeStore(chroma_client, embeddings=DeterministicEmbeddings(), collection_name="x")


def test_chroma_errors_are_wrapped_with_a_hint(store: EpisodeStore) -> None:
    from langmem_layers.episodic._engine.chroma import chroma_call

    with pytest.raises(StorageError, match=r"\$and"):
        chroma_call("get", store.collection.get, where={"a": 1, "b": 2})


def test_default_client_uses_storage_folder(tmp_path: Any) -> None:
    from chromadb.api.shared_system_client import SharedSystemClient

    try:
        store = EpisodeStore(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
        store.archive("ada", "t1", [HumanMessage("hi")])
        assert (tmp_path / "chroma" / "chroma.sqlite3").exists()
    finally:
        SharedSystemClient.clear_system_cache()


def test_access_updates_are_buffered_then_flushed(store: EpisodeStore) -> None:
    ep = store.archive("ada", "t1", _session(4), created_at=1000.0)
    tid = store.get_turns("ada", ep.id)[0][0]
    store.touch("ada", [tid], now=5000.0)
    # visible in memory at once
    assert store.get_episode("ada", ep.id).last_accessed == 5000.0  # type: ignore[union-attr]
    assert store.flush() == 2  # the turn and its episode
    meta = store.collection.get(ids=[tid, ep.id], include=["metadatas"])["metadatas"]
    assert [m["last_accessed"] for m in meta] == [5000.0, 5000.0]
    assert [m["access_count"] for m in meta] == [1, 1]


async def test_async_twins(store: EpisodeStore) -> None:
    ep = await store.aarchive("ada", "t1", _session(4))
    assert (await store.aget_episode("ada", ep.id)) is not None
    assert len(await store.alist_episodes("ada")) == 1
    assert len(await store.aget_turns("ada", ep.id)) == 4
    assert await store.acount("ada") == 5


def test_rearchiving_a_shorter_session_drops_old_turns(store: EpisodeStore) -> None:
    ep = store.archive("ada", "t1", _session(6))
    assert len(store.get_turns("ada", ep.id)) == 6
    store.archive("ada", "t1", _session(2))
    assert len(store.get_turns("ada", ep.id)) == 2
    assert store.collection.count() == 3 + 1 + 1  # + one pack, + the version record


# ---------------------------------------------------------------------- nothing to archive
def _stored(store: EpisodeStore) -> list[Any]:
    got = store.collection.get(include=["documents", "metadatas"])
    return sorted(zip(got["ids"], got["documents"], got["metadatas"], strict=True))


@pytest.mark.parametrize(
    "messages",
    [[], [HumanMessage("")], [HumanMessage("  \n"), AIMessage(" ")], [("user", "\t")]],
    ids=["empty", "one-blank", "all-blank", "blank-tuple"],
)
async def test_archiving_nothing_is_refused_and_changes_nothing(
    store: EpisodeStore, messages: list[Any]
) -> None:
    ep = store.archive("ada", "t1", _session(4), created_at=1000.0)
    before = _stored(store)
    with pytest.raises(ConfigurationError) as refused:
        store.archive("ada", "t1", messages)
    with pytest.raises(ConfigurationError) as arefused:
        await store.aarchive("ada", "t1", messages)
    for info in (refused, arefused):
        text = str(info.value)
        assert "no messages to archive for session 't1'" in text
        assert "at least one message with text" in text and "delete_episodes" in text
    assert _stored(store) == before  # the earlier archive, untouched
    assert store.get_episode("ada", ep.id) == ep
    assert len(store.get_turns("ada", ep.id)) == 4
    with pytest.raises(ConfigurationError, match="no messages to archive for session 'new'"):
        store.archive("ada", "new", messages)
    assert [e.id for e in store.list_episodes("ada")] == [ep.id]  # nothing created


def test_a_blank_transcript_with_a_summary_is_archived(store: EpisodeStore) -> None:
    # what import_user gives back for an episode archived with index_turns=False
    summary = EpisodeSummary(keep=True, summary="Planned the Lyon trip.", topic="travel")
    ep = store.archive("ada", "t1", [HumanMessage(""), AIMessage("")], summary=summary)
    assert ep.message_count == 2 and ep.summary == "Planned the Lyon trip."
    assert store.get_turns("ada", ep.id) == []


def test_archive_node_and_archive_session_skip_an_empty_session(store: EpisodeStore) -> None:
    from langmem_layers.episodic import WritePolicy, archive_session, create_archive_node

    decision = archive_session(
        store, [], user_id="ada", session_id="t1", reason="explicit", policy=WritePolicy()
    )
    assert not decision.archive and "empty" in decision.why
    node = create_archive_node(store, policy=WritePolicy())
    cfg = {"configurable": {"user_id": "ada", "thread_id": "t1"}}
    assert node.invoke({"messages": [HumanMessage(" ")], "session_ended": True}, cfg) == {}
    assert store.list_episodes("ada") == []


# ---------------------------------------------------------------------- a re-archive
def test_archiving_again_gives_what_one_archive_gives(
    chroma_client: Any, fake_embeddings: DeterministicEmbeddings
) -> None:
    """A re-archive in the same process scores, reads and stores like one clean archive."""
    twice = EpisodeStore(chroma_client, collection_name="twice", embeddings=fake_embeddings)
    once = EpisodeStore(chroma_client, collection_name="once", embeddings=fake_embeddings)
    long = [HumanMessage(f"turn {i}: I moved to Lyon for the postgres job") for i in range(20)]
    twice.archive("ada", "t1", long, created_at=1000.0)
    twice.archive("ada", "t1", _session(6), created_at=1000.0)
    once.archive("ada", "t1", _session(6), created_at=1000.0)
    ep = episode_id_for("ada", "t1")
    assert twice.get_episode("ada", ep) == once.get_episode("ada", ep)
    strip = [(tid.split(":")[-1], text) for tid, text in twice.get_turns("ada", ep)]
    assert strip == [(tid.split(":")[-1], text) for tid, text in once.get_turns("ada", ep)]
    assert twice.collection.count() == once.collection.count() == 6 + 1 + 1 + 1
    from langmem_layers.episodic import EpisodicRetriever

    for query in ("postgres tuning", "shared_buffers answer", "Lyon"):
        got = [
            [
                (d.page_content, round(d.metadata["score"], 6))
                for d in EpisodicRetriever(
                    store=s, user_id="ada", recency_weight=0.0, update_access=False
                ).invoke(query)
            ]
            for s in (twice, once)
        ]
        # the replaced turns left the BM25 statistics (document count, lengths, frequencies)
        assert got[0] == got[1], query
