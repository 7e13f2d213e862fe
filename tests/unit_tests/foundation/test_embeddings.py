import subprocess
import sys
import textwrap

import numpy as np
import pytest

from langmem_layers import ConfigurationError
from langmem_layers.storage import LangchainEmbeddingFunction, LocalE5Embeddings, resolve_embeddings
from langmem_layers.storage.embeddings import DEFAULT_EMBEDDINGS_ID, embeddings_id
from langmem_layers.testing import DeterministicEmbeddings


def _cos(a, b):
    return float(np.dot(a, b) / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_local_model_is_real_normalised_and_bilingual():
    emb = LocalE5Embeddings()
    q = emb.embed_query("我最喜欢的编程语言是什么?")
    docs = emb.embed_documents(
        [
            "My favourite programming language is Python.",
            "We went hiking in the mountains last weekend.",
            "The invoice is due at the end of the month.",
        ]
    )
    assert len(q) == 384
    assert abs(np.linalg.norm(q) - 1.0) < 1e-3
    scores = [_cos(q, d) for d in docs]
    assert scores[0] == max(scores), scores


def test_english_query_finds_chinese_paraphrase():
    emb = LocalE5Embeddings()
    q = emb.embed_query("Where does Alice live now?")
    docs = emb.embed_documents(["爱丽丝现在住在上海。", "这家餐厅的面条很好吃。", "明天会下雨。"])
    scores = [_cos(q, d) for d in docs]
    assert scores[0] == max(scores), scores


def test_empty_text_does_not_crash():
    assert len(LocalE5Embeddings().embed_documents([""])[0]) == 384


def test_resolve_embeddings_rejects_wrong_type():
    with pytest.raises(ConfigurationError, match="Embeddings"):
        resolve_embeddings(object())  # type: ignore[arg-type]


def test_embeddings_id():
    assert embeddings_id(LocalE5Embeddings()) == DEFAULT_EMBEDDINGS_ID
    assert embeddings_id(DeterministicEmbeddings(size=16)) == "deterministic-hash-16"


def test_build_from_config_never_falls_back_to_a_download():
    ef = LangchainEmbeddingFunction.build_from_config({"embeddings_id": DEFAULT_EMBEDDINGS_ID})
    assert isinstance(ef.embeddings, LocalE5Embeddings)
    with pytest.raises(ConfigurationError, match="same embeddings"):
        LangchainEmbeddingFunction.build_from_config({"embeddings_id": "something-else"})


@pytest.mark.slow
def test_reopened_collection_uses_our_model_in_a_new_process(tmp_path):
    """A collection reopened WITHOUT passing an embedding function (new process, no
    network) must embed queries with our model, not Chroma's downloading default."""
    script = textwrap.dedent(
        f"""
        import socket
        def _no_net(*a, **k):
            raise RuntimeError("network access attempted")
        socket.socket.connect = _no_net
        import langmem_layers
        from langmem_layers import Storage
        from langmem_layers.storage import LangchainEmbeddingFunction, LocalE5Embeddings
        s = Storage({str(tmp_path)!r})
        client = s.chroma_client()
        if {{c.name for c in client.list_collections()}} != {{"mem"}}:
            ef = LangchainEmbeddingFunction(LocalE5Embeddings())
            col = client.create_collection("mem", embedding_function=ef)
            col.add(ids=["a", "b"], documents=["I love green tea", "The car is red"])
            print("created")
        else:
            col = client.get_collection("mem")
            r = col.query(query_texts=["which drink do I like"], n_results=1)
            print("top", r["ids"][0][0])
        """
    )
    first = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert first.returncode == 0, first.stderr
    assert "created" in first.stdout
    second = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    assert "top a" in second.stdout
