"""Hand-written chats of the Chinese-speaking users of the recall evaluation set.

Same format as :mod:`bench._evalset_en` (items: small talk, ``(key, text)``,
``(key, text, reply)``, ``("@key", text)``; questions ``(text, refs, category[, time code])``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["USERS"]

WANGLEI: dict[str, Any] = {
    "id": "zh-wanglei",
    "sessions": [
        (
            "2024-03-11T21:05",
            "zh",
            [
                ("job", "我叫王磊，在深圳一家做跨境电商的公司写后端。"),
                ("lang", "我们组的服务现在都是 Java 写的，Spring Boot 那一套。"),
                ("dog", "我养了一只柯基，叫可乐，两岁了。"),
                "深圳今天好闷，感觉要下雨。",
            ],
        ),
        (
            "2024-03-19T22:30",
            "zh",
            [
                ("gym", "上周二办了健身卡，在公司楼下的超级猩猩，一年三千八。"),
                ("gf", "我女朋友小雨是做 UI 设计的，她在广州工作，我们周末见面。"),
                ("bug", "前天线上支付回调出了个 bug，凌晨两点被叫起来修。"),
            ],
        ),
        (
            "2024-04-02T20:15",
            "zh",
            [
                ("lang", "我们决定把订单服务从 Java 迁到 Go 了，下个季度开始。"),
                ("house", "最近在看房，想在龙华买个两房，预算四百万左右。"),
                ("dog", "可乐三天前吃了袜子，送去宠物医院，还好吐出来了。"),
            ],
        ),
        (
            "2024-04-23T19:40",
            "zh",
            [
                ("house", "房子定了！在龙华红山，89 平，总价三百八十五万。"),
                ("loan", "公积金加商贷，每个月还一万两千多。"),
                ("gf", "小雨决定辞职来深圳了，下个月搬过来。"),
            ],
        ),
        (
            "2024-05-20T21:50",
            "zh",
            [
                ("lang", "订单服务的 Go 版本上周上线了，延迟降了一半。"),
                ("trip", "端午打算带小雨回我老家湖南衡阳。"),
                ("gym", "健身卡基本没去，办了等于捐钱……"),
            ],
        ),
    ],
    "questions": [
        ("我在哪个城市工作？", "job", "single-fact"),
        ("我们的订单服务现在用什么语言写的？", "lang", "update"),
        ("订单服务迁到 Go 以后效果怎么样？", "lang", "update"),
        ("我的狗叫什么名字？", "dog@0", "single-fact"),
        ("可乐是什么品种的狗？", "dog@0", "single-fact"),
        ("可乐什么时候吃了袜子？", "dog", "temporal", "d-3"),
        ("我什么时候办的健身卡？", "gym@0", "temporal", "lastweek:tue"),
        ("2024年3月12日我办了什么？", "gym@0", "by-date", "lastweek:tue"),
        ("3月30号可乐出了什么事？", "dog", "by-date", "d-3"),
        ("健身卡多少钱一年？", "gym@0", "single-fact"),
        ("我女朋友是做什么工作的？", "gf@0", "single-fact"),
        ("小雨什么时候搬来深圳？", "gf", "update"),
        ("线上支付回调的 bug 是哪天出的？", "bug", "temporal", "d-2"),
        ("我买的房子在哪里？", "house", "update"),
        ("房子总价多少？", "house", "update"),
        ("我每个月房贷要还多少？", "loan", "single-fact"),
        ("端午节我打算去哪儿？", "trip", "single-fact"),
        ("我老家在哪里？", "trip", "single-fact"),
        ("What's my dog's name?", "dog@0", "cross-lingual"),
        ("Where did I buy an apartment?", "house", "cross-lingual"),
        ("When did the Go version of the order service go live?", "lang", "cross-lingual"),
        ("我买房的预算是多少，最后实际花了多少？", "house@0+house", "multi-hop"),
        ("我健身卡用得怎么样？", "gym", "update"),
    ],
}

LINA: dict[str, Any] = {
    "id": "zh-lina",
    "sessions": [
        (
            "2023-08-28T13:20",
            "zh",
            [
                ("job", "我在杭州一家做在线教育的公司当产品经理。"),
                ("son", "我儿子乐乐三岁了，九月一号上幼儿园小班。"),
                ("allergy", "乐乐对鸡蛋过敏，幼儿园的饭我有点担心。"),
            ],
        ),
        (
            "2023-09-05T21:45",
            "zh",
            [
                ("school", "乐乐上的是西湖区的启明幼儿园，班主任姓周。"),
                ("cry", "乐乐前两天每天早上都哭，今天总算好点了。"),
                ("husband", "我老公这周去成都出差，周六才回来。"),
                "杭州这几天热死了，三十八度。",
            ],
        ),
        (
            "2023-09-18T22:10",
            "zh",
            [
                ("sick", "乐乐上周五发烧了，三十九度，请了两天假。"),
                ("project", "我手上在做一个 AI 作文批改的新功能，十月底要上线。"),
                ("mom", "我妈从安徽过来帮我带孩子，住到过年。"),
            ],
        ),
        (
            "2023-10-09T20:30",
            "zh",
            [
                ("project", "作文批改功能延期了，改到十一月中旬上线。"),
                ("allergy", "带乐乐复查了过敏，医生说鸡蛋过敏好多了，可以少量吃蛋糕了。"),
                ("class", "我给乐乐报了周六上午的乐高课，一节课一百八。"),
            ],
        ),
        (
            "2023-11-20T21:00",
            "zh",
            [
                ("project", "作文批改功能上周四终于上线了，首周用户五万。"),
                ("promo", "年底可能要升高级产品经理，老板昨天跟我谈了。"),
                ("husband", "我老公换工作了，去了网易，不用老出差了。"),
            ],
        ),
    ],
    "questions": [
        ("我在哪家公司做什么工作？", "job", "single-fact"),
        ("乐乐几岁了？", "son", "single-fact"),
        ("乐乐什么时候开始上幼儿园？", "son", "temporal", "=2023-09-01"),
        ("乐乐对什么过敏？", "allergy@0", "single-fact"),
        ("乐乐现在还能吃鸡蛋吗？", "allergy", "update"),
        ("乐乐在哪个幼儿园？", "school", "single-fact"),
        ("乐乐的班主任姓什么？", "school", "single-fact"),
        ("我老公去成都出差是什么时候回来？", "husband@0", "temporal", "next:sat"),
        ("我老公现在在哪里上班？", "husband", "update"),
        ("乐乐什么时候发的烧？", "sick", "temporal", "lastweek:fri"),
        ("9月15号乐乐怎么了？", "sick", "by-date", "lastweek:fri"),
        ("乐乐发烧烧到多少度？", "sick", "single-fact"),
        ("作文批改功能什么时候上线的？", "project", "temporal", "lastweek:thu"),
        ("作文批改上线第一周有多少用户？", "project", "update"),
        ("谁来帮我带孩子？", "mom", "single-fact"),
        ("我给乐乐报了什么兴趣班？", "class", "single-fact"),
        ("乐高课多少钱一节？", "class", "single-fact"),
        ("老板什么时候跟我谈的升职？", "promo", "temporal", "d-1"),
        ("What is my son allergic to?", "allergy@0", "cross-lingual"),
        ("Which company does my husband work for now?", "husband", "cross-lingual"),
        ("What feature am I building at work?", "project@0", "cross-lingual"),
        ("我妈妈从哪里来，要住到什么时候？", "mom", "single-fact"),
        ("乐乐上的幼儿园在哪个区，他对什么过敏？", "school+allergy@0", "multi-hop"),
    ],
}

CHENCHEN: dict[str, Any] = {
    "id": "zh-chenchen",
    "sessions": [
        (
            "2024-02-26T23:30",
            "zh",
            [
                ("school", "我是武汉大学的大三学生，学计算机的。"),
                ("exam", "打算考研，目标是浙大的计算机专硕。"),
                ("cet", "六级上次考了四百二十一，刚好过线。"),
            ],
        ),
        (
            "2024-03-15T00:20",
            "zh",
            [
                ("intern", "我拿到了字节的暑期实习 offer，做推荐算法，在北京。"),
                ("roommate", "室友小胖天天打游戏到两点，吵得我睡不着。"),
                "今天食堂的热干面好难吃。",
            ],
        ),
        (
            "2024-04-08T22:50",
            "zh",
            [
                ("exam", "想了想还是不考浙大了，改考本校的人工智能方向，稳一点。"),
                ("book", "数学复习在用张宇的十八讲，已经刷了一半。"),
                ("bike", "我的电动车昨天在图书馆门口被偷了，气死。"),
            ],
        ),
        (
            "2024-06-30T21:10",
            "zh",
            [
                ("intern", "前天到北京报到了，住在公司附近的青年公寓，一个月两千八。"),
                ("mentor", "我的实习导师叫赵婷，人特别好。"),
                ("parents", "爸妈下周三来北京看我。"),
            ],
        ),
        (
            "2024-09-02T20:40",
            "zh",
            [
                ("intern", "实习结束了，拿到了转正的 return offer，不过我还是想读研。"),
                ("exam", "考研报名定了，还是报武大人工智能，十二月底考试。"),
                ("cet", "六级这次考了五百零三，终于刷上五百了！"),
            ],
        ),
    ],
    "questions": [
        ("我在哪所大学读书？", "school", "single-fact"),
        ("我学的是什么专业？", "school", "single-fact"),
        ("我考研报的是哪个学校哪个方向？", "exam", "update"),
        ("我为什么不考浙大了？", "exam@1", "update"),
        ("我的六级成绩是多少？", "cet", "update"),
        ("我暑假在哪儿实习？", "intern@0", "single-fact"),
        ("实习是做什么方向的？", "intern@0", "single-fact"),
        ("实习最后拿到转正 offer 了吗？", "intern", "update"),
        ("我室友有什么毛病？", "roommate", "single-fact"),
        ("我数学复习用的什么书？", "book", "single-fact"),
        ("我的电动车什么时候被偷的？", "bike", "temporal", "d-1"),
        ("4月7号我丢了什么东西？", "bike", "by-date", "d-1"),
        ("电动车在哪里被偷的？", "bike", "single-fact"),
        ("我哪天去北京报到的？", "intern@1", "temporal", "d-2"),
        ("我在北京住的公寓多少钱一个月？", "intern@1", "single-fact"),
        ("我的实习导师叫什么？", "mentor", "single-fact"),
        ("爸妈什么时候来北京看我？", "parents", "temporal", "nextweek:wed"),
        ("考研什么时候考？", "exam", "single-fact"),
        ("Which company did I intern at?", "intern@0", "cross-lingual"),
        ("What was my latest CET-6 score?", "cet", "cross-lingual"),
        ("Who was my mentor during the internship?", "mentor", "cross-lingual"),
        ("我实习的公司给了转正 offer，我最后打算报考哪里的研究生？", "intern+exam", "multi-hop"),
    ],
}

ZHANGWEI: dict[str, Any] = {
    "id": "zh-zhangwei",
    "sessions": [
        (
            "2023-05-08T08:10",
            "zh",
            [
                ("job", "我在上海一家医疗器械公司做销售经理，负责西南区。"),
                ("car", "开的是一辆 2019 年的大众帕萨特。"),
                ("health", "体检查出来血压有点高，一百五十/九十五。"),
                ("smoke", "我抽烟抽了十五年了，一天一包。"),
            ],
        ),
        (
            "2023-05-22T19:30",
            "zh",
            [
                ("trip", "上周去了成都和重庆，见了六家医院的采购。"),
                ("deal", "华西医院那个单子基本谈下来了，三百二十万。"),
                ("smoke", "我决定戒烟了，从三天前开始一根都没抽。"),
            ],
        ),
        (
            "2023-06-12T21:15",
            "zh",
            [
                ("car", "把帕萨特卖了，换了一辆比亚迪汉 EV，出差充电还挺方便。"),
                ("daughter", "我女儿今年高考，前天刚考完，说数学有点难。"),
                ("health", "开始吃降压药了，氨氯地平，每天早上一片。"),
            ],
        ),
        (
            "2023-07-03T20:00",
            "zh",
            [
                ("daughter", "女儿高考出分了，六百二十一，想报南京大学。"),
                ("deal", "华西的合同上周三签了，最后是三百一十万，砍了十万。"),
                ("trip", "下周三要去西安开区域会议。"),
            ],
        ),
        (
            "2023-08-14T22:20",
            "zh",
            [
                ("smoke", "戒烟三个月了，没复吸，体重倒是长了八斤。"),
                ("health", "血压现在控制在一百三/八十五左右了。"),
                ("daughter", "女儿被南京大学的天文系录取了！"),
            ],
        ),
    ],
    "questions": [
        ("我在哪个行业做销售？", "job", "single-fact"),
        ("我负责哪个区域？", "job", "single-fact"),
        ("我现在开什么车？", "car", "update"),
        ("我以前开什么车？", "car@0", "single-fact"),
        ("我的血压现在怎么样？", "health", "update"),
        ("我吃的是什么降压药？", "health@1", "single-fact"),
        ("我戒烟了吗？", "smoke", "update"),
        ("我从哪天开始戒烟的？", "smoke@1", "temporal", "d-3"),
        ("我去成都重庆见了几家医院？", "trip@0", "single-fact"),
        ("华西医院的合同最后签了多少钱？", "deal", "update"),
        ("华西的合同是什么时候签的？", "deal", "temporal", "lastweek:wed"),
        ("女儿哪天考完的高考？", "daughter@0", "temporal", "d-2"),
        ("6月10号我女儿考完了什么？", "daughter@0", "by-date", "d-2"),
        ("6月28号我签了什么合同？", "deal", "by-date", "lastweek:wed"),
        ("女儿高考考了多少分？", "daughter@1", "single-fact"),
        ("女儿被哪所大学录取了？", "daughter", "update"),
        ("我什么时候去西安开会？", "trip", "temporal", "nextweek:wed"),
        ("戒烟以后体重有什么变化？", "smoke", "single-fact"),
        ("What car do I drive now?", "car", "cross-lingual"),
        ("Which university did my daughter get into?", "daughter", "cross-lingual"),
        ("How long had I been smoking before I quit?", "smoke@0", "cross-lingual"),
        ("女儿想报的学校最后录取她了吗，是什么专业？", "daughter@1+daughter", "multi-hop"),
        ("我一开始体检血压是多少？", "health@0", "single-fact"),
    ],
}

LIUFANG: dict[str, Any] = {
    "id": "zh-liufang",
    "sessions": [
        (
            "2024-10-08T08:30",
            "zh",
            [
                ("job", "我是北京儿童医院的儿科医生，主要看呼吸科。"),
                ("shift", "这个月我一周要上两个夜班，周二和周五。"),
                ("piano", "最近开始学钢琴，每周日下午上课，老师姓林。"),
            ],
        ),
        (
            "2024-10-21T22:40",
            "zh",
            [
                ("parents", "我爸妈住在石家庄，我爸上周六摔了一跤，手腕骨折了。"),
                ("flu", "最近支原体肺炎的孩子特别多，门诊一天看八十多个号。"),
                "累得话都不想说了。",
            ],
        ),
        (
            "2024-11-04T21:15",
            "zh",
            [
                ("trip", "打算明年一月休年假去云南，大理和丽江各待三天。"),
                ("piano", "钢琴考级报了三级，明年三月考。"),
                ("parents", "我爸手腕拆石膏了，恢复得不错。"),
            ],
        ),
        (
            "2024-11-25T23:00",
            "zh",
            [
                ("shift", "科里调整排班了，我改成周一和周四夜班。"),
                ("paper", "我写的关于儿童哮喘的论文投了中华儿科杂志，两周前投的。"),
                ("car", "昨天把车停在医院门口被贴了罚单，两百块。"),
            ],
        ),
        (
            "2024-12-16T20:20",
            "zh",
            [
                ("trip", "云南改成春节去了，一月份科里人手不够。"),
                ("paper", "论文收到修改意见了，小修。"),
                ("cat", "同事送了我一只布偶猫，取名叫团子。"),
            ],
        ),
    ],
    "questions": [
        ("我在哪家医院工作？", "job", "single-fact"),
        ("我看哪个科的病人？", "job", "single-fact"),
        ("我现在哪两天上夜班？", "shift", "update"),
        ("钢琴课是什么时候上？", "piano@0", "single-fact"),
        ("钢琴老师姓什么？", "piano@0", "single-fact"),
        ("钢琴考几级，什么时候考？", "piano", "single-fact"),
        ("我爸什么时候摔的跤？", "parents@0", "temporal", "lastweek:sat"),
        ("10月19号我爸出了什么事？", "parents@0", "by-date", "lastweek:sat"),
        ("我爸的手腕现在怎么样了？", "parents", "update"),
        ("我爸妈住在哪里？", "parents@0", "single-fact"),
        ("最近门诊一天看多少个病人？", "flu", "single-fact"),
        ("我打算什么时候去云南？", "trip", "update"),
        ("去云南要去哪几个地方？", "trip@0", "single-fact"),
        ("我的论文投的哪个杂志？", "paper@0", "single-fact"),
        ("论文是什么时候投出去的？", "paper@0", "temporal", "w-2"),
        ("论文审稿结果怎么样？", "paper", "update"),
        ("我什么时候被贴的罚单？", "car", "temporal", "d-1"),
        ("我的猫叫什么？", "cat", "single-fact"),
        ("What kind of cat did I get?", "cat", "cross-lingual"),
        ("What happened to my dad?", "parents@0", "cross-lingual"),
        ("Which nights am I on call now?", "shift", "cross-lingual"),
        ("论文是关于什么的，现在审稿到哪一步了？", "paper@0+paper", "multi-hop"),
    ],
}

ZHAOQIANG: dict[str, Any] = {
    "id": "zh-zhaoqiang",
    "sessions": [
        (
            "2023-04-03T09:40",
            "zh",
            [
                ("retire", "我去年从青岛二中退休了，教了三十五年语文。"),
                ("camera", "退休以后迷上了摄影，用的是尼康 D750。"),
                ("club", "加入了一个老年摄影协会，每周三早上一起去栈桥拍海鸥。"),
            ],
        ),
        (
            "2023-04-17T10:10",
            "zh",
            [
                ("fish", "前天去灵山岛钓鱼，钓了一条三斤多的黑鲷。"),
                ("grand", "孙女朵朵今年五岁，最喜欢让我给她拍照。"),
                ("knee", "膝盖不太好，爬山爬到一半就疼。"),
            ],
        ),
        (
            "2023-05-15T08:55",
            "zh",
            [
                ("camera", "把尼康换成了索尼 A7C，轻了不少，背着不累。"),
                ("contest", "我拍的《雾中栈桥》在市里的摄影比赛拿了二等奖！"),
                ("checkup", "上周四去体检，医生说血糖偏高，要少吃甜的。"),
            ],
        ),
        (
            "2023-06-05T16:30",
            "zh",
            [
                ("trip", "下个月跟老伴去新疆自驾，主要去喀纳斯和赛里木湖。"),
                ("grand", "朵朵上周六过生日，我给她拍了一组照片做成了相册。"),
                ("lens", "又买了一个 70-200 的长焦镜头，拍鸟用。"),
            ],
        ),
        (
            "2023-08-07T19:45",
            "zh",
            [
                ("trip", "新疆回来了，拍了三千多张照片，赛里木湖太美了。"),
                ("club", "摄影协会改成周六早上活动了，周三好多人要接孙子。"),
                ("checkup", "复查了血糖，已经正常了。"),
            ],
        ),
    ],
    "questions": [
        ("我退休前是做什么的？", "retire", "single-fact"),
        ("我教了多少年书？", "retire", "single-fact"),
        ("我现在用什么相机？", "camera", "update"),
        ("我以前用什么相机？", "camera@0", "single-fact"),
        ("摄影协会什么时候活动？", "club", "update"),
        ("我什么时候去灵山岛钓的鱼？", "fish", "temporal", "d-2"),
        ("4月15号我去哪儿钓鱼了？", "fish", "by-date", "d-2"),
        ("5月11号我去医院做了什么？", "checkup@0", "by-date", "lastweek:thu"),
        ("我在灵山岛钓到了什么鱼？", "fish", "single-fact"),
        ("我孙女叫什么，几岁了？", "grand@0", "single-fact"),
        ("朵朵的生日是什么时候？", "grand", "temporal", "lastweek:sat"),
        ("我哪张照片获奖了？", "contest", "single-fact"),
        ("我什么时候去体检的？", "checkup@0", "temporal", "lastweek:thu"),
        ("我的血糖现在怎么样？", "checkup", "update"),
        ("我新买了什么镜头？", "lens", "single-fact"),
        ("去新疆自驾去了哪些地方？", "trip@0", "single-fact"),
        ("新疆拍了多少张照片？", "trip", "update"),
        ("我的膝盖怎么了？", "knee", "single-fact"),
        ("Which photo won a prize?", "contest", "cross-lingual"),
        ("What camera do I use now?", "camera", "cross-lingual"),
        ("Where did I go fishing?", "fish", "cross-lingual"),
        ("我换的相机是什么牌子，后来又给它配了什么镜头？", "camera+lens", "multi-hop"),
        ("我跟谁去的新疆？", "trip@0", "single-fact"),
    ],
}

USERS: tuple[dict[str, Any], ...] = (WANGLEI, LINA, CHENCHEN, ZHANGWEI, LIUFANG, ZHAOQIANG)
