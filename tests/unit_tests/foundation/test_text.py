"""The text toolkit: CJK ranges, stop words, tokens, content words, sentences, speakers."""

from __future__ import annotations

import re

import pytest
from langchain_core.messages import (
    AIMessage,
    ChatMessage,
    FunctionMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

import langmem_layers._core.text as text
from langmem_layers._core.text import (
    CJK_IDEOGRAPHS,
    SMALL_TALK_EN,
    STOP_WORDS_EN,
    STOP_WORDS_ZH,
    content_words,
    has_cjk,
    is_role_label,
    message_text,
    speaker,
    split_sentences,
    tokenize,
)


def test_public_api_is_pinned() -> None:
    assert sorted(text.__all__) == [
        "CJK_IDEOGRAPHS",
        "SMALL_TALK_EN",
        "STOP_WORDS_EN",
        "STOP_WORDS_ZH",
        "content_words",
        "has_cjk",
        "is_role_label",
        "message_text",
        "speaker",
        "split_sentences",
        "tokenize",
    ]


# --- CJK detection ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("char", "what"),
    [
        ("中", "CJK Unified Ideographs"),
        ("\u4e00", "first unified ideograph"),
        ("\u9fff", "last unified ideograph"),
        ("\u3400", "first of Extension A"),
        ("㐂", "Extension A (U+3402)"),
        ("\u4db5", "Extension A (U+4DB5)"),
        ("\u4dbf", "last of Extension A"),
        ("豈", "compatibility ideograph (U+F900)"),
        ("\ufa6d", "compatibility ideograph (U+FA6D)"),
        ("〇", "ideographic zero (二〇二三年)"),
        ("𠮷", "Extension B (U+20BB7)"),
        ("\U0002f800", "compatibility supplement"),
        ("\U00030000", "Extension G"),
    ],
)
def test_ideographs_are_cjk(char: str, what: str) -> None:
    assert has_cjk(char), what
    assert re.fullmatch(f"[{CJK_IDEOGRAPHS}]", char), what


@pytest.mark.parametrize(
    ("sample", "what"),
    [
        ("ひらがな", "Japanese hiragana"),
        ("カタカナ", "Japanese katakana"),
        ("ｶﾀｶﾅ", "half-width katakana"),
        ("한국어", "Hangul"),
        ("。，！？；：「」、", "CJK punctuation"),
        ("ＡＢＣ１２３", "full-width Latin and digits"),
        ("\u3000", "ideographic space"),
        ("䷀", "Yijing hexagram (U+4DC0, just past Extension A)"),
        ("café naïve Müller", "accented Latin"),
        ("", "empty"),
    ],
)
def test_non_ideographs_are_not_cjk(sample: str, what: str) -> None:
    assert not has_cjk(sample), what


def test_japanese_is_detected_through_its_kanji_only() -> None:
    assert has_cjk("東京に行きました")  # kanji
    assert not has_cjk("ありがとうございます")  # kana only
    assert tokenize("ありがとう") == []  # kana are not lexical tokens
    assert tokenize("東京に行きました") == ["東", "京", "東京", "行"]


# --- stop words ------------------------------------------------------------------------


def test_one_stop_list_per_language_and_small_talk() -> None:
    assert {"the", "and", "i", "yourselves", "yeah", "wow", "don"} <= STOP_WORDS_EN
    assert {"thanks", "okay", "great", "sure"} <= SMALL_TALK_EN
    assert not STOP_WORDS_EN & SMALL_TALK_EN
    assert {"的", "了", "吗", "我", "是"} <= STOP_WORDS_ZH
    assert all(w == w.lower() and w.isascii() for w in STOP_WORDS_EN | SMALL_TALK_EN)
    assert all(len(c) == 1 and has_cjk(c) for c in STOP_WORDS_ZH)
    # topic words are never stop words
    assert not {"python", "paint", "budget", "trip"} & (STOP_WORDS_EN | SMALL_TALK_EN)
    assert not {"猫", "茶", "京", "海"} & STOP_WORDS_ZH


def test_bm25_tokens_keep_small_talk_and_summaries_drop_it() -> None:
    assert tokenize("Thanks, that's great!") == ["thank", "great"]
    assert content_words("Thanks, that's great!") == set()


# --- tokens ----------------------------------------------------------------------------


def test_tokenize_english_stems_and_drops_stop_words() -> None:
    assert tokenize("The painters were painting") == ["painter", "paint"]
    assert tokenize("Caroline's painting classes") == ["caroline", "paint", "class"]
    assert tokenize("born in 1987") == ["born", "1987"]


