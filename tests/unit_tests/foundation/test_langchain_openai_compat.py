"""The langchain_openai fields ``_core/langchain_openai_compat.py`` relies on."""

from __future__ import annotations

from langchain_openai import ChatOpenAI

from langmem_layers._core.langchain_openai_compat import CLIENT_FIELDS, client_base_url


def test_the_client_fields_exist_and_are_built_by_the_constructor() -> None:
    model = ChatOpenAI(model="m", api_key="x", base_url="http://127.0.0.1:9/v1")  # type: ignore[arg-type]
    assert set(ChatOpenAI.model_fields) >= CLIENT_FIELDS
    assert all(getattr(model, name) is not None for name in CLIENT_FIELDS)
    assert client_base_url(model) == "http://127.0.0.1:9/v1/"
