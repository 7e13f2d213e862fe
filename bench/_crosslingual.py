"""Chinese↔English check of an embedding model (part of the ``embeddings`` benchmark).

Each Chinese sentence must find its English paraphrase among English distractors,
and the reverse; reported as hit@1 and mean rank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from langchain_core.embeddings import Embeddings

from bench._metrics import unit_rows

__all__ = [
    "EN_DISTRACTORS",
    "PAIRS",
    "ZH_DISTRACTORS",
    "CrossLingualResult",
    "cross_lingual_check",
]

# Chinese sentence, its English paraphrase (personal facts an assistant would remember).
PAIRS: tuple[tuple[str, str], ...] = (
    ("我对花生过敏，吃了会起疹子。", "I'm allergic to peanuts; eating them gives me a rash."),
    ("我下个月要搬到柏林工作。", "Next month I'm moving to Berlin for a job."),
    ("我女儿今年九月开始上小学。", "My daughter starts primary school this September."),
    ("我每天早上跑五公里。", "I run five kilometres every morning."),
    ("我更喜欢用Python写后端代码。", "I prefer writing backend code in Python."),
    ("我的猫叫豆豆，它已经十岁了。", "My cat is called Doudou and she is ten years old."),
    ("周末我通常去爬山。", "On weekends I usually go hiking in the mountains."),
    ("请不要在晚上十点以后给我打电话。", "Please don't phone me after ten at night."),
    ("我正在学弹吉他，已经学了半年。", "I've been learning the guitar for six months."),
    ("我的航班周五下午从上海起飞。", "My flight leaves Shanghai on Friday afternoon."),
)
EN_DISTRACTORS: tuple[str, ...] = (
    "The quarterly report is due at the end of the week.",
    "Tomatoes grow best with plenty of sunlight.",
    "The museum is closed on public holidays.",
    "He repaired the bicycle chain with a new link.",
    "The central bank left interest rates unchanged.",
    "The printer on the third floor is out of toner.",
    "She painted the kitchen walls pale yellow.",
    "Trains to the airport run every fifteen minutes.",
    "Our team lost the football match two to one.",
    "The recipe calls for two cups of flour.",
)
ZH_DISTRACTORS: tuple[str, ...] = (
    "季度报告要在本周末之前提交。",
    "西红柿在阳光充足的地方长得最好。",
    "博物馆在法定节假日闭馆。",
    "他用一个新链节修好了自行车链条。",
    "央行维持利率不变。",
    "三楼的打印机没有墨粉了。",
    "她把厨房的墙刷成了淡黄色。",
    "去机场的火车每十五分钟一班。",
    "我们队以一比二输掉了足球比赛。",
    "这个食谱需要两杯面粉。",
)


@dataclass(slots=True)
class CrossLingualResult:
    """1-based rank of the paraphrase for each query, both directions."""

    zh_to_en_ranks: list[int]
    en_to_zh_ranks: list[int]
    pool_size: int

    @staticmethod
    def hit1(ranks: Sequence[int]) -> float:
        """Share of queries whose paraphrase ranked first."""
        return sum(1 for r in ranks if r == 1) / len(ranks) if ranks else float("nan")


def _paraphrase_ranks(
    embeddings: Embeddings, queries: Sequence[str], pool: Sequence[str]
) -> list[int]:
    # The paraphrase of queries[i] is pool[i]; the rest of the pool distracts.
    docs = unit_rows(embeddings.embed_documents(list(pool)))
    ranks = []
    for i, query in enumerate(queries):
        sims = docs @ unit_rows([embeddings.embed_query(query)])[0]
        ranks.append(1 + int(np.sum(sims > sims[i])))
    return ranks


def cross_lingual_check(
    embeddings: Embeddings,
    pairs: Sequence[tuple[str, str]] = PAIRS,
    en_distractors: Sequence[str] = EN_DISTRACTORS,
    zh_distractors: Sequence[str] = ZH_DISTRACTORS,
) -> CrossLingualResult:
    """Rank each sentence's paraphrase in the other language among distractors.

    Chinese queries search all English paraphrases plus ``en_distractors``;
    English queries search all Chinese sentences plus ``zh_distractors``.

    Example:
        >>> from langmem_layers.testing import DeterministicEmbeddings
        >>> r = cross_lingual_check(DeterministicEmbeddings(size=64),
        ...                         [("猫 cat", "cat"), ("狗 dog", "dog")], ["sky"], ["天"])
        >>> r.zh_to_en_ranks, r.pool_size
        ([1, 1], 3)

    """
    zh = [p[0] for p in pairs]
    en = [p[1] for p in pairs]
    return CrossLingualResult(
        zh_to_en_ranks=_paraphrase_ranks(embeddings, zh, [*en, *en_distractors]),
        en_to_zh_ranks=_paraphrase_ranks(embeddings, en, [*zh, *zh_distractors]),
        pool_size=len(pairs) + len(en_distractors),
    )
