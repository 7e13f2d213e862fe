"""Hand-written chats of the bilingual users of the recall evaluation set.

They switch between Chinese and English from one session (or one turn) to the next,
and ask in either language. Same format as :mod:`bench._evalset_en`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["USERS"]

MEI: dict[str, Any] = {
    "id": "mix-mei",
    "sessions": [
        (
            "2024-02-05T10:20",
            "en",
            [
                ("job", "I'm Mei, a product designer at Grab in Singapore."),
                ("tool", "Our design team works in Figma, and we hand off with Zeplin."),
                ("pilates", "I do reformer pilates on Tuesday and Thursday evenings."),
            ],
        ),
        (
            "2024-02-14T21:30",
            "zh",
            [
                ("ny", "春节回了厦门老家，初三那天和高中同学聚会了。"),
                ("grandma", "外婆今年九十岁了，身体还很硬朗，每天去公园打太极。"),
                ("gift", "给外婆买了一个按摩椅，花了八千多。"),
            ],
        ),
        (
            "2024-03-04T09:05",
            "en",
            [
                ("tool", "We dropped Zeplin last week, Figma's dev mode does the handoff now."),
                ("visa", "My Employment Pass renewal got approved the day before yesterday."),
                ("plant", "我阳台上的琴叶榕又开始掉叶子了，好烦。"),
            ],
        ),
        (
            "2024-03-25T19:50",
            "zh",
            [
                ("course", "报了一个 UX 研究的线上课程，Coursera 上的，每周要花六个小时。"),
                ("pilates", "普拉提改到周一和周三了，周四老加班。"),
                ("bf", "男朋友 Daniel 是新加坡本地人，在 DBS 做风控。"),
            ],
        ),
        (
            "2024-04-15T12:10",
            "en",
            [
                ("trip", "Daniel and I are going to Hokkaido in June, booked flights yesterday."),
                ("promo", "I got promoted to senior product designer three days ago!"),
                ("grandma", "外婆上周住院了，是肺炎，现在已经出院了。"),
            ],
        ),
    ],
    "questions": [
        ("Where do I work?", "job", "single-fact"),
        ("我在哪家公司做设计？", "job", "cross-lingual"),
        ("How do we do design handoff now?", "tool", "update"),
        ("我们团队现在用什么工具交付设计？", "tool", "cross-lingual"),
        ("Which days do I do pilates?", "pilates", "cross-lingual"),
        ("我的普拉提课现在是哪两天？", "pilates", "update"),
        ("我外婆多大年纪了？", "grandma@0", "single-fact"),
        ("How old is my grandmother?", "grandma@0", "cross-lingual"),
        ("What did I buy my grandma?", "gift", "cross-lingual"),
        ("When was my Employment Pass renewal approved?", "visa", "temporal", "d-2"),
        ("What happened with my Employment Pass on March 2?", "visa", "by-date", "d-2"),
        ("我的工作准证续签什么时候批下来的？", "visa", "cross-lingual", "d-2"),
        ("What's wrong with my fiddle leaf fig?", "plant", "cross-lingual"),
        ("我在上什么网课？", "course", "single-fact"),
        ("Who is my boyfriend and what does he do?", "bf", "cross-lingual"),
        ("When did I book the flights to Hokkaido?", "trip", "temporal", "d-1"),
        ("我什么时候升的职？", "promo", "cross-lingual", "d-3"),
        ("When did I get promoted?", "promo", "temporal", "d-3"),
        ("外婆最近为什么住院？", "grandma", "update"),
        ("我老家在哪里？", "ny", "single-fact"),
        (
            "Where is my boyfriend's bank job, and where are we travelling together in June?",
            "bf+trip",
            "multi-hop",
        ),
    ],
}

KEVIN: dict[str, Any] = {
    "id": "mix-kevin",
    "sessions": [
        (
            "2023-10-09T18:40",
            "zh",
            [
                ("study", "我叫周凯文，在慕尼黑工业大学读机械工程硕士。"),
                ("flat", "现在住在学校宿舍，一个月 420 欧。"),
                ("german", "德语在学 B1，每周一三五晚上上课。"),
            ],
        ),
        (
            "2023-10-23T20:15",
            "en",
            [
                ("job", "I got a Werkstudent job at BMW, 20 hours a week in battery testing."),
                ("bike", "Bought a second-hand bike on Kleinanzeigen for 90 euros last Saturday."),
                ("thesis", "我的毕业论文想做电池热管理，还在找导师。"),
            ],
        ),
        (
            "2023-11-13T22:05",
            "zh",
            [
                ("mom", "我妈前天视频的时候说我爸血压又高了，我有点担心。"),
                ("thesis", "论文导师定了，是 Professor Huber，做电池热管理的。"),
                ("flat", "I'm moving out of the dorm into a WG in Schwabing, 650 euros warm."),
            ],
        ),
        (
            "2023-12-04T19:30",
            "en",
            [
                ("german", "Passed the B1 exam! Starting B2 in January."),
                ("xmas", "圣诞节打算跟室友去维也纳玩三天。"),
                (
                    "flight",
                    "Booked a flight home to Hangzhou for Chinese New Year, leaving February 5.",
                ),
            ],
        ),
        (
            "2024-01-15T21:00",
            "zh",
            [
                ("job", "宝马的工作续签了半年，时薪涨到 18 欧了。"),
                ("bike", "自行车昨天又被偷了，慕尼黑偷车贼太多了。"),
                ("food", "最近自己学做红烧肉，已经做得像模像样了。"),
            ],
        ),
    ],
    "questions": [
        ("我在哪所大学读研？", "study", "single-fact"),
        ("What am I studying?", "study", "cross-lingual"),
        ("我现在房租多少钱？", "flat", "cross-lingual"),
        ("Where do I live now?", "flat", "update"),
        ("我德语学到什么水平了？", "german", "cross-lingual"),
        ("Did I pass my German exam?", "german", "update"),
        ("Where do I work part-time?", "job@0", "single-fact"),
        ("我在宝马的时薪现在是多少？", "job", "update"),
        ("When did I buy my bike?", "bike@0", "temporal", "last:sat"),
        ("What did I buy on October 21?", "bike@0", "by-date", "last:sat"),
        ("我的自行车多少钱买的？", "bike@0", "cross-lingual"),
        ("我的自行车什么时候被偷的？", "bike", "temporal", "d-1"),
        ("Who is my thesis supervisor?", "thesis", "cross-lingual"),
        ("我的毕业论文做什么方向？", "thesis", "single-fact"),
        ("我妈什么时候跟我说爸爸血压高的？", "mom", "temporal", "d-2"),
        ("Where am I going for Christmas?", "xmas", "cross-lingual"),
        ("我什么时候飞回杭州？", "flight", "cross-lingual", "=2024-02-05"),
        ("What dish have I been learning to cook?", "food", "cross-lingual"),
        (
            "What's my thesis topic and how many hours a week do I work at BMW?",
            "thesis+job@0",
            "multi-hop",
        ),
        ("What's my dad's health issue?", "mom", "cross-lingual"),
    ],
}

JORDAN: dict[str, Any] = {
    "id": "mix-jordan",
    "sessions": [
        (
            "2024-05-06T16:00",
            "en",
            [
                (
                    "move",
                    "I'm Jordan, I just moved from Austin to Taipei to study Mandarin at NTU.",
                ),
                (
                    "db",
                    "I also freelance: I maintain a bakery chain's Django app, it runs on SQLite.",
                ),
                ("teacher", "My Mandarin teacher is 陈老师, she's super patient."),
            ],
        ),
        (
            "2024-05-20T20:45",
            "zh",
            [
                ("food", "我最喜欢的小吃是卤肉饭，学校旁边那家三十五块一碗。"),
                ("scooter", "我上周五考到了机车驾照！"),
                ("hsk", "我打算十月考 HSK 四级。"),
            ],
        ),
        (
            "2024-06-10T11:30",
            "en",
            [
                (
                    "db",
                    "Moved the bakery app from SQLite to Postgres on Render; SQLite kept locking.",
                ),
                ("bug", "The order export crashed two days ago because of a timezone bug."),
                ("roomie", "My roommate 阿伟 is from Tainan, he's teaching me Taiwanese slang."),
            ],
        ),
        (
            "2024-07-01T21:10",
            "zh",
            [
                ("hsk", "HSK 改成报五级了，老师说我可以挑战一下。"),
                ("sick", "三天前吃坏肚子了，可能是路边的芒果冰。"),
                ("rate", "The bakery agreed to raise my rate to 45 dollars an hour."),
            ],
        ),
        (
            "2024-07-22T18:25",
            "en",
            [
                ("trip", "I'm going hiking on Hehuanshan next Saturday with 阿伟."),
                ("mom", "My mom is visiting Taipei in September, I need to find her a hotel."),
                ("db", "We're adding Redis in front of Postgres for the menu cache."),
            ],
        ),
    ],
    "questions": [
        ("Which database does the bakery app use?", "db@1", "update"),
        (
            "Which database do we use for the bakery app now, and why did we leave SQLite?",
            "db@1",
            "update",
        ),
        ("面包店的应用现在用什么数据库？", "db@1", "cross-lingual"),
        ("What did we put in front of Postgres?", "db", "single-fact"),
        ("Where did I move from?", "move", "single-fact"),
        ("我在哪里学中文？", "move", "cross-lingual"),
        ("Who is my Mandarin teacher?", "teacher", "single-fact"),
        ("What's my favourite snack?", "food", "cross-lingual"),
        ("When did I get my scooter license?", "scooter", "cross-lingual", "lastweek:fri"),
        ("我什么时候考到的机车驾照？", "scooter", "temporal", "lastweek:fri"),
        ("5月17号我考到了什么？", "scooter", "by-date", "lastweek:fri"),
        ("我要考 HSK 几级？", "hsk", "update"),
        ("Which HSK level am I taking?", "hsk", "cross-lingual"),
        ("When did the order export crash?", "bug", "temporal", "d-2"),
        ("What caused the export crash?", "bug", "single-fact"),
        ("我室友是哪里人？", "roomie", "cross-lingual"),
        ("我什么时候吃坏的肚子？", "sick", "temporal", "d-3"),
        ("What's my hourly rate with the bakery?", "rate", "single-fact"),
        ("When am I hiking Hehuanshan?", "trip", "temporal", "next:sat"),
        ("Who is visiting me in September?", "mom", "single-fact"),
        ("Who am I hiking with, and where is he from?", "trip+roomie", "multi-hop"),
    ],
}

USERS: tuple[dict[str, Any], ...] = (MEI, KEVIN, JORDAN)
