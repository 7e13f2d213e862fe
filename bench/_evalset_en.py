"""Hand-written chats of the English-speaking users of the recall evaluation set.

Each user: sessions as ``(ISO date, chatter language, items)``; an item is small talk
(a string), a user fact ``(key, text)`` / ``(key, text, assistant reply)`` or an
assistant fact ``("@key", text)``. A key stated again later is an update (the latest
statement is the evidence). Questions: ``(text, "key" or "key1+key2", category[, time
code])``; the time code labels the answer date (:func:`bench._evalset.resolve_when`).
"""

from __future__ import annotations

from typing import Any

__all__ = ["USERS"]

ADA: dict[str, Any] = {
    "id": "en-ada",
    "sessions": [
        (
            "2024-01-08T09:15",
            "en",
            [
                ("intro", "Hi! I'm Ada. I work as a data engineer and I use Python every day."),
                ("db", "We moved from MySQL to PostgreSQL last year."),
                "What's the weather in Paris?",
                ("report", "Remember this: the quarterly report is due on Friday, January 12."),
                ("laptop", "My work laptop is a ThinkPad X1 Carbon, the 2022 model."),
            ],
        ),
        (
            "2024-01-16T14:02",
            "en",
            [
                ("pipeline", "The nightly ETL pipeline runs on Airflow, scheduled at 2 a.m. UTC."),
                ("standup", "Our standup moved to 9:45 because half the team is in Lisbon."),
                (
                    "lunch",
                    "I had lunch with my old manager Priya two days ago, she's at Stripe now.",
                ),
            ],
        ),
        (
            "2024-02-02T10:30",
            "en",
            [
                (
                    "warehouse",
                    "Analytics data now goes into ClickHouse; the app itself stays on Postgres.",
                ),
                (
                    "cat",
                    "My cat Miso knocked coffee onto my keyboard yesterday. The laptop survived.",
                ),
                "Can you recommend a good book on distributed systems?",
            ],
        ),
        (
            "2024-02-20T16:45",
            "en",
            [
                ("laptop", "The ThinkPad finally died. I'm on a MacBook Pro M3 now."),
                (
                    "conf",
                    "I'm giving a talk at PyCon Italia in Florence next month on data contracts.",
                    "Congrats! Data contracts are a great topic.",
                ),
            ],
        ),
        (
            "2024-03-05T11:20",
            "en",
            [
                (
                    "standup",
                    "Standup is back to 9:30 now that the Lisbon folks changed their hours.",
                ),
                ("oncall", "Heads up: I'm on call all of next week, Monday to Sunday."),
                (
                    "vacation",
                    "After the conference I'm taking five days off in Siena with my sister.",
                ),
            ],
        ),
    ],
    "questions": [
        ("Which database do we use?", "db", "single-fact"),
        ("What did we migrate away from MySQL to?", "db", "single-fact"),
        ("What do I do for a living?", "intro", "single-fact"),
        ("When is the quarterly report due?", "report", "temporal", "=2024-01-12"),
        ("What laptop do I use for work?", "laptop", "update"),
        ("Which computer am I working on these days?", "laptop", "update"),
        ("Which tool orchestrates our nightly ETL?", "pipeline", "single-fact"),
        ("What time does the nightly pipeline run?", "pipeline", "single-fact"),
        ("What time is our standup?", "standup", "update"),
        ("When did I have lunch with Priya?", "lunch", "temporal", "d-2"),
        ("Where does my former manager work now?", "lunch", "single-fact"),
        ("Where does our analytics data live?", "warehouse", "single-fact"),
        ("What happened to my keyboard?", "cat", "single-fact"),
        ("When did Miso spill my coffee?", "cat", "temporal", "d-1"),
        ("What did Miso do on February 1?", "cat", "by-date", "d-1"),
        ("Who did I have lunch with on January 14?", "lunch", "by-date", "d-2"),
        ("What's my talk at PyCon Italia about?", "conf", "single-fact"),
        ("When am I on call?", "oncall", "temporal", "nextweek:mon"),
        ("Who am I going to Siena with?", "vacation", "single-fact"),
        ("我们用的是什么数据库？", "db", "cross-lingual"),
        ("我的猫叫什么名字？", "cat", "cross-lingual"),
        ("我下个月在哪个城市做演讲？", "conf", "cross-lingual"),
        ("After my talk in Florence, where am I going on holiday?", "conf+vacation", "multi-hop"),
    ],
}

