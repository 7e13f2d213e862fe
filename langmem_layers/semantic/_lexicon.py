"""Word lists for the offline extractor (private): technologies, roles, keys, guards."""

from __future__ import annotations

import re

# alias -> (canonical name, slot). slot None: the tool's own name is its key (several coexist).
_TECH: dict[str, tuple[str, str | None]] = {}


def _add(slot: str | None, *groups: tuple[str, ...]) -> None:
    for aliases in groups:
        canonical = aliases[0]
        for alias in aliases:
            _TECH[alias.lower()] = (canonical, slot)


_add(
    None,
    ("Python",),
    ("Java",),
    ("Go", "golang"),
    ("Rust",),
    ("TypeScript", "ts"),
    ("JavaScript", "js"),
    ("C++", "cpp"),
    ("C#", "csharp"),
    ("Kotlin",),
    ("Swift",),
    ("Ruby",),
    ("PHP",),
    ("Scala",),
    ("Elixir",),
    ("Haskell",),
    ("Julia",),
    ("Dart",),
    ("Lua",),
    ("Perl",),
    ("Django",),
    ("Flask",),
    ("FastAPI",),
    ("Spring Boot", "springboot"),
    ("Spring",),
    ("Rails", "ruby on rails"),
    ("Express",),
    ("Next.js", "nextjs"),
    ("LangChain",),
    ("LangGraph",),
    ("PyTorch", "torch"),
    ("TensorFlow",),
    ("pandas",),
    ("NumPy",),
    ("Docker",),
    ("Kubernetes", "k8s"),
    ("Terraform",),
    ("Spark", "apache spark"),
    ("Airflow",),
    ("Node.js", "node", "nodejs"),
    ("Flutter",),
    ("Unity",),
)
_add(
    "database",
    ("PostgreSQL", "postgres", "postgresql", "pg"),
    ("MySQL",),
    ("SQLite",),
    ("MongoDB", "mongo"),
    ("MariaDB",),
    ("Oracle",),
    ("SQL Server", "mssql"),
    ("Cassandra",),
    ("DynamoDB",),
    ("ClickHouse",),
    ("TiDB",),
    ("Supabase",),
)
_add("cache", ("Redis",), ("Memcached",))
_add("search", ("Elasticsearch", "elastic"), ("OpenSearch",))
_add("warehouse", ("Snowflake",), ("BigQuery",), ("Redshift",))
_add(
    "editor",
    ("VS Code", "vscode", "visual studio code"),
    ("Vim",),
    ("Neovim", "nvim"),
    ("Emacs",),
    ("IntelliJ", "intellij idea"),
    ("PyCharm",),
    ("Sublime Text", "sublime"),
    ("Cursor",),
    ("Zed",),
    ("Xcode",),
)
_add(
    "os",
    ("macOS", "mac", "osx"),
    ("Linux",),
    ("Ubuntu",),
    ("Windows",),
    ("Arch Linux", "arch"),
    ("Debian",),
    ("Fedora",),
)
_add(
    "cloud",
    ("AWS", "amazon web services"),
    ("GCP", "google cloud"),
    ("Azure",),
    ("Alibaba Cloud", "阿里云", "aliyun"),
    ("Tencent Cloud", "腾讯云"),
    ("Huawei Cloud", "华为云"),
    ("DigitalOcean",),
    ("Heroku",),
    ("Vercel",),
)
_add("frontend", ("React", "reactjs"), ("Vue", "vue.js", "vuejs"), ("Angular",), ("Svelte",))
_add("ci", ("GitHub Actions",), ("GitLab CI",), ("Jenkins",), ("CircleCI",))
_add("code_hosting", ("GitHub",), ("GitLab",), ("Bitbucket",), ("Gitee",))
_add("queue", ("Kafka",), ("RabbitMQ",))

_VERSION = re.compile(r"^(?:v?\d[\w.\-]*|lts)$", re.IGNORECASE)


def tech(phrase: str) -> tuple[str, str] | None:
    """``(value, key)`` if ``phrase`` names a known technology (optionally with a version)."""
    p = phrase.strip().strip("\"'`").strip()
    low = p.lower()
    if low in _TECH:
        name, slot = _TECH[low]
        return name, slot or name.lower()
    words = p.split()
    for n in range(len(words) - 1, 0, -1):
        head, tail = " ".join(words[:n]).lower(), words[n:]
        if head in _TECH and all(_VERSION.match(w) for w in tail):
            name, slot = _TECH[head]
            return f"{name} {' '.join(tail)}", slot or name.lower()
    m = re.match(r"^([A-Za-z#+.]+?)\s*(\d[\d.]*)$", p)  # "Python3.12" / "python 3"
    if m and m.group(1).lower() in _TECH:
        name, slot = _TECH[m.group(1).lower()]
        return f"{name} {m.group(2)}", slot or name.lower()
    return None


