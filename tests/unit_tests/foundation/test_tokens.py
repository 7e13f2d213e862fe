from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from langmem_layers._core.text import message_text
from langmem_layers.storage import TokenCounter
from langmem_layers.storage.tokens import MESSAGE_OVERHEAD, NON_TEXT_PART_TOKENS, get_encoding


def test_offline_encoding_matches_cl100k_counts():
    enc = get_encoding()
    # "hello world" is 2 tokens in cl100k_base; the offline file is the same BPE table
    assert enc.encode("hello world") == [15339, 1917]


def test_counts_include_overhead_and_tool_calls():
    c = TokenCounter()
    plain = c.count_message(HumanMessage("hello world"))
    assert plain == 2 + MESSAGE_OVERHEAD
    call = AIMessage("", tool_calls=[{"name": "search", "args": {"q": "x"}, "id": "1"}])
    assert c.count_message(call) > MESSAGE_OVERHEAD
    assert c.count_messages([HumanMessage("hello world"), SystemMessage("")]) == plain + 3


def test_list_content_and_non_text_parts():
    msg = HumanMessage(
        content=[{"type": "text", "text": "look"}, {"type": "image_url", "image_url": {"url": "u"}}]
    )
    assert message_text(msg) == "look [image_url]"
    c = TokenCounter()
    assert c.count_message(msg) == (
        MESSAGE_OVERHEAD + c.count_text("look [image_url]") + NON_TEXT_PART_TOKENS
    )


def test_cache_hits_for_equal_messages_and_misses_on_change():
    c = TokenCounter()
    m = ToolMessage("result text", tool_call_id="1", id="m1")
    c.count_message(m)
    c.count_message(ToolMessage("result text", tool_call_id="1", id="m1"))
    assert (c.hits, c.misses) == (1, 1)
    c.count_message(ToolMessage("result text changed", tool_call_id="1", id="m1"))
    assert c.misses == 2


def test_cache_is_bounded():
    c = TokenCounter(cache_size=10)
    for i in range(50):
        c.count_message(HumanMessage(f"message {i}", id=str(i)))
    assert len(c._cache) == 10


def test_truncate_text():
    c = TokenCounter()
    text = "one two three four five"
    assert c.truncate_text(text, 100) == text
    assert c.count_text(c.truncate_text(text, 3)) == 3
    assert c.truncate_text(text, 0) == ""


def test_special_token_text_is_counted_not_rejected():
    assert TokenCounter().count_text("<|endoftext|>") > 0


def test_counting_does_no_io_once_the_encoding_is_loaded(monkeypatch):
    """Counting stays inline on async paths: after the first load it is pure CPU.

    The encoding's BPE file is read once per process (``get_encoding`` is cached),
    so new counters and every count/truncate call touch no file and no network.
    """
    import builtins
    import socket

    import tiktoken

    get_encoding()  # loaded once (this is the only file read)

    def forbidden(*args, **kwargs):
        raise AssertionError("I/O while counting tokens")

    monkeypatch.setattr(tiktoken, "get_encoding", forbidden)
    monkeypatch.setattr(builtins, "open", forbidden)
    monkeypatch.setattr(socket, "socket", forbidden)
    c = TokenCounter()
    assert c.count_messages([HumanMessage("hello world"), AIMessage("你好，世界")]) > 6
    assert c.truncate_text("one two three", 1) == "one"