MARCUS: dict[str, Any] = {
    "id": "en-marcus",
    "sessions": [
        (
            "2023-09-04T07:10",
            "en",
            [
                ("job", "I teach chemistry at Lincoln High, mostly tenth graders."),
                (
                    "goal",
                    "I signed up for the Chicago Marathon in October. First full marathon ever!",
                ),
                ("shoes", "I run in Brooks Ghost 15s, size 11."),
                "Is it normal for my calves to be sore after tempo runs?",
            ],
        ),
        (
            "2023-09-12T20:30",
            "en",
            [
                (
                    "longrun",
                    "Did my longest run so far last Saturday: 18 miles along the lakefront.",
                ),
                ("knee", "My left knee has been a bit cranky since then, nothing serious I think."),
                (
                    "diet",
                    "I've cut out dairy for a few weeks to see if it helps my stomach on runs.",
                ),
            ],
        ),
        (
            "2023-09-25T18:05",
            "en",
            [
                (
                    "physio",
                    "Saw a physio three days ago: IT band tightness, not the knee itself.",
                ),
                ("shoes", "Switched to Hoka Clifton 9s on the physio's advice."),
                ("class", "My AP class has 28 students this year, the biggest I've ever had."),
            ],
        ),
        (
            "2023-10-03T06:45",
            "en",
            [
                (
                    "pace",
                    "Target pace for the marathon is 9:10 per mile, aiming for about four hours.",
                ),
                (
                    "wife",
                    "My wife Dana is flying in to cheer; she lands the Saturday before the race.",
                ),
                "Any tips for sleeping the night before a race?",
            ],
        ),
        (
            "2023-10-10T21:15",
            "en",
            [
                ("result", "I finished the marathon on Sunday in 4:07:32! Legs are destroyed."),
                ("next", "Thinking about the Boston qualifier next, I'd need a 3:25 though."),
                ("diet", "I went back to eating dairy, the experiment didn't change anything."),
            ],
        ),
    ],
    "questions": [
        ("What subject do I teach?", "job", "single-fact"),
        ("Which marathon did I sign up for?", "goal", "single-fact"),
        ("What running shoes am I wearing now?", "shoes", "update"),
        ("What shoe size do I take?", "shoes@0", "single-fact"),
        ("When did I do my 18 mile run?", "longrun", "temporal", "last:sat"),
        ("What's my longest training run?", "longrun", "single-fact"),
        ("Which knee was bothering me?", "knee", "single-fact"),
        ("When did I see the physio?", "physio", "temporal", "d-3"),
        ("What did the physio say was wrong?", "physio", "single-fact"),
        ("Am I still avoiding dairy?", "diet", "update"),
        ("How many students are in my AP class?", "class", "single-fact"),
        ("What pace am I aiming for in the race?", "pace", "single-fact"),
        ("Who is coming to watch me run?", "wife", "single-fact"),
        ("What was my marathon finishing time?", "result", "single-fact"),
        ("When did I run the marathon?", "result", "temporal", "last:sun"),
        ("How far did I run on Saturday, September 9?", "longrun", "by-date", "last:sat"),
        ("What happened on October 8?", "result", "by-date", "last:sun"),
        ("What time would I need for a Boston qualifier?", "next", "single-fact"),
        ("我跑马拉松用了多长时间？", "result", "cross-lingual"),
        ("我在学校教什么课？", "job", "cross-lingual"),
        ("理疗师建议我换成哪款跑鞋？", "shoes", "cross-lingual"),
        (
            "How far off my marathon time was I from my target of about four hours?",
            "pace+result",
            "multi-hop",
        ),
    ],
}

SOFIA: dict[str, Any] = {
    "id": "en-sofia",
    "sessions": [
        (
            "2024-04-02T22:40",
            "en",
            [
                ("job", "Just got off a twelve hour night shift. I'm an ICU nurse at St. Mary's."),
                ("move", "I'm moving out of my place in Astoria at the end of the month."),
                ("budget", "My budget for the new apartment is $2,400 a month, max."),
            ],
        ),
        (
            "2024-04-09T13:00",
            "en",
            [
                (
                    "viewing",
                    "I saw a one-bedroom in Park Slope yesterday, loved the light but it's $2,650.",
                ),
                ("dog", "It has to allow dogs, my beagle Pepper comes with me no matter what."),
                "ugh, the subway was a nightmare this morning",
            ],
        ),
        (
            "2024-04-16T09:20",
            "en",
            [
                ("lease", "Signed the lease last Friday! Two-bedroom in Sunnyside, $2,300."),
                ("roommate", "My cousin Lucia will take the second bedroom and pay $1,000."),
                ("movers", "Booked movers called Brooklyn Hauling for the 28th."),
            ],
        ),
        (
            "2024-05-01T19:10",
            "en",
            [
                ("shift", "They moved me to day shifts starting this week, finally."),
                (
                    "neighbor",
                    "Our downstairs neighbor Mr. Okafor brought us jollof rice as a welcome.",
                ),
                ("wifi", "The Wi-Fi here is Verizon Fios, the password is on the fridge."),
            ],
        ),
        (
            "2024-05-20T17:35",
            "en",
            [
                (
                    "course",
                    "I enrolled in a critical care certification course (CCRN), exam is in August.",
                ),
                ("dog", "Pepper had surgery on her paw two weeks ago, she's healing well."),
                ("roommate", "Lucia is moving out in June, so I'm looking for a new roommate."),
            ],
        ),
    ],
    "questions": [
        ("Where do I work?", "job", "single-fact"),
        ("What kind of nurse am I?", "job", "single-fact"),
        ("Which neighbourhood was I moving out of?", "move", "single-fact"),
        ("What was my monthly budget for rent?", "budget", "single-fact"),
        ("How much was the Park Slope apartment?", "viewing", "single-fact"),
        ("When did I see the place in Park Slope?", "viewing", "temporal", "d-1"),
        ("When did I sign the lease?", "lease", "temporal", "last:fri"),
        ("What did I sign on April 12?", "lease", "by-date", "last:fri"),
        ("Where is my new apartment and what's the rent?", "lease", "single-fact"),
        ("Which moving company did I book?", "movers", "single-fact"),
        ("What's my roommate situation right now?", "roommate", "update"),
        ("Is Lucia staying in the apartment?", "roommate", "update"),
        ("Am I working nights or days now?", "shift", "single-fact"),
        ("What did our neighbour bring us?", "neighbor", "single-fact"),
        ("Who is our internet provider?", "wifi", "single-fact"),
        ("What certification am I studying for?", "course", "single-fact"),
        ("When did Pepper have surgery?", "dog", "temporal", "w-2"),
        ("What's my dog's name and breed?", "dog@0", "single-fact"),
        ("我的狗做了什么手术？", "dog", "cross-lingual"),
        ("我新公寓的房租是多少？", "lease", "cross-lingual"),
        ("Was my new apartment within my rent budget?", "budget+lease", "multi-hop"),
        ("How much of the rent does my cousin cover?", "roommate@0", "single-fact"),
    ],
}

