"""More hand-written chats of English-speaking users (format: :mod:`bench._evalset_en`)."""

from __future__ import annotations

from typing import Any

__all__ = ["USERS"]

GRACE: dict[str, Any] = {
    "id": "en-grace",
    "sessions": [
        (
            "2023-11-06T12:30",
            "en",
            [
                ("phd", "I'm a third-year PhD student in marine biology at UC San Diego."),
                ("topic", "My thesis is on heat stress in Pocillopora corals."),
                ("advisor", "My advisor is Dr. Kamakana, she's strict but fair."),
                "The campus coffee is terrible, by the way.",
            ],
        ),
        (
            "2023-11-14T16:50",
            "en",
            [
                ("fieldwork", "I'm going diving in Moorea for fieldwork, leaving on December 2."),
                (
                    "tank",
                    "An aquarium tank crashed the day before yesterday, lost six coral fragments.",
                ),
                ("allergy", "I'm allergic to shellfish, so dinners on the station are always fun."),
            ],
        ),
        (
            "2023-12-18T10:15",
            "en",
            [
                ("fieldwork", "Back from Moorea! Collected 40 samples, way more than planned."),
                ("paper", "Submitted my first-author paper to Coral Reefs last Wednesday."),
                ("funding", "My NSF fellowship covers me until August 2025."),
            ],
        ),
        (
            "2024-01-22T09:00",
            "en",
            [
                ("paper", "Coral Reefs sent reviews: major revisions, due in 60 days."),
                ("teaching", "I'm TAing Intro to Ecology this quarter, Tuesday and Thursday labs."),
                ("bike", "Someone stole my bike from outside the library yesterday."),
            ],
        ),
        (
            "2024-02-26T14:40",
            "en",
            [
                (
                    "paper",
                    "The paper got accepted! I resubmitted the revisions two weeks ago.",
                ),
                ("conf", "I'll present at the Ocean Sciences Meeting in New Orleans in March."),
                ("bike", "Bought a used Trek to replace the stolen bike, $300."),
            ],
        ),
    ],
    "questions": [
        ("What's my PhD field?", "phd", "single-fact"),
        ("What's my thesis about?", "topic", "single-fact"),
        ("Who is my advisor?", "advisor", "single-fact"),
        ("How many samples did I bring back from fieldwork?", "fieldwork", "single-fact"),
        ("Where did I do my fieldwork?", "fieldwork", "single-fact"),
        ("When did the aquarium tank crash?", "tank", "temporal", "d-2"),
        ("What went wrong in the lab on November 12?", "tank", "by-date", "d-2"),
        ("What am I allergic to?", "allergy", "single-fact"),
        ("What's the status of my paper?", "paper", "update"),
        ("When did I first submit my paper?", "paper@0", "temporal", "last:wed"),
        ("Until when is my fellowship funded?", "funding", "single-fact"),
        ("Which course am I TAing?", "teaching", "single-fact"),
        ("When was my bike stolen?", "bike@0", "temporal", "d-1"),
        ("What bike do I ride now?", "bike", "single-fact"),
        ("Where is the Ocean Sciences Meeting?", "conf", "single-fact"),
        ("我对什么食物过敏？", "allergy", "cross-lingual"),
        ("我的导师是谁？", "advisor", "cross-lingual"),
        ("我的论文被接收了吗？", "paper", "cross-lingual"),
        ("Which journal accepted my paper?", "paper@0+paper", "multi-hop"),
        ("When did I leave for Moorea?", "fieldwork@0", "temporal", "=2023-12-02"),
        ("What days are my ecology labs?", "teaching", "single-fact"),
    ],
}

LIAM: dict[str, Any] = {
    "id": "en-liam",
    "sessions": [
        (
            "2024-09-02T23:10",
            "en",
            [
                ("job", "I'm the head chef at Olive & Thyme, a Mediterranean place in Portland."),
                ("menu", "We're launching the fall menu next Tuesday, lamb shoulder is the star."),
                (
                    "supplier",
                    "Our produce comes from Sauvie Island Farms, delivered Mondays and Thursdays.",
                ),
            ],
        ),
        (
            "2024-09-10T22:55",
            "en",
            [
                ("review", "The Oregonian reviewer came in on Saturday night, we think."),
                ("staff", "My sous chef Marco gave notice, his last day is the 27th."),
                ("burn", "Burned my forearm on the salamander three days ago, it's blistering."),
            ],
        ),
        (
            "2024-09-30T15:00",
            "en",
            [
                ("review", "The review came out: three and a half stars, they loved the octopus."),
                ("staff", "Promoted Aisha from line cook to sous chef."),
                (
                    "supplier",
                    "Switched our produce to Rosecrest Farm, Sauvie Island kept shorting us.",
                ),
                "The dishwasher broke again, naturally.",
            ],
        ),
        (
            "2024-10-14T10:30",
            "en",
            [
                (
                    "popup",
                    "We're doing a pop-up dinner in Seattle on November 9 with chef Ren Ito.",
                ),
                (
                    "daughter",
                    "My daughter Nora turned six last Sunday, we made a chocolate olive oil cake.",
                ),
                ("knife", "I finally bought the Takamura gyuto I wanted, 210 mm."),
            ],
        ),
        (
            "2024-11-12T21:40",
            "en",
            [
                ("popup", "The Seattle pop-up sold out, 80 covers, best night of the year."),
                (
                    "menu",
                    "Lamb shoulder is coming off the menu; duck confit replaces it for winter.",
                ),
                ("sleep", "I've been sleeping four hours a night, need to fix that."),
            ],
        ),
    ],
    "questions": [
        ("Which restaurant do I run the kitchen at?", "job", "single-fact"),
        ("What's the main dish on our menu right now?", "menu", "update"),
        ("When did the fall menu launch?", "menu@0", "temporal", "nextweek:tue"),
        ("Who supplies our produce?", "supplier", "update"),
        ("What did the Oregonian review say?", "review", "update"),
        ("Who is my sous chef?", "staff", "update"),
        ("When did I burn my arm?", "burn", "temporal", "d-3"),
        ("How did I get hurt on September 7?", "burn", "by-date", "d-3"),
        ("How did I hurt my forearm?", "burn", "single-fact"),
        ("Who am I doing the Seattle pop-up with?", "popup@0", "single-fact"),
        ("How many covers did the pop-up do?", "popup", "single-fact"),
        ("How old is my daughter?", "daughter", "single-fact"),
        ("When was Nora's birthday?", "daughter", "temporal", "last:sun"),
        ("What knife did I buy?", "knife", "single-fact"),
        ("How much am I sleeping?", "sleep", "single-fact"),
        ("我们餐厅冬天的菜单换成了什么？", "menu", "cross-lingual"),
        ("我女儿几岁了？", "daughter", "cross-lingual"),
        ("我们现在的蔬菜供应商是哪家？", "supplier", "cross-lingual"),
        ("What cake did we make for Nora's birthday?", "daughter", "single-fact"),
        (
            "Which dish did the critic love, and who runs the line with me now?",
            "review+staff",
            "multi-hop",
        ),
        ("Why did we change produce suppliers?", "supplier", "update"),
    ],
}

USERS: tuple[dict[str, Any], ...] = (GRACE, LIAM)
