"""Fake chat model and deterministic embeddings for tests, docs and offline demos."""

from __future__ import annotations

import hashlib
import itertools
import math
import re
import threading
import uuid
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.embeddings import Embeddings
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import BaseModel, ConfigDict, Field, PrivateAttr

from langmem_layers._core.text import CJK_IDEOGRAPHS

__all__ = ["DeterministicEmbeddings", "FakeChatModel", "structured_reply", "tool_call"]

Response = AIMessage | str | BaseException | Callable[[list[BaseMessage]], Any]


def tool_call(name: str, args: dict[str, Any] | None = None, *, id: str | None = None) -> AIMessage:
    """An ``AIMessage`` that calls one tool.

    Example:
        >>> from langmem_layers.testing import tool_call
        >>> tool_call("search", {"q": "x"}).tool_calls[0]["name"]
        'search'

    """
    call_id = id or f"call_{uuid.uuid4().hex[:12]}"
    return AIMessage(
        content="", tool_calls=[{"name": name, "args": dict(args or {}), "id": call_id}]
    )


def structured_reply(schema: type[BaseModel] | str, data: dict[str, Any]) -> AIMessage:
    """The response a tool-calling model gives to ``with_structured_output(schema)``.

    ``data`` is not validated here, so tests can script malformed output.

    Example:
        >>> from pydantic import BaseModel
        >>> from langmem_layers.testing import FakeChatModel, structured_reply
        >>> class Answer(BaseModel):
        ...     text: str
        >>> model = FakeChatModel(responses=[structured_reply(Answer, {"text": "ok"})])
        >>> model.with_structured_output(Answer).invoke("q")
        Answer(text='ok')

    """
    name = schema if isinstance(schema, str) else schema.__name__
    return tool_call(name, data)


class FakeChatModel(BaseChatModel):
    """A scripted chat model that supports tools and structured output.

    Each call consumes the next entry of ``responses``:

    * an ``AIMessage`` (e.g. from :func:`tool_call` / :func:`structured_reply`);
    * a ``str`` (a plain text reply);
    * an exception instance (raised, to test error paths);
    * a callable ``(messages) -> AIMessage | str`` for replies that depend on the prompt.

    When the list runs out, ``default`` is used if set, otherwise the list
    restarts when ``cycle=True``, otherwise ``IndexError`` is raised. Every
    prompt is recorded in ``calls``; ``bind_tools`` records tool names in
    ``bound_tools`` and returns the model itself.

    Example:
        >>> from langmem_layers.testing import FakeChatModel, tool_call
        >>> model = FakeChatModel(responses=[tool_call("add", {"a": 1}), "done"])
        >>> model.bind_tools([]).invoke("hi").tool_calls[0]["name"]
        'add'
        >>> model.invoke("again").content
        'done'
        >>> len(model.calls)
        2

    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    responses: list[Any] = Field(default_factory=list)
    default: Any = None
    cycle: bool = False
    calls: list[list[BaseMessage]] = Field(default_factory=list)
    bound_tools: list[str] = Field(default_factory=list)
    _index: int = PrivateAttr(default=0)
    _lock: Any = PrivateAttr(default_factory=threading.Lock)

    @property
    def _llm_type(self) -> str:
        return "langmem-layers-fake"

    def _next(self, messages: list[BaseMessage]) -> AIMessage:
        with self._lock:
            self.calls.append(list(messages))
            if self._index < len(self.responses):
                item = self.responses[self._index]
                self._index += 1
            elif self.default is not None:
                item = self.default
            elif self.cycle and self.responses:
                self._index = 1
                item = self.responses[0]
            else:
                raise IndexError(
                    f"FakeChatModel ran out of responses after {len(self.responses)} calls; "
                    "add more, set default=..., or cycle=True"
                )
        if callable(item) and not isinstance(item, BaseMessage):
            item = item(list(messages))
        if isinstance(item, BaseException):
            raise item
        if isinstance(item, str):
            return AIMessage(content=item, id=f"fake-{uuid.uuid4().hex[:12]}")
        if isinstance(item, AIMessage):
            return item.model_copy(update={"id": item.id or f"fake-{uuid.uuid4().hex[:12]}"})
        raise TypeError(f"FakeChatModel: unsupported scripted response {item!r}")

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self._next(messages))])

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> Any:
        """Record the tool names and return the model itself."""
        names = []
        for t in tools:
            name = getattr(t, "name", None) or getattr(t, "__name__", None)
            if name is None and isinstance(t, dict):
                name = t.get("name") or t.get("function", {}).get("name") or t.get("title")
            names.append(str(name))
        self.bound_tools = names
        return self

    def reset(self) -> None:
        """Start again from the first response and forget recorded calls."""
        with self._lock:
            self._index = 0
            self.calls.clear()


_WORD = re.compile(rf"[a-z0-9]+|[{CJK_IDEOGRAPHS}]", re.IGNORECASE)


class DeterministicEmbeddings(Embeddings):
    """Hashed bag-of-words embeddings: deterministic, offline, lexically meaningful.

    Words (and single CJK characters plus their bigrams) are hashed with
    blake2b into ``size`` buckets with a sign; vectors are L2-normalised.
    Texts sharing words are closer than unrelated ones, so retrieval tests
    are meaningful, and results are identical in every process.

    Example:
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> emb = DeterministicEmbeddings(size=64)
        >>> q = emb.embed_query("python tips")
        >>> a, b = emb.embed_documents(["python tips and tricks", "cooking pasta"])
        >>> sum(x * y for x, y in zip(q, a)) > sum(x * y for x, y in zip(q, b))
        True

    """

    def __init__(self, size: int = 256) -> None:
        if size < 2:
            raise ValueError(f"size must be >= 2, got {size}")
        self.size = size
        self.embeddings_id = f"deterministic-hash-{size}"

    def _features(self, text: str) -> list[str]:
        tokens = _WORD.findall(text.lower())
        feats = list(tokens)
        cjk = [t for t in tokens if len(t) == 1 and not t.isascii()]
        feats.extend(a + b for a, b in itertools.pairwise(cjk))
        return feats

    def _embed(self, text: str) -> list[float]:
        vec = [0.0] * self.size
        for feat in self._features(text):
            digest = hashlib.blake2b(feat.encode("utf-8"), digest_size=8).digest()
            h = int.from_bytes(digest, "little")
            vec[h % self.size] += 1.0 if (h >> 63) & 1 else -1.0
        norm = math.sqrt(sum(v * v for v in vec))
        if norm == 0:
            vec[0] = 1.0
            return vec
        return [v / norm for v in vec]

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts to store."""
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> list[float]:
        """Embed a query (same function as documents)."""
        return self._embed(text)