ROLE_WORDS = {
    "engineer",
    "developer",
    "programmer",
    "scientist",
    "designer",
    "manager",
    "teacher",
    "student",
    "doctor",
    "nurse",
    "researcher",
    "analyst",
    "architect",
    "consultant",
    "writer",
    "lawyer",
    "founder",
    "cto",
    "ceo",
    "devops",
    "sre",
    "intern",
    "professor",
    "accountant",
    "marketer",
    "editor",
    "journalist",
    "photographer",
    "dev",
    "lead",
}
ZH_ROLE_SUFFIXES = (
    "工程师",
    "程序员",
    "开发者",
    "开发",
    "设计师",
    "经理",
    "老师",
    "教师",
    "学生",
    "医生",
    "护士",
    "研究员",
    "分析师",
    "架构师",
    "科学家",
    "律师",
    "作家",
    "创始人",
    "顾问",
    "运维",
    "产品",
    "实习生",
    "教授",
    "会计",
    "记者",
    "摄影师",
)

CONTEXT_KEYS = {
    "name": "name",
    "full name": "name",
    "job": "role",
    "role": "role",
    "title": "role",
    "job title": "role",
    "position": "role",
    "occupation": "role",
    "profession": "role",
    "city": "location",
    "location": "location",
    "home": "location",
    "hometown": "hometown",
    "company": "employer",
    "employer": "employer",
    "team": "team",
    "timezone": "timezone",
    "time zone": "timezone",
    "project": "project",
    "email": "email",
    "birthday": "birthday",
    "名字": "name",
    "姓名": "name",
    "工作": "role",
    "职业": "role",
    "职位": "role",
    "城市": "location",
    "所在地": "location",
    "家乡": "hometown",
    "老家": "hometown",
    "公司": "employer",
    "团队": "team",
    "时区": "timezone",
    "项目": "project",
    "邮箱": "email",
    "生日": "birthday",
}
TECH_SLOTS = {
    "database": "database",
    "db": "database",
    "editor": "editor",
    "ide": "editor",
    "os": "os",
    "operating system": "os",
    "cloud": "cloud",
    "cloud provider": "cloud",
    "frontend framework": "frontend",
    "frontend": "frontend",
    "ci": "ci",
    "cache": "cache",
    "数据库": "database",
    "编辑器": "editor",
    "操作系统": "os",
    "云": "cloud",
    "云服务": "cloud",
    "前端框架": "frontend",
}
PREFERENCE_KEYS = {
    "tea": "drink",
    "coffee": "drink",
    "green tea": "drink",
    "black tea": "drink",
    "茶": "drink",
    "咖啡": "drink",
    "绿茶": "drink",
    "红茶": "drink",
    "奶茶": "drink",
    "tabs": "indentation",
    "spaces": "indentation",
    "dark mode": "theme",
    "light mode": "theme",
    "深色模式": "theme",
    "浅色模式": "theme",
    "暗色模式": "theme",
    "chinese": "language",
    "english": "language",
    "中文": "language",
    "英文": "language",
}
ANSWER_WORDS = ("answer", "response", "explanation", "reply", "回答", "回复", "解释")

ZH_CITIES = {
    "北京",
    "上海",
    "深圳",
    "广州",
    "杭州",
    "成都",
    "南京",
    "武汉",
    "西安",
    "香港",
    "台北",
    "苏州",
    "重庆",
    "天津",
    "厦门",
    "青岛",
    "长沙",
    "东京",
    "伦敦",
    "纽约",
    "新加坡",
    "柏林",
}

# a whole message that retracts what was just said
RETRACTION = re.compile(
    r"(just kidding|\bkidding\b|\bjk\b|\bjoking\b|\bj/k\b|not really|开玩笑|逗你|骗你的|说着玩)",
    re.IGNORECASE,
)
# sentences that are not statements of current fact
HYPOTHETICAL_EN = re.compile(
    r"\b(if|suppose|supposing|imagine|pretend|hypothetically|wish|would|could|might|maybe|"
    r"perhaps|someday|dream|dreaming|plan to|planning to|thinking about|considering|"
    r"going to|gonna|want to|wanna|should|lol|haha)\b",
    re.IGNORECASE,
)
NEGATION_EN = re.compile(
    r"\b(not|don't|dont|do not|never|no longer|isn't|aren't|doesn't|didn't|won't|can't|"
    r"cannot|hate|dislike|nobody)\b|n't\b",
    re.IGNORECASE,
)
HYPOTHETICAL_ZH = re.compile(
    r"(如果|假如|要是|假设|假定|想象|希望|但愿|梦想|打算|计划|也许|或许|可能|考虑|想要|想学|"
    r"哈哈|是不是|吗|呢|吧)"
)
CONDITIONAL_ZH = re.compile(r"(如果|假如|要是|假设|假定|想象)")
NEGATION_ZH = re.compile(r"(不|没|别|讨厌)")
