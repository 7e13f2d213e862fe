"""Hand-written chatter for the recall evaluation set (every turn here is marked ``chatter``).

Greetings and goodbyes open and close sessions; acknowledgements follow facts; filler
and tool-call noise (narration, tool results, errors) sit between the facts.
"""

from __future__ import annotations

__all__ = ["ACKS", "FILLER", "GOODBYES", "GREETINGS", "TOOL_NOISE"]

GREETINGS: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("Hi!", "Hello! How can I help today?"),
        ("hey there", "Hey! What's up?"),
        ("Good morning :)", "Good morning! What are we working on?"),
        ("Hello again", "Welcome back! How can I help?"),
        ("yo", "Hi! What can I do for you?"),
        ("Hi, quick one", "Sure, go ahead."),
        ("evening!", "Good evening! What's on your mind?"),
    ],
    "zh": [
        ("你好", "你好！今天有什么可以帮你的？"),
        ("嗨", "嗨！有什么事吗？"),
        ("早上好", "早上好！今天想做点什么？"),
        ("在吗？", "在的，请说。"),
        ("哈喽", "哈喽！需要我做什么？"),
        ("晚上好呀", "晚上好！有什么需要帮忙的吗？"),
        ("我又来啦", "欢迎回来！今天聊点什么？"),
    ],
}

GOODBYES: dict[str, list[tuple[str, str]]] = {
    "en": [
        ("thanks, that's all", "You're welcome! Talk soon."),
        ("ok bye", "Bye! Have a good one."),
        ("Thanks!", "Anytime!"),
        ("gotta run", "No problem, see you later."),
        ("cheers", "Cheers!"),
        ("that's it for now", "Sounds good. See you next time!"),
    ],
    "zh": [
        ("谢谢，就这些", "不客气，随时找我！"),
        ("好的拜拜", "拜拜！"),
        ("先这样吧", "好的，回头见。"),
        ("多谢", "不用谢！"),
        ("我去忙了", "好的，有事再叫我。"),
        ("晚安", "晚安，好梦！"),
    ],
}

ACKS: dict[str, list[str]] = {
    "en": [
        "Noted.",
        "Got it!",
        "Okay.",
        "Sure thing.",
        "Thanks for letting me know.",
        "Understood.",
        "Noted, thanks.",
        "Got it, I'll remember that.",
        "Alright!",
        "Good to know.",
        "Makes sense.",
        "Okay, noted.",
    ],
    "zh": [
        "好的",
        "收到",
        "明白了。",
        "好的，记下了。",
        "了解。",
        "嗯嗯，知道了。",
        "没问题。",
        "好的，我记住了。",
        "收到，谢谢告诉我。",
        "明白。",
        "好嘞！",
    ],
}

FILLER: dict[str, list[str]] = {
    "en": [
        "haha ok",
        "hmm let me think",
        "one sec",
        "lol",
        "ok cool",
        "wait what",
        "nvm",
        "sorry, got distracted",
        "yeah",
        "hmm",
        "right",
        "brb",
        "ok ok",
        "interesting",
        "sure",
        "test",
        "?",
        "k thanks",
    ],
    "zh": [
        "哈哈好",
        "嗯……我想想",
        "等一下",
        "哈哈哈",
        "好吧",
        "啊？",
        "算了",
        "不好意思刚才走开了",
        "对",
        "嗯",
        "行",
        "马上回来",
        "好好好",
        "有意思",
        "测试一下",
        "？",
        "ok 谢谢",
    ],
}

_ToolChat = list[tuple[str, str, str]]  # (role, tool name, text)

TOOL_NOISE: dict[str, list[_ToolChat]] = {
    "en": [
        [
            ("assistant", "", "Let me search the docs for that."),
            ("tool", "search_docs", "error 429 rate limited"),
            ("assistant", "", "The search tool is rate limited right now; I'll try again later."),
        ],
        [
            ("assistant", "", "Calling the weather tool..."),
            ("tool", "get_weather", "14°C, light rain, wind 12 km/h"),
        ],
        [
            ("assistant", "", "One moment, checking your calendar."),
            ("tool", "calendar_lookup", "error: timeout after 10s"),
            ("assistant", "", "Sorry, the calendar lookup timed out."),
        ],
        [
            ("tool", "web_fetch", "HTTP 503 Service Unavailable"),
            ("assistant", "", "That page didn't load, retrying."),
        ],
        [
            ("assistant", "", "Running a quick search..."),
            ("tool", "search_docs", "0 results"),
        ],
        [
            ("assistant", "", "I'll use the calculator tool."),
            ("tool", "calculator", "result: 42"),
        ],
        [
            ("tool", "memory_write", "ok"),
        ],
        [
            ("assistant", "", "Let me look that up."),
            ("tool", "search_web", "error: connection reset by peer"),
            ("assistant", "", "The web search failed, sorry about that."),
        ],
    ],
    "zh": [
        [
            ("assistant", "", "我查一下文档。"),
            ("tool", "search_docs", "error 429 rate limited"),
            ("assistant", "", "搜索工具被限流了，我稍后再试。"),
        ],
        [
            ("assistant", "", "正在调用天气工具……"),
            ("tool", "get_weather", "北京 晴 23°C 东南风2级"),
        ],
        [
            ("assistant", "", "稍等，我看看你的日程。"),
            ("tool", "calendar_lookup", "错误：请求超时（10秒）"),
            ("assistant", "", "抱歉，日程查询超时了。"),
        ],
        [
            ("tool", "web_fetch", "HTTP 503 服务不可用"),
            ("assistant", "", "网页没打开，我重试一下。"),
        ],
        [
            ("assistant", "", "我搜索一下……"),
            ("tool", "search_docs", "未找到结果"),
        ],
        [
            ("assistant", "", "我用计算器算一下。"),
            ("tool", "calculator", "结果：128"),
        ],
        [
            ("tool", "memory_write", "ok"),
        ],
        [
            ("assistant", "", "我上网查一下。"),
            ("tool", "search_web", "错误：连接被重置"),
            ("assistant", "", "网络搜索失败了，不好意思。"),
        ],
    ],
}