TOM: dict[str, Any] = {
    "id": "en-tom",
    "sessions": [
        (
            "2024-06-03T10:00",
            "en",
            [
                (
                    "startup",
                    "I co-founded Fernway, we build scheduling software for dental clinics.",
                ),
                ("stack", "Our backend is Go with a React frontend, deployed on Fly.io."),
                ("cofounder", "My co-founder is Hannah Reyes, she handles sales and ops."),
                ("runway", "We have about 14 months of runway after the seed round."),
                ("pricing", "Clinics pay us $199 a month per location, billed yearly."),
            ],
        ),
        (
            "2024-06-11T15:30",
            "en",
            [
                ("customer", "We signed our tenth clinic last Thursday, Bright Smiles in Tucson."),
                ("hire", "I'm hiring a senior backend engineer, budget around $170k plus equity."),
                "Can you help me write a job post later?",
            ],
        ),
        (
            "2024-06-24T09:45",
            "en",
            [
                ("stack", "We moved off Fly.io to AWS ECS because of the HIPAA requirements."),
                ("hire", "Hired! Jonas starts on July 8, he was at Shopify before."),
                ("pricing", "We raised our price from $199 to $249 per clinic per month."),
            ],
        ),
        (
            "2024-07-15T11:10",
            "en",
            [
                (
                    "investor",
                    "Had a great call with an investor from Accel the day before yesterday.",
                ),
                ("churn", "Lost one clinic this month, they said the SMS reminders were flaky."),
                ("sms", "We're switching SMS providers from Twilio to MessageBird to fix that."),
            ],
        ),
        (
            "2024-08-02T16:20",
            "en",
            [
                ("runway", "After cutting costs we're at roughly 17 months of runway."),
                ("offsite", "Team offsite is in Asheville the week of August 19."),
                ("kid", "My son Theo started kindergarten this week, emotional day."),
            ],
        ),
    ],
    "questions": [
        ("What does my company make?", "startup", "single-fact"),
        ("Where do we deploy our backend?", "stack", "update"),
        ("Why did we move our hosting?", "stack", "update"),
        ("What language is our backend written in?", "stack@0", "single-fact"),
        ("Who is my co-founder?", "cofounder", "single-fact"),
        ("How much runway do we have?", "runway", "update"),
        ("When did we sign the tenth clinic?", "customer", "temporal", "last:thu"),
        ("Which clinic was our tenth customer?", "customer", "single-fact"),
        ("Who did we hire as backend engineer?", "hire", "update"),
        ("When does Jonas start?", "hire", "temporal", "=2024-07-08"),
        ("How much do we charge per clinic?", "pricing", "update"),
        ("When did I talk to the Accel investor?", "investor", "temporal", "d-2"),
        ("Who did I have a call with on July 13?", "investor", "by-date", "d-2"),
        ("Why did a clinic churn?", "churn", "single-fact"),
        ("Which SMS provider are we moving to?", "sms", "single-fact"),
        ("Where is the team offsite?", "offsite", "single-fact"),
        ("What's my son's name?", "kid", "single-fact"),
        ("我们公司的产品是做什么的？", "startup", "cross-lingual"),
        ("我儿子这周开始上什么学？", "kid", "cross-lingual"),
        ("我们的短信服务商要换成哪家？", "sms", "cross-lingual"),
        ("Which customer complaint made us change SMS providers?", "churn+sms", "multi-hop"),
    ],
}

USERS: tuple[dict[str, Any], ...] = (ADA, MARCUS, SOFIA, TOM)
