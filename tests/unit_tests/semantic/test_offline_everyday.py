"""Offline extraction of everyday facts: diet, allergies, health, home, family, pets, job.

Each statement is one turn of a one-turn session through ``MemoryLayers.add`` with no
model (the path a user without a model takes), in English and Chinese; statements about
someone else, questions and hypotheticals store nothing.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from langmem_layers import MemoryLayers


@pytest.fixture(scope="module")
def memory(tmp_path_factory: pytest.TempPathFactory) -> Iterator[MemoryLayers]:
    with MemoryLayers.open(tmp_path_factory.mktemp("everyday")) as layers:
        yield layers


def _profile(memory: MemoryLayers, uid: str, text: str) -> set[str]:
    memory.add([("user", text)], user_id=uid)
    return {item.text for item in memory.get_all(user_id=uid).profile}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # diet
        ("I'm vegetarian.", {"context.diet: vegetarian"}),
        ("I've been vegan for five years.", {"context.diet: vegan"}),
        ("I don't eat spicy food.", {"facts: doesn't eat spicy food"}),
        ("我是素食者。", {"context.diet: 素食"}),
        ("我吃素", {"context.diet: 素食"}),
        ("我不吃辣。", {"facts: 不吃辣"}),
        # allergies, intolerances, health
        ("I have a severe shellfish allergy.", {"facts: allergic to shellfish (severe)"}),
        ("I'm allergic to penicillin.", {"facts: allergic to penicillin"}),
        ("I'm lactose intolerant", {"facts: lactose intolerant"}),
        ("I have asthma.", {"facts: has asthma"}),
        ("我对花生过敏。", {"facts: 对花生过敏"}),
        ("我有哮喘", {"facts: 有哮喘"}),
        # home and origin
        ("I work remotely from Berlin.", {"context.location: Berlin"}),
        (
            "I grew up in Nairobi but moved to Toronto in 2019.",
            {"context.hometown: Nairobi", "context.location: Toronto"},
        ),
        ("我住在成都", {"context.location: 成都"}),
        ("我老家在重庆", {"context.hometown: 重庆"}),
        ("我是北京人。", {"context.hometown: 北京"}),  # neither a name nor a job: an origin
        # children and pets, by name
        ("I have two kids and a dog named Max.", {"facts: has two kids", "context.dog: Max"}),
        (
            "We have three kids, the youngest is Mia.",
            {"facts: has three kids", "context.youngest child: Mia"},
        ),
        ("My dog is called Rex.", {"context.dog: Rex"}),
        ("My daughter is named Lily.", {"context.daughter: Lily"}),
        ("我家的猫叫咪咪", {"context.cat: 咪咪"}),
        ("我女儿叫朵朵", {"context.daughter: 朵朵"}),
        ("大的叫乐乐", {"context.eldest child: 乐乐"}),
        # job
        (
            "I'm a Python backend developer working on LLM deployment.",
            {"context.role: Python backend developer"},
        ),
        (
            "These days I teach high school chemistry.",
            {"context.role: high school chemistry teacher"},
        ),
        (
            "我叫小王，在上海做前端开发",
            {"context.name: 小王", "context.location: 上海", "context.role: 前端开发"},
        ),
        ("我在小学教语文", {"context.employer: 小学", "context.role: 语文老师"}),
        # skills and how to answer
        ("I know Go pretty well.", {"skills: Go"}),
        ("I also know TypeScript.", {"skills: TypeScript"}),
        ("Please keep answers short.", {"preferences.answer_style: short answers"}),
    ],
)
def test_a_single_statement_is_kept(memory: MemoryLayers, text: str, expected: set[str]) -> None:
    uid = f"u-{abs(hash(text))}"
    assert _profile(memory, uid, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # diets said other ways, foods a body does not take
        ("I'm on keto at the moment.", {"context.diet: keto"}),
        ("I only eat kosher.", {"context.diet: kosher"}),
        ("My partner and I are both vegetarian.", {"context.diet: vegetarian"}),
        ("Pescatarian here, so fish is fine.", {"context.diet: pescatarian"}),
        ("I can't tolerate dairy, sadly.", {"facts: can't tolerate dairy"}),
        ("I'm type 1 diabetic.", {"facts: type 1 diabetes"}),
        ("我最近在吃生酮", {"context.diet: 生酮"}),
        ("我吃不了辣", {"facts: 吃不了辣"}),
        ("我芒果过敏", {"facts: 对芒果过敏"}),
        ("我有点麸质不耐受", {"facts: 麸质不耐受"}),
        ("我腰不好", {"facts: 腰不好"}),
        # a job said forum-style, home and origin said other ways
        ("ICU nurse here.", {"context.role: ICU nurse"}),
        ("We're based in Leeds.", {"context.location: Leeds"}),
        ("Born and raised in Glasgow.", {"context.hometown: Glasgow"}),
        ("I grew up in a small town near Porto.", {"context.hometown: Porto"}),
        ("We just moved into our new flat in Dublin.", {"context.location: Dublin"}),
        ("人在广州", {"context.location: 广州"}),
        ("我从小在大连长大", {"context.hometown: 大连"}),
        # skills
        ("I can play the violin.", {"skills: violin"}),
        ("I've been writing Rust for three years.", {"skills: Rust"}),
        # family and pets: counts, names in apposition, breeds, partners
        (
            "We've got two cats, Mochi and Tofu.",
            {"facts: has two cats", "facts: cats Mochi and Tofu"},
        ),
        ("My son Oliver loves trains.", {"context.son: Oliver"}),
        ("I have a beagle called Biscuit.", {"context.dog: Biscuit"}),
        ("I'm a dad of two girls.", {"facts: has two girls"}),
        ("My brother Sam is a chef.", {"context.brother: Sam"}),  # the chef is Sam
        ("我有个儿子叫小宝", {"context.son: 小宝"}),
        ("我家有两只猫", {"facts: 养了两只猫"}),
        ("我老婆叫小美", {"context.wife: 小美"}),
        ("我已经结婚了", {"facts: 已婚"}),
        # a name in a clause of its own, after the clause that introduced the pet or child
        ("我家有只狗，叫旺财", {"context.dog: 旺财"}),
        ("我儿子今年三岁，叫小宝", {"context.son: 小宝"}),
        # laughter does not hide a pet's name
        ("my dog Pepper keeps stealing socks lol", {"context.dog: Pepper"}),
        # how to answer: one value space in both languages
        ("Please reply in French from now on.", {"preferences.language: French"}),
        ("以后都用中文回复我", {"preferences.language: Chinese"}),
        ("回复请分点", {"preferences.format: bullet points"}),
        ("From now on, answer me in Chinese please.", {"preferences.language: Chinese"}),
        ("以后用英文回答我吧", {"preferences.language: English"}),
        (
            "Give me short answers, no long explanations.",
            {"preferences.answer_style: short answers"},
        ),
    ],
)
def test_other_everyday_phrasings_are_kept(
    memory: MemoryLayers, text: str, expected: set[str]
) -> None:
    uid = f"p-{abs(hash(text))}"
    assert _profile(memory, uid, text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a statement, then an elliptical question: the statement is kept
        ("I live in Toronto — what's fun to do this weekend?", {"context.location: Toronto"}),
        ("I moved to Lisbon in May, any tips for meeting people?", {"context.location: Lisbon"}),
        ("My son Leo is turning five next month, any party ideas?", {"context.son: Leo"}),
        ("我们家在北京，附近有没有好的游泳馆？", {"context.location: 北京"}),
        ("刚搬来西安，有什么必吃的小吃推荐吗？", {"context.location: 西安"}),
        # a hypothetical part ends the clause, what comes before it stands
        (
            "I'm allergic to penicillin, keep it in mind if I ask about meds.",
            {"facts: allergic to penicillin"},
        ),
        ("I'm pretty good at Go, so you can skip the basics.", {"skills: Go"}),
        # names in apposition; a name keeps its capital and stops there
        ("Our dog Biscuit needs a new chew toy.", {"context.dog: Biscuit"}),
        (
            "I have a cat named Luna who knocks things over.",
            {"facts: has a cat", "context.cat: Luna"},
        ),
        ("我女儿小雨最近老是不爱吃饭", {"context.daughter: 小雨"}),
        ("我的狗豆豆不爱吃狗粮", {"context.dog: 豆豆"}),
        ("我家闺女小名叫糖糖", {"context.daughter: 糖糖"}),
        ("我们家的柯基叫可乐", {"context.dog: 可乐"}),
        # home with a job, a skill with its tool, a condition with its type
        ("We live in Austin, and the summers are brutal.", {"context.location: Austin"}),
        (
            "I'm a software engineer living in Dublin.",
            {
                "context.role: software engineer",
                "context.location: Dublin",
            },
        ),
        ("我会用Go写后端", {"skills: Go"}),
        ("我有二型糖尿病", {"facts: 有二型糖尿病"}),
        # an attribute said in the plural is a value; a state is not
        ("My pronouns are she/her.", {"context.pronouns: she/her"}),
        # a clause ends at "and" + a new subject, at ", so", and an emoji ends a sentence
        (
            "I live in Cebu and the humidity is killing my sourdough, how do I fix it?",
            {"context.location: Cebu"},
        ),
        (
            "I work for Deutsche Bahn, so strikes are small talk here.",
            {"context.employer: Deutsche Bahn"},
        ),
        ("hi! Priyanka here 😊 what's a good stretch for back pain?", {"context.name: Priyanka"}),
        ("I'm a pharmacist and patients ask me this all the time.", {"context.role: pharmacist"}),
        (
            "I'm vegan and allergic to soy, so tofu is out.",
            {"context.diet: vegan", "facts: allergic to soy"},
        ),
        ("We keep kosher at home, can you adapt this recipe?", {"context.diet: kosher"}),
        ("My little girl Anaya loves painting.", {"context.daughter: Anaya"}),
        # Chinese: a dropped subject, a known city in more frames, a job said without 是
        ("我叫王磊，老家洛阳的，帮我买票", {"context.name: 王磊", "context.hometown: 洛阳"}),
        ("我在哈尔滨住，冬天很冷", {"context.location: 哈尔滨"}),
        ("我家就在洛阳，想避开人流", {"context.location: 洛阳"}),
        ("上个月从武汉搬来苏州了，有什么好的球馆吗？", {"context.location: 苏州"}),
        ("本人药剂师，帮我整理一份表格", {"context.role: 药剂师"}),
        ("我是电工，想考个证", {"context.role: 电工"}),
        ("我有轻度抑郁，最近在看医生", {"facts: 有轻度抑郁"}),
        # greetings, signatures, "it's X"; a plan or a concession leaves what came before
        ("Hi there, Ksenia here. Can you recommend a recipe?", {"context.name: Ksenia"}),
        ("hey it's Oluwaseun, can u help me write a toast", {"context.name: Oluwaseun"}),
        ("me and my girlfriend Noor want to adopt a cat", {"context.girlfriend: Noor"}),
        (
            "please always reply in English even if I write in German",
            {"preferences.language: English"},
        ),
        ("I keep halal so can you swap the bacon?", {"context.diet: halal"}),
        ("im a sonographer and my wrist hurts", {"context.role: sonographer"}),
        ("been vegan for 4 years now, any protein powder?", {"context.diet: vegan"}),
        ("I was diagnosed with ADHD last year", {"facts: has adhd"}),
        ("our rescue greyhound Pepper is scared of stairs", {"context.dog: Pepper"}),
        ("currently based in Kamloops, BC — day trip ideas?", {"context.location: Kamloops"}),
        ("I finally moved back to Dubuque, any coffee shops?", {"context.location: Dubuque"}),
        ("bullet points only please — what about bikes?", {"preferences.format: bullet points"}),
        # Chinese: 本人/俺/咱 are 我; a message's first clause with no subject is the user's
        (
            "本人在蜜雪冰城做店长，员工老是迟到",
            {"context.employer: 蜜雪冰城", "context.role: 店长"},
        ),
        ("我是华为的硬件工程师", {"context.employer: 华为", "context.role: 硬件工程师"}),
        ("在顺丰当快递员三年了，想转行", {"context.employer: 顺丰", "context.role: 快递员"}),
        ("在东莞打工，想问下个税怎么退", {"context.location: 东莞"}),
        ("离开上海了，现在定居大理", {"context.location: 大理"}),
        ("我是韦一舟，想问问考研", {"context.name: 韦一舟"}),
        ("本人湖南邵阳人，说话口音重", {"context.hometown: 邵阳"}),
        ("老家在贵州毕节，过年回去", {"context.hometown: 毕节"}),
        ("我老公阿杰最近压力很大", {"context.husband: 阿杰"}),
        ("我对象叫陈默，我们打算明年结婚", {"context.partner: 陈默"}),
        ("家里有两个娃，周末怎么安排", {"facts: 有两个孩子"}),
        ("本人吃鱼素，帮我排个菜单", {"context.diet: 鱼素"}),
        ("我是乙肝携带者，体检会被刷吗", {"facts: 是乙肝携带者"}),
        ("用中文回答就行，我英文不太好", {"preferences.language: Chinese"}),
        ("请用要点列出来：买房要注意什么", {"preferences.format: bullet points"}),
        # second pass: a comma before a new "I", a colon, laughter mid-sentence, a later
        # negated part, schools, "as a X" after an employer
        (
            "Hi, I'm Casimir, I live in Kuopio and my refund is late.",
            {"context.name: Casimir", "context.location: Kuopio"},
        ),
        ("quick intro: name's Bronagh, 34, back into running", {"context.name: Bronagh"}),
        (
            "im from Oaxaca originally but now i live in Fresno.",
            {"context.hometown: Oaxaca", "context.location: Fresno"},
        ),
        ("I study at Kyushu University, can you help me?", {"context.school: Kyushu University"}),
        (
            "i work for Zalando as a warehouse picker and they changed our shifts.",
            {"context.employer: Zalando", "context.role: warehouse picker"},
        ),
        ("i can code in Rust and Go", {"skills: Rust", "skills: Go"}),
        ("Im pretty good at Excel and SQL, just not Python yet.", {"skills: Excel", "skills: SQL"}),
        ("wfh with my cat Pickle on the keyboard lol, sorry", {"context.cat: Pickle"}),
        ("im a night nurse so my sleep is a mess, any tips", {"context.role: night nurse"}),
        ("been living in Ghent for 3 months now.", {"context.location: Ghent"}),
        ("东北银儿在此！老家鹤岗的，现在还是会笑", {"context.hometown: 鹤岗"}),
        ("搬来厦门快半年了，终于习惯了", {"context.location: 厦门"}),
        ("工作五年的程序员，颈椎不行了", {"context.role: 程序员"}),
        ("做外卖骑手两年了，膝盖有点疼", {"context.role: 外卖骑手"}),
        ("在浙江大学读研，导师天天催论文", {"context.school: 浙江大学"}),
        ("我在顺丰干了三年了，同事都挺好的", {"context.employer: 顺丰"}),
        ("家里就我一个人吃素，聚餐很尴尬", {"context.diet: 素食"}),
        ("我是二型糖尿病，能帮我排个食谱吗", {"facts: 有二型糖尿病"}),
        ("我男朋友阿杰是个健身狂魔", {"context.boyfriend: 阿杰"}),
        ("女朋友叫思琪，在上海工作", {"context.girlfriend: 思琪"}),  # the city is hers
        ("帮我写个交友简介，我是远洋渔船上的轮机长", {"context.role: 轮机长"}),
        # third pass
        (
            "I'm Priyanka, originally from Nagpur but living in Pune now.",
            {"context.name: Priyanka", "context.hometown: Nagpur", "context.location: Pune"},
        ),
        (
            "Currently a ramp agent at Ryanair but I want normal hours.",
            {"context.role: ramp agent", "context.employer: Ryanair"},
        ),
        (
            "Both me and my son Kabir are allergic to cashews, so no nuts.",
            {"facts: allergic to cashews", "context.son: Kabir"},
        ),
        ("i got a peanut allergy so is this cereal ok", {"facts: allergic to peanut"}),
        ("Strict Jain diet, no onion or garlic.", {"context.diet: Jain"}),
        ("hey my staffy Tyson keeps scratching his ears", {"context.dog: Tyson"}),
        ("I live here in Chennai alone.", {"context.location: Chennai"}),
        ("俺家在鹤岗，这旮旯没有网点", {"context.location: 鹤岗"}),
        ("我吃素，而且对芒果过敏", {"context.diet: 素食", "facts: 对芒果过敏"}),
        ("我之前是生酮，现在改成纯素了", {"context.diet: 纯素"}),
        ("我有乳糜泻，面粉一点都不能沾", {"facts: 有乳糜泻"}),
        ("我是吉林大学大四的，学车辆工程", {"context.school: 吉林大学"}),
        ("我们住在乐山，最近热得很", {"context.location: 乐山"}),
        (  # "my English reading is slow" describes, it is no attribute
            "Please answer in Hindi from now on, my English reading is slow.",
            {"preferences.language: Hindi"},
        ),
    ],
)
def test_the_statement_beside_a_question_or_a_supposition_is_kept(
    memory: MemoryLayers, text: str, expected: set[str]
) -> None:
    uid = f"q-{abs(hash(text))}"
    assert _profile(memory, uid, text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "I use Vim, right?",  # asks to confirm: nothing is sure
        "我是程序员，对吧？",
        "Say I moved to Lisbon — how much would a flat cost?",
        "If I moved to Paris, I would live in Montmartre.",
        "I work as a welder and my hands are always dry, any cream recs?",
        "我女儿最近老是不爱吃饭",  # no name after the word
        "我家在三楼",  # a floor, not a city
        "I'm here to ask about my order.",  # "X here" signs a name only when X is one
        "我老家有很多亲戚",  # 老家 with no 是/在 and no known city names no place
        "我在家住",
        "我有点抑郁",  # a mood, not a condition
        "If I had a dog named Rex I'd walk him daily.",
        "I would love to live in Kyoto.",
        "It's Monday again.",
        "叫我一声就行",
        "我叫一个外卖",
        "今天好累，在公司加班",
        "他们家在北京，住得很近",
        "你假装是个海盗，我是船长，给我讲讲宝藏",  # role play
        "帮我给一个虚构角色写简介：三十岁的兽医，叫小林，住在大理。",
        "我是秦始皇，打钱（开玩笑的）说正经的，限额是多少？",
        "我老家很远的",
        "my wife is originally from Lagos",
        "我是秦始皇，打钱！哈哈开玩笑的。",  # laughter before the marker is part of it
        "我家在这边",
        "My shifts are all over the place.",
        "My hands are always dry.",
    ],
)
def test_confirmations_suppositions_and_descriptions_add_nothing_new(
    memory: MemoryLayers, text: str
) -> None:
    uid = f"c-{abs(hash(text))}"
    kept = _profile(memory, uid, text)
    assert not kept - {"context.role: welder"}, kept


@pytest.mark.parametrize(
    "text",
    [
        "I'm allergic to Mondays lol",  # a free-text fact said laughing is the usual joke
        "我老公对海鲜过敏",
        "我老婆喜欢猫",
        "我妈腰不好",
        "我一个孩子都没有",  # a count denied
        "我不过敏",
        "我同事养了只狗，叫旺财",  # the colleague's dog
        "我同事在上海工作，做前端",  # the colleague's job: the next clause is theirs too
        "My sister is allergic to nuts.",
        "my best friend just moved to Tokyo and I miss her already",
        "My wife is vegetarian.",
        "Is a vegan diet healthy?",
        "If I were vegan I'd miss cheese.",
        "What should I feed a dog named Max?",
        "我姐姐对花生过敏",
        "我老婆吃素",
        "如果我搬到深圳，会不会更好？",
        "素食健康吗？",
    ],
)
def test_nothing_is_kept_from_others_questions_and_hypotheticals(
    memory: MemoryLayers, text: str
) -> None:
    uid = f"n-{abs(hash(text))}"
    assert _profile(memory, uid, text) == set()


@pytest.mark.parametrize(
    ("first", "later", "old", "new"),
    [
        ("I live in Berlin.", "I moved to Valencia.", "Berlin", "Valencia"),
        ("我住在成都", "我上个月搬到深圳了", "成都", "深圳"),
        ("I'm vegetarian.", "I'm vegan now.", "vegetarian", "vegan"),
    ],
)
def test_a_later_statement_supersedes_and_the_history_keeps_both(
    memory: MemoryLayers, first: str, later: str, old: str, new: str
) -> None:
    uid = f"s-{abs(hash(first + later))}"
    memory.add([("user", first)], user_id=uid)
    memory.add([("user", later)], user_id=uid)
    current = {item.text for item in memory.get_all(user_id=uid).profile}
    assert any(t.endswith(f": {new}") for t in current), current
    assert not any(t.endswith(f": {old}") for t in current), current
    seen = " | ".join(repr(record) for record in memory.history(user_id=uid))
    assert old in seen and new in seen, seen