def test_tokenize_chinese_characters_and_bigrams() -> None:
    assert tokenize("我爱北京") == ["我", "爱", "北", "京", "我爱", "爱北", "北京"]
    # punctuation ends a run: no bigram across it
    assert tokenize("北京，上海") == ["北", "京", "北京", "上", "海", "上海"]
    assert tokenize("二〇二三年")[-4:] == ["二〇", "〇二", "二三", "三年"]


def test_tokenize_mixed_chinese_and_english() -> None:
    assert tokenize("用Python写爬虫") == ["用", "python", "写", "爬", "虫", "写爬", "爬虫"]
    assert tokenize("我们的database是Postgres 16") == [
        "我",
        "们",
        "的",
        "我们",
        "们的",
        "database",
        "是",
        "postgr",  # the light stemmer strips "es"
        "16",
    ]


def test_content_words_english() -> None:
    assert content_words("Thanks! My budget is 3000 euros, ok?") == {"budget", "3000", "euros"}
    assert content_words("I took the A4 to the 2nd floor") == {"took", "a4", "2nd", "floor"}


def test_content_words_chinese_and_mixed() -> None:
    assert content_words("我住在上海。") == {"住", "上", "海"}
    assert content_words("好的，谢谢") == set()
    # a mixed run keeps both scripts (the Latin word used to be lost)
    assert content_words("我用Python写爬虫") == {"用", "python", "写", "爬", "虫"}
    # other scripts are words as they are
    assert content_words("ひらがな über café") == {"ひらがな", "über", "café"}


# --- sentences -------------------------------------------------------------------------


def test_split_sentences_english() -> None:
    assert split_sentences("We use Node.js 3.5 now. Really! Why? Yes; done.") == [
        "We use Node.js 3.5 now.",
        "Really!",
        "Why?",
        "Yes;",
        "done.",
    ]
    assert split_sentences("first line\n\nsecond line") == ["first line", "second line"]
    assert split_sentences("  ") == []


def test_split_sentences_chinese_and_mixed() -> None:
    assert split_sentences("我住在上海。我喜欢喝茶！你呢？好；再见") == [
        "我住在上海。",
        "我喜欢喝茶！",
        "你呢？",
        "好；",
        "再见",
    ]
    assert split_sentences("我用Python。 It works. 很好") == ["我用Python。", "It works.", "很好"]
    # a Chinese comma does not end a sentence
    assert split_sentences("如果我是CEO，我会用Rust。") == ["如果我是CEO，我会用Rust。"]


# --- speakers --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "label"),
    [
        (HumanMessage("hi"), "user"),
        (AIMessage("hello"), "assistant"),
        (SystemMessage("be brief"), "system"),
        (HumanMessage("Painting calms me", name="Caroline"), "Caroline"),
        (AIMessage("ok", name="researcher"), "researcher"),
        (HumanMessage("hi", name="  Mary \n Ann "), "Mary Ann"),
        (HumanMessage("hi", name="   "), "user"),
        (ToolMessage("18C", tool_call_id="c1", name="weather"), "tool weather"),
        (ToolMessage("18C", tool_call_id="c1"), "tool"),
        (FunctionMessage("42", name="calc"), "function calc"),
        (ChatMessage(role="Critic ", content="too long"), "critic"),
        (ChatMessage(role="critic", content="too long", name="Bob"), "Bob"),
        (ChatMessage(role=" ", content="?"), "unknown"),
        (SystemMessage("x", name="policy"), "system"),
        (RemoveMessage(id="m1"), "remove"),
    ],
)
def test_speaker_labels(message: object, label: str) -> None:
    assert speaker(message) == label  # type: ignore[arg-type]


def test_role_labels_are_not_people() -> None:
    for label in ("user", "assistant", "system", "tool", "tool weather", "function calc"):
        assert is_role_label(label)
    for label in ("human", "AI", "", "  "):
        assert is_role_label(label)
    for label in ("Caroline", "critic", "researcher", "Mary Ann", "toolmaker"):
        assert not is_role_label(label)


def test_message_text_flattens_content_parts() -> None:
    msg = HumanMessage(content=[{"type": "text", "text": "look"}, {"type": "image_url"}])
    assert message_text(msg) == "look [image_url]"
    assert message_text("plain") == "plain"
    assert message_text(None) == ""
