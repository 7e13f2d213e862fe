from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.embeddings import LocalE5Embeddings
from langmem_layers.episodic import EpisodeStore, EpisodicRetriever


@pytest.mark.slow
def test_chinese_recall_with_the_packaged_model(chroma_client: Any) -> None:
    store = EpisodeStore(chroma_client, embeddings=LocalE5Embeddings())
    store.archive(
        "王芳",
        "t1",
        [HumanMessage("我养了一只橘猫，叫团子"), AIMessage("团子这个名字真可爱")],
    )
    store.archive("王芳", "t2", [HumanMessage("下周三我要去杭州开会"), AIMessage("祝开会顺利")])
    store.archive("other", "t1", [HumanMessage("我的猫叫小黑")])
    r = EpisodicRetriever(store=store, user_id="王芳", k=1, kinds=("turn",))
    assert "团子" in r.invoke("我的宠物叫什么名字？")[0].page_content
    assert "杭州" in r.invoke("What city is my meeting in?")[0].page_content
