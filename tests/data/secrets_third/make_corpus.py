#!/usr/bin/env python3
"""Generate the third, independent secret-redaction corpus.

Run once from the repository root:

    python tests/data/secrets_third/make_corpus.py

It writes ``positives.jsonl`` and ``negatives.txt`` next to this script and
refuses to overwrite them unless ``--force`` is given (use ``--out DIR`` to
write somewhere else).  The committed files come from a single run.

How the values are made
-----------------------
* Every secret value is fresh output of Python's ``secrets`` module, shaped
  with the public prefix, length and alphabet of its kind (e.g. ``ghp_`` + 36
  alphanumerics, ``AKIA`` + 16 base32 characters, 88-character base64 Azure
  storage keys, BitLocker groups that are multiples of 11).  Checksums that
  some formats carry (BIP-39 mnemonic checksum, Bitcoin WIF checksum, JWT
  signatures) are NOT valid: the shape is real, the value is not a working
  credential.  Nothing here was copied from a real credential.
* Seed phrases draw words from the official BIP-39 English word list (embedded
  below, from bitcoin/bips, file bip-0039/english.txt).
* Private keys are random bytes behind a realistic DER / openssh prefix; for
  multi-line keys the ``secret`` field is one random full line of the body.
* Template choice is fixed (one template per entry, written by hand); only
  the values are random, so a rerun produces the same texts with different
  values.
* The negative sentences are hand-written; random-looking ids in them
  (UUIDs, commit hashes, SHA-256 digests, trace ids, public SSH keys, wallet
  addresses, IBANs with correct check digits, ISBN-13 with correct check
  digit) are filled by this script at run time from ``secrets``/``uuid``.

Each positive is re-drawn until its secret occurs exactly once in its text,
differs from every other secret, and does not occur in any negative line.
Standard library only, Python 3.11.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import json
import re
import secrets
import string
import struct
import sys
import time
import uuid
from pathlib import Path
from urllib.parse import quote

UP = string.ascii_uppercase
LO = string.ascii_lowercase
DIG = string.digits
LETTERS = UP + LO
ALNUM = UP + LO + DIG
HEX = "0123456789abcdef"
HEXUP = "0123456789ABCDEF"
B64 = ALNUM + "+/"
B64URL = ALNUM + "-_"
B32 = UP + "234567"
B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"
BECH32 = "qpzry9x8gf2tvdw0s3jn54khce6mua7l"
SYM = "!#%*+-?@^_."

BIP39 = [
    "abandon",
    "ability",
    "able",
    "about",
    "above",
    "absent",
    "absorb",
    "abstract",
    "absurd",
    "abuse",
    "access",
    "accident",
    "account",
    "accuse",
    "achieve",
    "acid",
    "acoustic",
    "acquire",
    "across",
    "act",
    "action",
    "actor",
    "actress",
    "actual",
    "adapt",
    "add",
    "addict",
    "address",
    "adjust",
    "admit",
    "adult",
    "advance",
    "advice",
    "aerobic",
    "affair",
    "afford",
    "afraid",
    "again",
    "age",
    "agent",
    "agree",
    "ahead",
    "aim",
    "air",
    "airport",
    "aisle",
    "alarm",
    "album",
    "alcohol",
    "alert",
    "alien",
    "all",
    "alley",
    "allow",
    "almost",
    "alone",
    "alpha",
    "already",
    "also",
    "alter",
    "always",
    "amateur",
    "amazing",
    "among",
    "amount",
    "amused",
    "analyst",
    "anchor",
    "ancient",
    "anger",
    "angle",
    "angry",
    "animal",
    "ankle",
    "announce",
    "annual",
    "another",
    "answer",
    "antenna",
    "antique",
    "anxiety",
    "any",
    "apart",
    "apology",
    "appear",
    "apple",
    "approve",
    "april",
    "arch",
    "arctic",
    "area",
    "arena",
    "argue",
    "arm",
    "armed",
    "armor",
    "army",
    "around",
    "arrange",
    "arrest",
    "arrive",
    "arrow",
    "art",
    "artefact",
    "artist",
    "artwork",
    "ask",
    "aspect",
    "assault",
    "asset",
    "assist",
    "assume",
    "asthma",
    "athlete",
    "atom",
    "attack",
    "attend",
    "attitude",
    "attract",
    "auction",
    "audit",
    "august",
    "aunt",
    "author",
    "auto",
    "autumn",
    "average",
    "avocado",
    "avoid",
    "awake",
    "aware",
    "away",
    "awesome",
    "awful",
    "awkward",
    "axis",
    "baby",
    "bachelor",
    "bacon",
    "badge",
    "bag",
    "balance",
    "balcony",
    "ball",
    "bamboo",
    "banana",
    "banner",
    "bar",
    "barely",
    "bargain",
    "barrel",
    "base",
    "basic",
    "basket",
    "battle",
    "beach",
    "bean",
    "beauty",
    "because",
    "become",
    "beef",
    "before",
    "begin",
    "behave",
    "behind",
    "believe",
    "below",
    "belt",
    "bench",
    "benefit",
    "best",
    "betray",
    "better",
    "between",
    "beyond",
    "bicycle",
    "bid",
    "bike",
    "bind",
    "biology",
    "bird",
    "birth",
    "bitter",
    "black",
    "blade",
    "blame",
    "blanket",
    "blast",
    "bleak",
    "bless",
    "blind",
    "blood",
    "blossom",
    "blouse",
    "blue",
    "blur",
    "blush",
    "board",
    "boat",
    "body",
    "boil",
    "bomb",
    "bone",
    "bonus",
    "book",
    "boost",
    "border",
    "boring",
    "borrow",
    "boss",
    "bottom",
    "bounce",
    "box",
    "boy",
    "bracket",
    "brain",
    "brand",
    "brass",
    "brave",
    "bread",
    "breeze",
    "brick",
    "bridge",
    "brief",
    "bright",
    "bring",
    "brisk",
    "broccoli",
    "broken",
    "bronze",
    "broom",
    "brother",
    "brown",
    "brush",
    "bubble",
    "buddy",
    "budget",
    "buffalo",
    "build",
    "bulb",
    "bulk",
    "bullet",
    "bundle",
    "bunker",
    "burden",
    "burger",
    "burst",
    "bus",
    "business",
    "busy",
    "butter",
    "buyer",
    "buzz",
    "cabbage",
    "cabin",
    "cable",
    "cactus",
    "cage",
    "cake",
    "call",
    "calm",
    "camera",
    "camp",
    "can",
    "canal",
    "cancel",
    "candy",
    "cannon",
    "canoe",
    "canvas",
    "canyon",
    "capable",
    "capital",
    "captain",
    "car",
    "carbon",
    "card",
    "cargo",
    "carpet",
    "carry",
    "cart",
    "case",
    "cash",
    "casino",
    "castle",
    "casual",
    "cat",
    "catalog",
    "catch",
    "category",
    "cattle",
    "caught",
    "cause",
    "caution",
    "cave",
    "ceiling",
    "celery",
    "cement",
    "census",
    "century",
    "cereal",
    "certain",
    "chair",
    "chalk",
    "champion",
    "change",
    "chaos",
    "chapter",
    "charge",
    "chase",
    "chat",
    "cheap",
    "check",
    "cheese",
    "chef",
    "cherry",
    "chest",
    "chicken",
    "chief",
    "child",
    "chimney",
    "choice",
    "choose",
    "chronic",
    "chuckle",
    "chunk",
    "churn",
    "cigar",
    "cinnamon",
    "circle",
    "citizen",
    "city",
    "civil",
    "claim",
    "clap",
    "clarify",
    "claw",
    "clay",
    "clean",
    "clerk",
    "clever",
    "click",
    "client",
    "cliff",
    "climb",
    "clinic",
    "clip",
    "clock",
    "clog",
    "close",
    "cloth",
    "cloud",
    "clown",
    "club",
    "clump",
    "cluster",
    "clutch",
    "coach",
    "coast",
    "coconut",
    "code",
    "coffee",
    "coil",
    "coin",
    "collect",
    "color",
    "column",
    "combine",
    "come",
    "comfort",
    "comic",
    "common",
    "company",
    "concert",
    "conduct",
    "confirm",
    "congress",
    "connect",
    "consider",
    "control",
    "convince",
    "cook",
    "cool",
    "copper",
    "copy",
    "coral",
    "core",
    "corn",
    "correct",
    "cost",
    "cotton",
    "couch",
    "country",
    "couple",
    "course",
    "cousin",
    "cover",
    "coyote",
    "crack",
    "cradle",
    "craft",
    "cram",
    "crane",
    "crash",
    "crater",
    "crawl",
    "crazy",
    "cream",
    "credit",
    "creek",
    "crew",
    "cricket",
    "crime",
    "crisp",
    "critic",
    "crop",
    "cross",
    "crouch",
    "crowd",
    "crucial",
    "cruel",
    "cruise",
    "crumble",
    "crunch",
    "crush",
    "cry",
    "crystal",
    "cube",
    "culture",
    "cup",
    "cupboard",
    "curious",
    "current",
    "curtain",
    "curve",
    "cushion",
    "custom",
    "cute",
    "cycle",
    "dad",
    "damage",
    "damp",
    "dance",
    "danger",
    "daring",
    "dash",
    "daughter",
    "dawn",
    "day",
    "deal",
    "debate",
    "debris",
    "decade",
    "december",
    "decide",
    "decline",
    "decorate",
    "decrease",
    "deer",
    "defense",
    "define",
    "defy",
    "degree",
    "delay",
    "deliver",
    "demand",
    "demise",
    "denial",
    "dentist",
    "deny",
    "depart",
    "depend",
    "deposit",
    "depth",
    "deputy",
    "derive",
    "describe",
    "desert",
    "design",
    "desk",
    "despair",
    "destroy",
    "detail",
    "detect",
    "develop",
    "device",
    "devote",
    "diagram",
    "dial",
    "diamond",
    "diary",
    "dice",
    "diesel",
    "diet",
    "differ",
    "digital",
    "dignity",
    "dilemma",
    "dinner",
    "dinosaur",
    "direct",
    "dirt",
    "disagree",
    "discover",
    "disease",
    "dish",
    "dismiss",
    "disorder",
    "display",
    "distance",
    "divert",
    "divide",
    "divorce",
    "dizzy",
    "doctor",
    "document",
    "dog",
    "doll",
    "dolphin",
    "domain",
    "donate",
    "donkey",
    "donor",
    "door",
    "dose",
    "double",
    "dove",
    "draft",
    "dragon",
    "drama",
    "drastic",
    "draw",
    "dream",
    "dress",
    "drift",
    "drill",
    "drink",
    "drip",
    "drive",
    "drop",
    "drum",
    "dry",
    "duck",
    "dumb",
    "dune",
    "during",
    "dust",
    "dutch",
    "duty",
    "dwarf",
    "dynamic",
    "eager",
    "eagle",
    "early",
    "earn",
    "earth",
    "easily",
    "east",
    "easy",
    "echo",
    "ecology",
    "economy",
    "edge",
    "edit",
    "educate",
    "effort",
    "egg",
    "eight",
    "either",
    "elbow",
    "elder",
    "electric",
    "elegant",
    "element",
    "elephant",
    "elevator",
    "elite",
    "else",
    "embark",
    "embody",
    "embrace",
    "emerge",
    "emotion",
    "employ",
    "empower",
    "empty",
    "enable",
    "enact",
    "end",
    "endless",
    "endorse",
    "enemy",
    "energy",
    "enforce",
    "engage",
    "engine",
    "enhance",
    "enjoy",
    "enlist",
    "enough",
    "enrich",
    "enroll",
    "ensure",
    "enter",
    "entire",
    "entry",
    "envelope",
    "episode",
    "equal",
    "equip",
    "era",
    "erase",
    "erode",
    "erosion",
    "error",
    "erupt",
    "escape",
    "essay",
    "essence",
    "estate",
    "eternal",
    "ethics",
    "evidence",
    "evil",
    "evoke",
    "evolve",
    "exact",
    "example",
    "excess",
    "exchange",
    "excite",
    "exclude",
    "excuse",
    "execute",
    "exercise",
    "exhaust",
    "exhibit",
    "exile",
    "exist",
    "exit",
    "exotic",
    "expand",
    "expect",
    "expire",
    "explain",
    "expose",
    "express",
    "extend",
    "extra",
    "eye",
    "eyebrow",
    "fabric",
    "face",
    "faculty",
    "fade",
    "faint",
    "faith",
    "fall",
    "false",
    "fame",
    "family",
    "famous",
    "fan",
    "fancy",
    "fantasy",
    "farm",
    "fashion",
    "fat",
    "fatal",
    "father",
    "fatigue",
    "fault",
    "favorite",
    "feature",
    "february",
    "federal",
    "fee",
    "feed",
    "feel",
    "female",
    "fence",
    "festival",
    "fetch",
    "fever",
    "few",
    "fiber",
    "fiction",
    "field",
    "figure",
    "file",
    "film",
    "filter",
    "final",
    "find",
    "fine",
    "finger",
    "finish",
    "fire",
    "firm",
    "first",
    "fiscal",
    "fish",
    "fit",
    "fitness",
    "fix",
    "flag",
    "flame",
    "flash",
    "flat",
    "flavor",
    "flee",
    "flight",
    "flip",
    "float",
    "flock",
    "floor",
    "flower",
    "fluid",
    "flush",
    "fly",
    "foam",
    "focus",
    "fog",
    "foil",
    "fold",
    "follow",
    "food",
    "foot",
    "force",
    "forest",
    "forget",
    "fork",
    "fortune",
    "forum",
    "forward",
    "fossil",
    "foster",
    "found",
    "fox",
    "fragile",
    "frame",
    "frequent",
    "fresh",
    "friend",
    "fringe",
    "frog",
    "front",
    "frost",
    "frown",
    "frozen",
    "fruit",
    "fuel",
    "fun",
    "funny",
    "furnace",
    "fury",
    "future",
    "gadget",
    "gain",
    "galaxy",
    "gallery",
    "game",
    "gap",
    "garage",
    "garbage",
    "garden",
    "garlic",
    "garment",
    "gas",
    "gasp",
    "gate",
    "gather",
    "gauge",
    "gaze",
    "general",
    "genius",
    "genre",
    "gentle",
    "genuine",
    "gesture",
    "ghost",
    "giant",
    "gift",
    "giggle",
    "ginger",
    "giraffe",
    "girl",
    "give",
    "glad",
    "glance",
    "glare",
    "glass",
    "glide",
    "glimpse",
    "globe",
    "gloom",
    "glory",
    "glove",
    "glow",
    "glue",
    "goat",
    "goddess",
    "gold",
    "good",
    "goose",
    "gorilla",
    "gospel",
    "gossip",
    "govern",
    "gown",
    "grab",
    "grace",
    "grain",
    "grant",
    "grape",
    "grass",
    "gravity",
    "great",
    "green",
    "grid",
    "grief",
    "grit",
    "grocery",
    "group",
    "grow",
    "grunt",
    "guard",
    "guess",
    "guide",
    "guilt",
    "guitar",
    "gun",
    "gym",
    "habit",
    "hair",
    "half",
    "hammer",
    "hamster",
    "hand",
    "happy",
    "harbor",
    "hard",
    "harsh",
    "harvest",
    "hat",
    "have",
    "hawk",
    "hazard",
    "head",
    "health",
    "heart",
    "heavy",
    "hedgehog",
    "height",
    "hello",
    "helmet",
    "help",
    "hen",
    "hero",
    "hidden",
    "high",
    "hill",
    "hint",
    "hip",
    "hire",
    "history",
    "hobby",
    "hockey",
    "hold",
    "hole",
    "holiday",
    "hollow",
    "home",
    "honey",
    "hood",
    "hope",
    "horn",
    "horror",
    "horse",
    "hospital",
    "host",
    "hotel",
    "hour",
    "hover",
    "hub",
    "huge",
    "human",
    "humble",
    "humor",
    "hundred",
    "hungry",
    "hunt",
    "hurdle",
    "hurry",
    "hurt",
    "husband",
    "hybrid",
    "ice",
    "icon",
    "idea",
    "identify",
    "idle",
    "ignore",
    "ill",
    "illegal",
    "illness",
    "image",
    "imitate",
    "immense",
    "immune",
    "impact",
    "impose",
    "improve",
    "impulse",
    "inch",
    "include",
    "income",
    "increase",
    "index",
    "indicate",
    "indoor",
    "industry",
    "infant",
    "inflict",
    "inform",
    "inhale",
    "inherit",
    "initial",
    "inject",
    "injury",
    "inmate",
    "inner",
    "innocent",
    "input",
    "inquiry",
    "insane",
    "insect",
    "inside",
    "inspire",
    "install",
    "intact",
    "interest",
    "into",
    "invest",
    "invite",
    "involve",
    "iron",
    "island",
    "isolate",
    "issue",
    "item",
    "ivory",
    "jacket",
    "jaguar",
    "jar",
    "jazz",
    "jealous",
    "jeans",
    "jelly",
    "jewel",
    "job",
    "join",
    "joke",
    "journey",
    "joy",
    "judge",
    "juice",
    "jump",
    "jungle",
    "junior",
    "junk",
    "just",
    "kangaroo",
    "keen",
    "keep",
    "ketchup",
    "key",
    "kick",
    "kid",
    "kidney",
    "kind",
    "kingdom",
    "kiss",
    "kit",
    "kitchen",
    "kite",
    "kitten",
    "kiwi",
    "knee",
    "knife",
    "knock",
    "know",
    "lab",
    "label",
    "labor",
    "ladder",
    "lady",
    "lake",
    "lamp",
    "language",
    "laptop",
    "large",
    "later",
    "latin",
    "laugh",
    "laundry",
    "lava",
    "law",
    "lawn",
    "lawsuit",
    "layer",
    "lazy",
    "leader",
    "leaf",
    "learn",
    "leave",
    "lecture",
    "left",
    "leg",
    "legal",
    "legend",
    "leisure",
    "lemon",
    "lend",
    "length",
    "lens",
    "leopard",
    "lesson",
    "letter",
    "level",
    "liar",
    "liberty",
    "library",
    "license",
    "life",
    "lift",
    "light",
    "like",
    "limb",
    "limit",
    "link",
    "lion",
    "liquid",
    "list",
    "little",
    "live",
    "lizard",
    "load",
    "loan",
    "lobster",
    "local",
    "lock",
    "logic",
    "lonely",
    "long",
    "loop",
    "lottery",
    "loud",
    "lounge",
    "love",
    "loyal",
    "lucky",
    "luggage",
    "lumber",
    "lunar",
    "lunch",
    "luxury",
    "lyrics",
    "machine",
    "mad",
    "magic",
    "magnet",
    "maid",
    "mail",
    "main",
    "major",
    "make",
    "mammal",
    "man",
    "manage",
    "mandate",
    "mango",
    "mansion",
    "manual",
    "maple",
    "marble",
    "march",
    "margin",
    "marine",
    "market",
    "marriage",
    "mask",
    "mass",
    "master",
    "match",
    "material",
    "math",
    "matrix",
    "matter",
    "maximum",
    "maze",
    "meadow",
    "mean",
    "measure",
    "meat",
    "mechanic",
    "medal",
    "media",
    "melody",
    "melt",
    "member",
    "memory",
    "mention",
    "menu",
    "mercy",
    "merge",
    "merit",
    "merry",
    "mesh",
    "message",
    "metal",
    "method",
    "middle",
    "midnight",
    "milk",
    "million",
    "mimic",
    "mind",
    "minimum",
    "minor",
    "minute",
    "miracle",
    "mirror",
    "misery",
    "miss",
    "mistake",
    "mix",
    "mixed",
    "mixture",
    "mobile",
    "model",
    "modify",
    "mom",
    "moment",
    "monitor",
    "monkey",
    "monster",
    "month",
    "moon",
    "moral",
    "more",
    "morning",
    "mosquito",
    "mother",
    "motion",
    "motor",
    "mountain",
    "mouse",
    "move",
    "movie",
    "much",
    "muffin",
    "mule",
    "multiply",
    "muscle",
    "museum",
    "mushroom",
    "music",
    "must",
    "mutual",
    "myself",
    "mystery",
    "myth",
    "naive",
    "name",
    "napkin",
    "narrow",
    "nasty",
    "nation",
    "nature",
    "near",
    "neck",
    "need",
    "negative",
    "neglect",
    "neither",
    "nephew",
    "nerve",
    "nest",
    "net",
    "network",
    "neutral",
    "never",
    "news",
    "next",
    "nice",
    "night",
    "noble",
    "noise",
    "nominee",
    "noodle",
    "normal",
    "north",
    "nose",
    "notable",
    "note",
    "nothing",
    "notice",
    "novel",
    "now",
    "nuclear",
    "number",
    "nurse",
    "nut",
    "oak",
    "obey",
    "object",
    "oblige",
    "obscure",
    "observe",
    "obtain",
    "obvious",
    "occur",
    "ocean",
    "october",
    "odor",
    "off",
    "offer",
    "office",
    "often",
    "oil",
    "okay",
    "old",
    "olive",
    "olympic",
    "omit",
    "once",
    "one",
    "onion",
    "online",
    "only",
    "open",
    "opera",
    "opinion",
    "oppose",
    "option",
    "orange",
    "orbit",
    "orchard",
    "order",
    "ordinary",
    "organ",
    "orient",
    "original",
    "orphan",
    "ostrich",
    "other",
    "outdoor",
    "outer",
    "output",
    "outside",
    "oval",
    "oven",
    "over",
    "own",
    "owner",
    "oxygen",
    "oyster",
    "ozone",
    "pact",
    "paddle",
    "page",
    "pair",
    "palace",
    "palm",
    "panda",
    "panel",
    "panic",
    "panther",
    "paper",
    "parade",
    "parent",
    "park",
    "parrot",
    "party",
    "pass",
    "patch",
    "path",
    "patient",
    "patrol",
    "pattern",
    "pause",
    "pave",
    "payment",
    "peace",
    "peanut",
    "pear",
    "peasant",
    "pelican",
    "pen",
    "penalty",
    "pencil",
    "people",
    "pepper",
    "perfect",
    "permit",
    "person",
    "pet",
    "phone",
    "photo",
    "phrase",
    "physical",
    "piano",
    "picnic",
    "picture",
    "piece",
    "pig",
    "pigeon",
    "pill",
    "pilot",
    "pink",
    "pioneer",
    "pipe",
    "pistol",
    "pitch",
    "pizza",
    "place",
    "planet",
    "plastic",
    "plate",
    "play",
    "please",
    "pledge",
    "pluck",
    "plug",
    "plunge",
    "poem",
    "poet",
    "point",
    "polar",
    "pole",
    "police",
    "pond",
    "pony",
    "pool",
    "popular",
    "portion",
    "position",
    "possible",
    "post",
    "potato",
    "pottery",
    "poverty",
    "powder",
    "power",
    "practice",
    "praise",
    "predict",
    "prefer",
    "prepare",
    "present",
    "pretty",
    "prevent",
    "price",
    "pride",
    "primary",
    "print",
    "priority",
    "prison",
    "private",
    "prize",
    "problem",
    "process",
    "produce",
    "profit",
    "program",
    "project",
    "promote",
    "proof",
    "property",
    "prosper",
    "protect",
    "proud",
    "provide",
    "public",
    "pudding",
    "pull",
    "pulp",
    "pulse",
    "pumpkin",
    "punch",
    "pupil",
    "puppy",
    "purchase",
    "purity",
    "purpose",
    "purse",
    "push",
    "put",
    "puzzle",
    "pyramid",
    "quality",
    "quantum",
    "quarter",
    "question",
    "quick",
    "quit",
    "quiz",
    "quote",
    "rabbit",
    "raccoon",
    "race",
    "rack",
    "radar",
    "radio",
    "rail",
    "rain",
    "raise",
    "rally",
    "ramp",
    "ranch",
    "random",
    "range",
    "rapid",
    "rare",
    "rate",
    "rather",
    "raven",
    "raw",
    "razor",
    "ready",
    "real",
    "reason",
    "rebel",
    "rebuild",
    "recall",
    "receive",
    "recipe",
    "record",
    "recycle",
    "reduce",
    "reflect",
    "reform",
    "refuse",
    "region",
    "regret",
    "regular",
    "reject",
    "relax",
    "release",
    "relief",
    "rely",
    "remain",
    "remember",
    "remind",
    "remove",
    "render",
    "renew",
    "rent",
    "reopen",
    "repair",
    "repeat",
    "replace",
    "report",
    "require",
    "rescue",
    "resemble",
    "resist",
    "resource",
    "response",
    "result",
    "retire",
    "retreat",
    "return",
    "reunion",
    "reveal",
    "review",
    "reward",
    "rhythm",
    "rib",
    "ribbon",
    "rice",
    "rich",
    "ride",
    "ridge",
    "rifle",
    "right",
    "rigid",
    "ring",
    "riot",
    "ripple",
    "risk",
    "ritual",
    "rival",
    "river",
    "road",
    "roast",
    "robot",
    "robust",
    "rocket",
    "romance",
    "roof",
    "rookie",
    "room",
    "rose",
    "rotate",
    "rough",
    "round",
    "route",
    "royal",
    "rubber",
    "rude",
    "rug",
    "rule",
    "run",
    "runway",
    "rural",
    "sad",
    "saddle",
    "sadness",
    "safe",
    "sail",
    "salad",
    "salmon",
    "salon",
    "salt",
    "salute",
    "same",
    "sample",
    "sand",
    "satisfy",
    "satoshi",
    "sauce",
    "sausage",
    "save",
    "say",
    "scale",
    "scan",
    "scare",
    "scatter",
    "scene",
    "scheme",
    "school",
    "science",
    "scissors",
    "scorpion",
    "scout",
    "scrap",
    "screen",
    "script",
    "scrub",
    "sea",
    "search",
    "season",
    "seat",
    "second",
    "secret",
    "section",
    "security",
    "seed",
    "seek",
    "segment",
    "select",
    "sell",
    "seminar",
    "senior",
    "sense",
    "sentence",
    "series",
    "service",
    "session",
    "settle",
    "setup",
    "seven",
    "shadow",
    "shaft",
    "shallow",
    "share",
    "shed",
    "shell",
    "sheriff",
    "shield",
    "shift",
    "shine",
    "ship",
    "shiver",
    "shock",
    "shoe",
    "shoot",
    "shop",
    "short",
    "shoulder",
    "shove",
    "shrimp",
    "shrug",
    "shuffle",
    "shy",
    "sibling",
    "sick",
    "side",
    "siege",
    "sight",
    "sign",
    "silent",
    "silk",
    "silly",
    "silver",
    "similar",
    "simple",
    "since",
    "sing",
    "siren",
    "sister",
    "situate",
    "six",
    "size",
    "skate",
    "sketch",
    "ski",
    "skill",
    "skin",
    "skirt",
    "skull",
    "slab",
    "slam",
    "sleep",
    "slender",
    "slice",
    "slide",
    "slight",
    "slim",
    "slogan",
    "slot",
    "slow",
    "slush",
    "small",
    "smart",
    "smile",
    "smoke",
    "smooth",
    "snack",
    "snake",
    "snap",
    "sniff",
    "snow",
    "soap",
    "soccer",
    "social",
    "sock",
    "soda",
    "soft",
    "solar",
    "soldier",
    "solid",
    "solution",
    "solve",
    "someone",
    "song",
    "soon",
    "sorry",
    "sort",
    "soul",
    "sound",
    "soup",
    "source",
    "south",
    "space",
    "spare",
    "spatial",
    "spawn",
    "speak",
    "special",
    "speed",
    "spell",
    "spend",
    "sphere",
    "spice",
    "spider",
    "spike",
    "spin",
    "spirit",
    "split",
    "spoil",
    "sponsor",
    "spoon",
    "sport",
    "spot",
    "spray",
    "spread",
    "spring",
    "spy",
    "square",
    "squeeze",
    "squirrel",
    "stable",
    "stadium",
    "staff",
    "stage",
    "stairs",
    "stamp",
    "stand",
    "start",
    "state",
    "stay",
    "steak",
    "steel",
    "stem",
    "step",
    "stereo",
    "stick",
    "still",
    "sting",
    "stock",
    "stomach",
    "stone",
    "stool",
    "story",
    "stove",
    "strategy",
    "street",
    "strike",
    "strong",
    "struggle",
    "student",
    "stuff",
    "stumble",
    "style",
    "subject",
    "submit",
    "subway",
    "success",
    "such",
    "sudden",
    "suffer",
    "sugar",
    "suggest",
    "suit",
    "summer",
    "sun",
    "sunny",
    "sunset",
    "super",
    "supply",
    "supreme",
    "sure",
    "surface",
    "surge",
    "surprise",
    "surround",
    "survey",
    "suspect",
    "sustain",
    "swallow",
    "swamp",
    "swap",
    "swarm",
    "swear",
    "sweet",
    "swift",
    "swim",
    "swing",
    "switch",
    "sword",
    "symbol",
    "symptom",
    "syrup",
    "system",
    "table",
    "tackle",
    "tag",
    "tail",
    "talent",
    "talk",
    "tank",
    "tape",
    "target",
    "task",
    "taste",
    "tattoo",
    "taxi",
    "teach",
    "team",
    "tell",
    "ten",
    "tenant",
    "tennis",
    "tent",
    "term",
    "test",
    "text",
    "thank",
    "that",
    "theme",
    "then",
    "theory",
    "there",
    "they",
    "thing",
    "this",
    "thought",
    "three",
    "thrive",
    "throw",
    "thumb",
    "thunder",
    "ticket",
    "tide",
    "tiger",
    "tilt",
    "timber",
    "time",
    "tiny",
    "tip",
    "tired",
    "tissue",
    "title",
    "toast",
    "tobacco",
    "today",
    "toddler",
    "toe",
    "together",
    "toilet",
    "token",
    "tomato",
    "tomorrow",
    "tone",
    "tongue",
    "tonight",
    "tool",
    "tooth",
    "top",
    "topic",
    "topple",
    "torch",
    "tornado",
    "tortoise",
    "toss",
    "total",
    "tourist",
    "toward",
    "tower",
    "town",
    "toy",
    "track",
    "trade",
    "traffic",
    "tragic",
    "train",
    "transfer",
    "trap",
    "trash",
    "travel",
    "tray",
    "treat",
    "tree",
    "trend",
    "trial",
    "tribe",
    "trick",
    "trigger",
    "trim",
    "trip",
    "trophy",
    "trouble",
    "truck",
    "true",
    "truly",
    "trumpet",
    "trust",
    "truth",
    "try",
    "tube",
    "tuition",
    "tumble",
    "tuna",
    "tunnel",
    "turkey",
    "turn",
    "turtle",
    "twelve",
    "twenty",
    "twice",
    "twin",
    "twist",
    "two",
    "type",
    "typical",
    "ugly",
    "umbrella",
    "unable",
    "unaware",
    "uncle",
    "uncover",
    "under",
    "undo",
    "unfair",
    "unfold",
    "unhappy",
    "uniform",
    "unique",
    "unit",
    "universe",
    "unknown",
    "unlock",
    "until",
    "unusual",
    "unveil",
    "update",
    "upgrade",
    "uphold",
    "upon",
    "upper",
    "upset",
    "urban",
    "urge",
    "usage",
    "use",
    "used",
    "useful",
    "useless",
    "usual",
    "utility",
    "vacant",
    "vacuum",
    "vague",
    "valid",
    "valley",
    "valve",
    "van",
    "vanish",
    "vapor",
    "various",
    "vast",
    "vault",
    "vehicle",
    "velvet",
    "vendor",
    "venture",
    "venue",
    "verb",
    "verify",
    "version",
    "very",
    "vessel",
    "veteran",
    "viable",
    "vibrant",
    "vicious",
    "victory",
    "video",
    "view",
    "village",
    "vintage",
    "violin",
    "virtual",
    "virus",
    "visa",
    "visit",
    "visual",
    "vital",
    "vivid",
    "vocal",
    "voice",
    "void",
    "volcano",
    "volume",
    "vote",
    "voyage",
    "wage",
    "wagon",
    "wait",
    "walk",
    "wall",
    "walnut",
    "want",
    "warfare",
    "warm",
    "warrior",
    "wash",
    "wasp",
    "waste",
    "water",
    "wave",
    "way",
    "wealth",
    "weapon",
    "wear",
    "weasel",
    "weather",
    "web",
    "wedding",
    "weekend",
    "weird",
    "welcome",
    "west",
    "wet",
    "whale",
    "what",
    "wheat",
    "wheel",
    "when",
    "where",
    "whip",
    "whisper",
    "wide",
    "width",
    "wife",
    "wild",
    "will",
    "win",
    "window",
    "wine",
    "wing",
    "wink",
    "winner",
    "winter",
    "wire",
    "wisdom",
    "wise",
    "wish",
    "witness",
    "wolf",
    "woman",
    "wonder",
    "wood",
    "wool",
    "word",
    "work",
    "world",
    "worry",
    "worth",
    "wrap",
    "wreck",
    "wrestle",
    "wrist",
    "write",
    "wrong",
    "yard",
    "year",
    "yellow",
    "you",
    "young",
    "youth",
    "zebra",
    "zero",
    "zone",
    "zoo",
]
assert len(BIP39) == 2048, len(BIP39)


# --------------------------------------------------------------------------
# value helpers (all randomness comes from `secrets`)
# --------------------------------------------------------------------------
def pick(seq):
    return secrets.choice(seq)


def rs(alphabet: str, n: int) -> str:
    return "".join(secrets.choice(alphabet) for _ in range(n))


def hx(n: int) -> str:
    return rs(HEX, n)


def num(n: int) -> str:
    """n decimal digits, first one non-zero."""
    return secrets.choice("123456789") + rs(DIG, n - 1)


def b64(nbytes: int) -> str:
    return base64.b64encode(secrets.token_bytes(nbytes)).decode()


def b64u(nbytes: int) -> str:
    return base64.urlsafe_b64encode(secrets.token_bytes(nbytes)).rstrip(b"=").decode()


def b64u_json(obj) -> str:
    raw = json.dumps(obj, separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def uid() -> str:
    return str(uuid.UUID(bytes=secrets.token_bytes(16), version=4))


def grouped(alphabet: str, groups: int, size: int, sep: str = "-") -> str:
    return sep.join(rs(alphabet, size) for _ in range(groups))


def pw(n: int = 16, sym: str = SYM) -> str:
    """Password-manager style password; starts with a letter, ends alnum."""
    alpha = ALNUM + sym
    while True:
        s = secrets.choice(LETTERS) + rs(alpha, n - 2) + secrets.choice(ALNUM)
        if (
            any(c.isdigit() for c in s)
            and any(c.isupper() for c in s)
            and any(c.islower() for c in s)
            and (not sym or any(c in sym for c in s))
        ):
            return s


def pw_url(n: int = 20) -> str:
    """Password made only of URL-unreserved characters."""
    return pw(n, "-_.")


WORDS = {
    "en": [
        "Bluebird",
        "Maple",
        "Riverside",
        "Pumpkin",
        "Snowfall",
        "Harbor",
        "Falcon",
        "Sunflower",
        "Biscuit",
        "Thunder",
        "Copper",
        "Willow",
    ],
    "de": [
        "Sonnenschein",
        "Schmetterling",
        "Apfelbaum",
        "Wanderweg",
        "Nordsee",
        "Lindenbaum",
        "Bergsee",
        "Zwetschge",
        "Kuckuck",
        "Hafenkran",
    ],
    "fr": [
        "Soleil",
        "Papillon",
        "Marguerite",
        "Chocolat",
        "Lavande",
        "Bretagne",
        "Tournesol",
        "Croissant",
        "Mirabelle",
    ],
    "es": [
        "Girasol",
        "Mariposa",
        "Tortuga",
        "Sevilla",
        "Limonada",
        "Estrella",
        "Paloma",
        "Churros",
        "Sardina",
    ],
    "it": [
        "Girasole",
        "Farfalla",
        "Gelato",
        "Vesuvio",
        "Tramonto",
        "Basilico",
        "Cipresso",
        "Ciambella",
    ],
    "pt": [
        "Saudade",
        "Goiaba",
        "Jabuticaba",
        "Maracuja",
        "Ipanema",
        "Sabia",
        "Cajueiro",
        "Brigadeiro",
    ],
    "nl": [
        "Tulpen",
        "Fietsbel",
        "Stroopwafel",
        "Molenaar",
        "Zonnebloem",
        "Kikker",
        "Dijkgraaf",
        "Hagelslag",
    ],
    "ru": [
        "Solnyshko",
        "Matreshka",
        "Medved",
        "Zvezda",
        "Kotenok",
        "Berezka",
        "Romashka",
        "Pelmeni",
    ],
    "zh": ["woaini", "xiaomao", "wangcai", "taiyang", "huanghe", "xiaoyu", "baobei", "tianshi"],
    "ja": ["sakura", "hanabi", "tanuki", "momiji", "fujisan", "kitsune", "yuzuki"],
    "ko": ["saranghae", "hangang", "haneul", "bada", "dubu", "gureum", "byeol"],
}


def human(lang: str) -> str:
    """Human-chosen style password: a word plus digits (always ends alnum)."""
    w = pick(WORDS[lang])
    d = rs(DIG, pick([2, 3, 4]))
    form = secrets.randbelow(4)
    if form == 0:
        return w + d
    if form == 1:
        return w + pick("!?#*@.") + d
    if form == 2:
        return w.lower() + "_" + d
    return d + w


def pin(n: int = 4) -> str:
    """A PIN / keypad code that is not trivially guessable."""
    while True:
        s = rs(DIG, n)
        if len(set(s)) < 2:
            continue
        steps = {(int(b) - int(a)) % 10 for a, b in itertools.pairwise(s)}
        if steps in ({1}, {9}):
            continue
        if n == 4 and s[:2] in ("19", "20"):
            continue  # avoid year-like codes
        return s


def seed_phrase(n: int) -> str:
    return " ".join(pick(BIP39) for _ in range(n))


def bitlocker() -> str:
    return "-".join(f"{11 * secrets.randbelow(65536):06d}" for _ in range(8))


def jwt(payload: dict, alg: str = "HS256", kid: bool = False) -> str:
    head = {"alg": alg, "typ": "JWT"}
    if kid:
        head["kid"] = b64u(24)
    sig = b64u(32 if alg.startswith("HS") else 256)
    return f"{b64u_json(head)}.{b64u_json(payload)}.{sig}"


def now() -> int:
    return int(time.time()) - secrets.randbelow(86400 * 20)


def wrap(s: str, width: int) -> list[str]:
    return [s[i : i + width] for i in range(0, len(s), width)]


PKCS1_RSA2048 = bytes.fromhex("308204a40201000282010100")
PKCS8_RSA2048 = bytes.fromhex(
    "308204bd020100300d06092a864886f70d0101010500048204a7308204a302010002820101"
)
OPENSSH_ED25519 = (
    b"openssh-key-v1\x00"
    + struct.pack(">I", 4)
    + b"none"
    + struct.pack(">I", 4)
    + b"none"
    + struct.pack(">I", 0)
    + struct.pack(">I", 1)
    + struct.pack(">I", 51)
    + struct.pack(">I", 11)
    + b"ssh-ed25519"
    + struct.pack(">I", 32)
)


def key_lines(prefix: bytes, total: int, width: int = 64) -> list[str]:
    data = prefix + secrets.token_bytes(total - len(prefix))
    return wrap(base64.b64encode(data).decode(), width)


def body_line(lines: list[str], skip: int = 1) -> str:
    """A random full line of a key body, away from the fixed prefix."""
    return pick(lines[skip:-1])


def ssh_ed25519_pub() -> str:
    blob = struct.pack(">I", 11) + b"ssh-ed25519" + struct.pack(">I", 32) + secrets.token_bytes(32)
    return "ssh-ed25519 " + base64.b64encode(blob).decode()


def discord_token() -> str:
    snowflake = "1" + rs(DIG, 18)  # current Discord ids are 19 digits
    first = base64.b64encode(snowflake.encode()).decode().rstrip("=")
    return f"{first}.{rs(B64URL, 6)}.{rs(B64URL, 38)}"


def telegram_token() -> str:
    return f"{num(10)}:AA{rs(B64URL, 33)}"


def slack_bot() -> str:
    return f"xoxb-{num(12)}-{num(13)}-{rs(ALNUM, 24)}"


# --------------------------------------------------------------------------
# registry of positive templates
# --------------------------------------------------------------------------
TEMPLATES: list[tuple[str, str, object]] = []


def P(kind: str, lang: str):
    def deco(fn):
        TEMPLATES.append((kind, lang, fn))
        return fn

    return deco


# ==========================================================================
# English
# ==========================================================================
@P("aws_secret_access_key", "en")
def _():
    kid, s = "AKIA" + rs(B32, 16), rs(ALNUM + "+/", 40)
    return (
        f"$ cat ~/.aws/credentials\n[default]\naws_access_key_id = {kid}\n"
        f"aws_secret_access_key = {s}\nregion = eu-central-1\n\n"
        "why does boto3 still say InvalidClientTokenId with this?"
    ), s


@P("gcp_service_account_private_key", "en")
def _():
    lines = key_lines(PKCS8_RSA2048, 1217)
    s = body_line(lines)
    pem = "-----BEGIN PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END PRIVATE KEY-----\n"
    doc = {
        "type": "service_account",
        "project_id": "billing-exporter-4471",
        "private_key_id": hx(40),
        "private_key": pem,
        "client_email": "exporter@billing-exporter-4471.iam.gserviceaccount.com",
        "client_id": num(21),
        "token_uri": "https://oauth2.googleapis.com/token",
    }
    return (
        "Here's the key file the contractor sent, gcloud auth activate-service-account "
        "rejects it:\n" + json.dumps(doc, indent=2)
    ), s


@P("google_api_key", "en")
def _():
    s = "AIza" + rs(B64URL, 35)
    return (
        'import { GoogleGenerativeAI } from "@google/generative-ai";\n'
        f'const genAI = new GoogleGenerativeAI("{s}");\n'
        'const model = genAI.getGenerativeModel({ model: "gemini-1.5-flash" });\n\n'
        "this throws 429 after two requests, is the key on the free tier?"
    ), s


@P("google_oauth_client_secret", "en")
def _():
    s = "GOCSPX-" + rs(B64URL, 28)
    doc = {
        "installed": {
            "client_id": f"{num(12)}-{rs(LO + DIG, 32)}.apps.googleusercontent.com",
            "project_id": "family-photos-sync",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "client_secret": s,
            "redirect_uris": ["http://localhost"],
        }
    }
    return "my client_secret.json looks like this: " + json.dumps(doc), s


@P("google_oauth_access_token", "en")
def _():
    s = "ya29.a0A" + rs(B64URL, 170)
    return (
        f'curl -H "Authorization: Bearer {s}" '
        '"https://www.googleapis.com/drive/v3/files?pageSize=10"\n'
        "returns 401 invalid_credentials even though I just got the token"
    ), s


@P("azure_storage_account_key", "en")
def _():
    s = b64(64)
    cs = (
        f"DefaultEndpointsProtocol=https;AccountName=stcontosoinvoices;AccountKey={s};"
        "EndpointSuffix=core.windows.net"
    )
    return (
        f'appsettings.Production.json:\n{{\n  "ConnectionStrings": {{\n    "Blob": "{cs}"\n  }}\n}}'
    ), s


@P("azure_sas_signature", "en")
def _():
    s = quote(b64(32), safe="")
    return (
        "Here's the link to the export, it expires Friday: "
        "https://stcontosoexports.blob.core.windows.net/exports/2024-q2.csv"
        "?sv=2022-11-02&ss=b&srt=o&sp=r&se=2024-06-14T17:00:00Z&st=2024-06-07T09:00:00Z"
        f"&spr=https&sig={s}"
    ), s


@P("azure_ad_client_secret", "en")
def _():
    s = rs(ALNUM, 3) + "8Q~" + rs(ALNUM + "_~.-", 34)
    return (
        f"az login --service-principal -u {uid()} -p {s} --tenant {uid()}\n"
        "AADSTS7000215: Invalid client secret provided. What am I doing wrong?"
    ), s


@P("azure_devops_pat", "en")
def _():
    s = rs(LO + "234567", 52)
    return (
        "git clone fails in the pipeline container:\n"
        f"git clone https://build:{s}@dev.azure.com/contoso/Payments/_git/payments-api\n"
        "fatal: Authentication failed"
    ), s


@P("cloudflare_api_token", "en")
def _():
    s = rs(B64URL, 40)
    return (
        'terraform plan fails with "Invalid request headers", main.tf:\n\n'
        "terraform {\n  required_providers {\n    cloudflare = {\n"
        '      source  = "cloudflare/cloudflare"\n      version = "~> 4.0"\n    }\n  }\n}\n\n'
        f'provider "cloudflare" {{\n  api_token = "{s}"\n}}'
    ), s


@P("cloudflare_tunnel_token", "en")
def _():
    raw = json.dumps({"a": hx(32), "t": uid(), "s": b64(32)}, separators=(",", ":"))
    s = base64.b64encode(raw.encode()).decode()
    return (
        "The dashboard told me to run this on the NAS, is it safe?\n"
        f"sudo cloudflared service install {s}"
    ), s


@P("vercel_token", "en")
def _():
    s = rs(ALNUM, 24)
    return (
        "  deploy:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n      - run: npm ci\n"
        f"      - run: npx vercel deploy --prod --yes --token {s}"
    ), s


@P("supabase_service_role_key", "en")
def _():
    ref = rs(LO, 20)
    t = now()
    s = jwt({"iss": "supabase", "ref": ref, "role": "service_role", "iat": t, "exp": t + 315360000})
    return (
        f"# .env.local\nNEXT_PUBLIC_SUPABASE_URL=https://{ref}.supabase.co\n"
        f"SUPABASE_SERVICE_ROLE_KEY={s}"
    ), s


@P("firebase_fcm_server_key", "en")
def _():
    s = "AAAA" + rs(B64URL, 7) + ":APA91b" + rs(B64URL, 134)
    return (
        "POST /fcm/send HTTP/1.1\nHost: fcm.googleapis.com\n"
        f"Authorization: key={s}\nContent-Type: application/json\n\n"
        '{"to": "/topics/news", "notification": {"title": "Hi"}}'
    ), s


@P("hashicorp_vault_token", "en")
def _():
    s = "hvs.CAESI" + rs(B64URL, 86)
    return (
        f"$ vault login {s}\n"
        "Success! You are now authenticated.\n"
        "$ vault kv get secret/payments\nError: permission denied. Which policy is missing?"
    ), s


@P("terraform_cloud_token", "en")
def _():
    s = rs(ALNUM, 14) + ".atlasv1." + rs(ALNUM, 67)
    doc = {"credentials": {"app.terraform.io": {"token": s}}}
    return "~/.terraform.d/credentials.tfrc.json\n" + json.dumps(doc, indent=2), s


@P("stripe_secret_key", "en")
def _():
    s = "sk_live_51" + rs(ALNUM, 97)
    return (
        "const Stripe = require('stripe');\n"
        f"const stripe = Stripe('{s}');\n\n"
        "const session = await stripe.checkout.sessions.create({ mode: 'payment', line_items });"
    ), s


@P("paystack_secret_key", "en")
def _():
    s = "sk_live_" + hx(40)
    return (
        "curl_setopt_array($curl, array(\n"
        '  CURLOPT_URL => "https://api.paystack.co/transaction/initialize",\n'
        "  CURLOPT_HTTPHEADER => array(\n"
        f'    "Authorization: Bearer {s}",\n'
        '    "Content-Type: application/json",\n  ),\n));'
    ), s


@P("razorpay_key_secret", "en")
def _():
    s = rs(ALNUM, 24)
    return (
        "import razorpay\n"
        f'client = razorpay.Client(auth=("rzp_live_{rs(ALNUM, 14)}", "{s}"))\n'
        'order = client.order.create({"amount": 50000, "currency": "INR"})'
    ), s


@P("shopify_admin_api_token", "en")
def _():
    s = "shpat_" + hx(32)
    return (
        "curl -X POST https://petal-and-stem.myshopify.com/admin/api/2024-04/graphql.json "
        f"-H 'Content-Type: application/json' -H 'X-Shopify-Access-Token: {s}' "
        '-d \'{"query": "{ shop { name } }"}\''
    ), s


@P("twilio_auth_token", "en")
def _():
    s = hx(32)
    return (
        f"account_sid = 'AC{hx(32)}'\nauth_token = '{s}'\n"
        "@client = Twilio::REST::Client.new(account_sid, auth_token)\n"
        "# 20003 Authenticate error, any idea?"
    ), s


@P("sendgrid_api_key", "en")
def _():
    s = f"SG.{rs(B64URL, 22)}.{rs(B64URL, 43)}"
    return (
        f'var client = new SendGridClient("{s}");\n'
        'var msg = MailHelper.CreateSingleEmail(from, to, "Invoice", body, html);\n'
        "var response = await client.SendEmailAsync(msg);"
    ), s


@P("github_pat_classic", "en")
def _():
    s = "ghp_" + rs(ALNUM, 36)
    return (
        f"export GITHUB_TOKEN={s}\ngh pr list --repo acme/infra\n"
        "HTTP 401: Bad credentials (https://api.github.com/graphql)"
    ), s


@P("github_fine_grained_pat", "en")
def _():
    s = f"github_pat_{rs(ALNUM, 22)}_{rs(ALNUM, 59)}"
    return (
        "ctx := context.Background()\n"
        f'client := github.NewClient(nil).WithAuthToken("{s}")\n'
        'repos, _, err := client.Repositories.ListByOrg(ctx, "acme", nil)'
    ), s


@P("github_oauth_token", "en")
def _():
    s = "gho_" + rs(ALNUM, 36)
    return (
        "cat ~/.config/gh/hosts.yml\ngithub.com:\n    user: mkowalski\n"
        f"    oauth_token: {s}\n    git_protocol: ssh"
    ), s


@P("github_app_installation_token", "en")
def _():
    s = "ghs_" + rs(ALNUM, 36)
    return (
        "2024-06-11T08:14:02.114Z DEBUG octokit request GET /repos/acme/infra/contents/ "
        '{"headers":{"accept":"application/vnd.github+json",'
        f'"authorization":"token {s}"}}}}'
    ), s


@P("gitlab_pat", "en")
def _():
    s = "glpat-" + rs(B64URL, 20)
    return (
        f'curl --header "PRIVATE-TOKEN: {s}" '
        '"https://gitlab.example.com/api/v4/projects?membership=true&per_page=50"'
    ), s


@P("circleci_personal_token", "en")
def _():
    s = hx(40)
    return f'curl -H "Circle-Token: {s}" https://circleci.com/api/v2/me', s


@P("npm_access_token", "en")
def _():
    s = "npm_" + rs(ALNUM, 36)
    return (
        f"my .npmrc:\n//registry.npmjs.org/:_authToken={s}\n@acme:registry=https://registry.npmjs.org/\n"
        "npm publish still gives E403"
    ), s


@P("pypi_api_token", "en")
def _():
    s = "pypi-AgEIcHlwaS5vcmc" + rs(B64URL, 160)
    return (
        "~/.pypirc\n[distutils]\nindex-servers = pypi\n\n[pypi]\n"
        f"  username = __token__\n  password = {s}"
    ), s


@P("crates_io_token", "en")
def _():
    s = "cio" + rs(ALNUM, 32)
    return f'~/.cargo/credentials.toml\n[registry]\ntoken = "{s}"', s


@P("docker_hub_pat", "en")
def _():
    s = "dckr_pat_" + rs(B64URL, 27)
    return (
        f"$ docker login -u acmebuild -p {s}\n"
        "WARNING! Using --password via the CLI is insecure. Use --password-stdin.\n"
        "Login Succeeded"
    ), s


@P("docker_config_auth", "en")
def _():
    s = base64.b64encode(f"gitlab-ci-token:{pw_url(24)}".encode()).decode()
    doc = {"auths": {"registry.gitlab.com": {"auth": s}}, "credsStore": ""}
    return "this is ~/.docker/config.json on the runner:\n" + json.dumps(doc, indent=2), s


@P("slack_bot_token", "en")
def _():
    s = slack_bot()
    return (
        "from slack_sdk import WebClient\n"
        f'client = WebClient(token="{s}")\n'
        'client.chat_postMessage(channel="#deploys", text="v2.3.1 is live")'
    ), s


@P("slack_webhook_url", "en")
def _():
    s = rs(ALNUM, 24)
    url = f"https://hooks.slack.com/services/T{rs(UP + DIG, 10)}/B{rs(UP + DIG, 10)}/{s}"
    call = {
        "tool": "http_request",
        "args": {
            "method": "POST",
            "url": url,
            "body": json.dumps({"text": "nightly backup finished"}),
        },
    }
    return "Tool call: " + json.dumps(call), s


@P("discord_bot_token", "en")
def _():
    s = discord_token()
    return (
        "import discord\nintents = discord.Intents.default()\n"
        "client = discord.Client(intents=intents)\n\n"
        f"client.run('{s}')"
    ), s


@P("telegram_bot_token", "en")
def _():
    s = telegram_token()
    return (
        "Why does this return 404?\n"
        f"https://api.telegram.org/bot{s}/sendMessage?chat_id=-1001234567890&text=hello"
    ), s


@P("openai_api_key", "en")
def _():
    s = "sk-proj-" + rs(B64URL, 74) + "T3BlbkFJ" + rs(B64URL, 74)
    obs = {"stdout": f"OPENAI_API_KEY={s}\nOPENAI_ORG_ID=org-{rs(ALNUM, 24)}\n", "exit_code": 0}
    return "Observation: " + json.dumps(obs), s


@P("anthropic_api_key", "en")
def _():
    s = "sk-ant-api03-" + rs(B64URL, 93) + "AA"
    return (
        "import Anthropic from '@anthropic-ai/sdk';\n\n"
        f"const client = new Anthropic({{ apiKey: '{s}' }});"
    ), s


@P("huggingface_token", "en")
def _():
    s = "hf_" + rs(LETTERS, 34)
    return f"huggingface-cli login --token {s} --add-to-git-credential", s


@P("groq_api_key", "en")
def _():
    s = "gsk_" + rs(ALNUM, 52)
    return (
        "services:\n  bot:\n    build: .\n    environment:\n"
        f"      - GROQ_API_KEY={s}\n      - LOG_LEVEL=info"
    ), s


@P("datadog_api_key", "en")
def _():
    s = hx(32)
    return (
        f"/etc/datadog-agent/datadog.yaml\napi_key: {s}\nsite: datadoghq.eu\n"
        "logs_enabled: true\n\nagent status says API Key invalid"
    ), s


@P("sentry_user_auth_token", "en")
def _():
    s = "sntryu_" + hx(64)
    return f"sentry-cli --auth-token {s} releases new -p web-frontend 1.4.2", s


@P("grafana_service_account_token", "en")
def _():
    s = f"glsa_{rs(ALNUM, 32)}_{hx(8)}"
    return (
        'req, _ := http.NewRequest("GET", "https://grafana.example.com/api/dashboards/uid/node", nil)\n'
        f'req.Header.Set("Authorization", "Bearer {s}")'
    ), s


@P("splunk_hec_token", "en")
def _():
    s = uid()
    return (
        "curl -k https://splunk.example.com:8088/services/collector/event "
        f'-H "Authorization: Splunk {s}" -d \'{{"event": "hello world", "sourcetype": "manual"}}\''
    ), s


@P("heroku_api_key", "en")
def _():
    s = uid()
    return f"~/.netrc\nmachine api.heroku.com\n  login ops@example.com\n  password {s}", s


@P("postgres_url_password", "en")
def _():
    s = pw_url(22)
    return f"DATABASE_URL=postgres://app_rw:{s}@db-prod.internal:5432/orders?sslmode=require", s


@P("mongodb_srv_password", "en")
def _():
    s = pw_url(18)
    return (
        f'await mongoose.connect("mongodb+srv://analytics:{s}@cluster0.ab1cd.mongodb.net/events'
        '?retryWrites=true&w=majority");'
    ), s


@P("redis_url_password", "en")
def _():
    s = pw_url(32)
    return (
        "import redis\n"
        f'r = redis.from_url("rediss://default:{s}@redis-12345.c1.eu-west-1-2.ec2.cloud.redislabs.com:12345/0")'
    ), s


@P("jdbc_sqlserver_password", "en")
def _():
    s = pw(18, "!#%*+-?@^_.")
    return (
        'String url = "jdbc:sqlserver://sql01.corp.local:1433;databaseName=Payroll;'
        f'user=svc_payroll;password={s};encrypt=true;trustServerCertificate=true";\n'
        "Connection conn = DriverManager.getConnection(url);"
    ), s


@P("mysql_cli_password", "en")
def _():
    s = pw(16)
    return f"mysql -h 10.0.3.14 -u root -p'{s}' shop_prod < dump_2024-06-10.sql", s


@P("pgpass_password", "en")
def _():
    s = pw(20, "!#%*+-?@^_.")
    return (
        f"my ~/.pgpass has `db.internal:5432:*:reporting:{s}` and chmod 600, "
        "but psql still prompts for a password"
    ), s


@P("confluent_kafka_api_secret", "en")
def _():
    s = rs(ALNUM + "+/", 64)
    return (
        "bootstrap.servers=pkc-4r087.europe-west3.gcp.confluent.cloud:9092\n"
        "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n"
        "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
        f'username="{rs(UP + DIG, 16)}" password="{s}";'
    ), s


@P("ldap_bind_password", "en")
def _():
    s = pw(18)
    return (
        'ldapsearch -x -H ldaps://ldap.corp.example -D "cn=svc-wiki,ou=services,dc=corp,dc=example" '
        f'-w \'{s}\' -b "dc=corp,dc=example" "(uid=jdoe)"'
    ), s


@P("http_basic_auth_header", "en")
def _():
    s = base64.b64encode(f"metrics:{pw(20)}".encode()).decode()
    return (
        "location /internal/ {\n    proxy_pass http://10.0.0.12:8080;\n"
        f'    proxy_set_header Authorization "Basic {s}";\n}}'
    ), s


@P("session_cookie", "en")
def _():
    s = rs(LO + DIG, 32)
    return (
        "GET /admin/orders/ HTTP/1.1\nHost: shop.example.com\n"
        f"Cookie: csrftoken={rs(ALNUM, 32)}; sessionid={s}\n"
        "User-Agent: Mozilla/5.0"
    ), s


@P("aws_s3_presigned_signature", "en")
def _():
    s = hx(64)
    return (
        "download link for the auditors: https://acme-reports.s3.eu-west-1.amazonaws.com/2024/q2.pdf"
        "?X-Amz-Algorithm=AWS4-HMAC-SHA256"
        f"&X-Amz-Credential=AKIA{rs(B32, 16)}%2F20240611%2Feu-west-1%2Fs3%2Faws4_request"
        "&X-Amz-Date=20240611T101500Z&X-Amz-Expires=604800&X-Amz-SignedHeaders=host"
        f"&X-Amz-Signature={s}"
    ), s


@P("bearer_jwt_access_token", "en")
def _():
    t = now()
    s = jwt(
        {
            "sub": uid(),
            "scope": "orders:read orders:write",
            "iat": t,
            "exp": t + 3600,
            "iss": "https://auth.example.com/",
        },
        alg="RS256",
        kid=True,
    )
    return (
        '10.2.3.4 - - [11/Jun/2024:10:01:12 +0000] "GET /api/v1/me HTTP/1.1" 200 512 "-" '
        f'"python-requests/2.31.0" authorization="Bearer {s}"'
    ), s


@P("kubeconfig_token", "en")
def _():
    t = now()
    s = jwt(
        {
            "aud": ["https://kubernetes.default.svc.cluster.local"],
            "exp": t + 31536000,
            "iat": t,
            "iss": "https://kubernetes.default.svc.cluster.local",
            "kubernetes.io": {
                "namespace": "ci",
                "serviceaccount": {"name": "deployer", "uid": uid()},
            },
            "sub": "system:serviceaccount:ci:deployer",
        },
        alg="RS256",
        kid=True,
    )
    return (
        "users:\n- name: ci-deployer\n  user:\n"
        f"    token: {s}\ncontexts:\n- context:\n    cluster: prod\n    user: ci-deployer\n  name: prod"
    ), s


@P("k8s_secret_data_base64", "en")
def _():
    s = base64.b64encode(pw(20).encode()).decode()
    return (
        "apiVersion: v1\nkind: Secret\nmetadata:\n  name: payments-db\n  namespace: payments\n"
        f"type: Opaque\ndata:\n  username: cGF5bWVudHM=\n  password: {s}"
    ), s


@P("rsa_private_key_line", "en")
def _():
    lines = key_lines(PKCS1_RSA2048, 1192)
    s = body_line(lines)
    return (
        "I generated this with openssl genrsa, can you tell if it's 2048 bits?\n"
        "-----BEGIN RSA PRIVATE KEY-----\n" + "\n".join(lines) + "\n-----END RSA PRIVATE KEY-----"
    ), s


@P("openssh_private_key_line", "en")
def _():
    lines = key_lines(OPENSSH_ED25519, 300, width=70)
    s = body_line(lines, skip=2)
    return (
        "deploy key for the staging box, add it to the runner please:\n"
        "-----BEGIN OPENSSH PRIVATE KEY-----\n"
        + "\n".join(lines)
        + "\n-----END OPENSSH PRIVATE KEY-----"
    ), s


@P("wireguard_private_key", "en")
def _():
    s = b64(32)
    return (
        f"[Interface]\nPrivateKey = {s}\nAddress = 10.8.0.2/32\nDNS = 1.1.1.1\n\n"
        f"[Peer]\nPublicKey = {b64(32)}\nEndpoint = vpn.example.net:51820\nAllowedIPs = 0.0.0.0/0\n\n"
        "handshake never completes, what's wrong with my wg0.conf?"
    ), s


@P("openvpn_static_key_line", "en")
def _():
    lines = wrap(hx(512), 32)
    s = pick(lines)
    return (
        "client.ovpn (tail):\n<tls-auth>\n#\n# 2048 bit OpenVPN static key\n#\n"
        "-----BEGIN OpenVPN Static key V1-----\n"
        + "\n".join(lines)
        + "\n-----END OpenVPN Static key V1-----\n</tls-auth>\nkey-direction 1"
    ), s


@P("age_secret_key", "en")
def _():
    s = "AGE-SECRET-KEY-1" + rs(BECH32.upper(), 58)
    return (
        "where should I keep this? it's what age-keygen printed:\n"
        f"# created: 2024-06-01T12:00:00+02:00\n# public key: age1{rs(BECH32, 58)}\n{s}"
    ), s


@P("ipsec_psk", "en")
def _():
    s = pw(32, "-_.+")
    return (
        "# /etc/ipsec.secrets - strongSwan IPsec secrets file\n"
        f'203.0.113.10 198.51.100.7 : PSK "{s}"'
    ), s


@P("django_secret_key", "en")
def _():
    s = rs(LO + DIG + "!@#$%^&*(-_=+)", 50)
    return (
        "# settings/production.py\nDEBUG = False\n"
        f"SECRET_KEY = '{s}'\nALLOWED_HOSTS = ['shop.example.com']"
    ), s


@P("ethereum_private_key", "en")
def _():
    s = "0x" + hx(64)
    return (
        "hardhat deploy fails with 'invalid sender', my .env:\n"
        f"SEPOLIA_RPC_URL=https://sepolia.infura.io/v3/{hx(32)}\nPRIVATE_KEY={s}"
    ), s


@P("bip39_seed_phrase_12", "en")
def _():
    s = seed_phrase(12)
    return f"Can you store my wallet recovery phrase so I don't lose it: {s}", s


@P("totp_otpauth_secret", "en")
def _():
    s = rs(B32, 32)
    return (
        "The QR code won't scan on my new phone, this is the link behind it: "
        f"otpauth://totp/Acme%20VPN:jdoe?secret={s}&issuer=Acme%20VPN&digits=6&period=30"
    ), s


@P("github_recovery_code", "en")
def _():
    s = f"{hx(5)}-{hx(5)}"
    return f"I used most of my GitHub recovery codes, the only one left is {s}.", s


@P("filevault_recovery_key", "en")
def _():
    s = grouped(UP + DIG, 6, 4)
    return (
        f"Mac won't accept my login after the update; FileVault recovery key is {s} "
        "- how do I enter it at boot?"
    ), s


@P("onepassword_secret_key", "en")
def _():
    a = "23456789ABCDEFGHJKLMNPQRSTVWXYZ"
    s = f"A3-{rs(a, 6)}-{rs(a, 6)}-{rs(a, 5)}-{rs(a, 5)}-{rs(a, 5)}-{rs(a, 5)}"
    return (
        "For the emergency kit: sign-in address my.1password.eu, email anna.berg@example.com, "
        f"Secret Key {s}, master password is in the envelope."
    ), s


@P("google_app_password", "en")
def _():
    s = grouped(LO, 4, 4, " ")
    return f"Gmail gave me this app password for Thunderbird: {s}", s


@P("gate_code", "en")
def _():
    s = pin(4)
    return f"{s}# is the gate code for the community pool, remind me on Saturday.", s


@P("wifi_password", "en")
def _():
    s = human("en")
    return f"Guest Wi-Fi is 'BlueHeron-Guest' and the password is {s}.", s


@P("phone_unlock_code", "en")
def _():
    s = pin(6)
    return f"If I'm in hospital, my phone passcode is {s} so you can call my sister.", s


@P("temporary_account_password", "en")
def _():
    s = pw(14)
    return (
        "From: it-helpdesk@northwind.example\nTo: sam.patel@northwind.example\n"
        "Subject: Your VPN account\n\nHi Sam,\n\nyour VPN account is ready.\n"
        f"Username: s.patel\nTemporary password: {s}\n\n"
        "Please change it after the first login.\n\nIT Helpdesk"
    ), s


@P("sshpass_password", "en")
def _():
    s = pw(14)
    return f"sshpass -p '{s}' ssh -o StrictHostKeyChecking=no pi@192.168.1.50 'sudo reboot'", s


@P("powershell_plaintext_password", "en")
def _():
    s = pw(18, "!#%*+-?@^_.")
    return (
        f'$secure = ConvertTo-SecureString "{s}" -AsPlainText -Force\n'
        '$cred = New-Object System.Management.Automation.PSCredential ("CORP\\svc_backup", $secure)\n'
        "Invoke-Command -ComputerName fs01 -Credential $cred -ScriptBlock { Get-Volume }"
    ), s


@P("windows_net_use_password", "en")
def _():
    s = pw(14, "!#%*+-?@_.")
    return f"net use Z: \\\\fs01\\finance {s} /user:CORP\\akumar /persistent:yes", s


@P("tailscale_auth_key", "en")
def _():
    s = f"tskey-auth-{rs(ALNUM, 12)}CNTRL-{rs(ALNUM, 33)}"
    return (
        f"curl -fsSL https://tailscale.com/install.sh | sh && sudo tailscale up --auth-key={s} --ssh",
        s,
    )


@P("okta_api_token", "en")
def _():
    s = "00" + rs(B64URL, 40)
    return (
        "GET /api/v1/users?limit=25 HTTP/1.1\nHost: acme.okta.com\nAccept: application/json\n"
        f"Authorization: SSWS {s}"
    ), s


@P("databricks_pat", "en")
def _():
    s = "dapi" + hx(32)
    return (
        f"~/.databrickscfg\n[DEFAULT]\nhost = https://adb-{num(16)}.{num(2)}.azuredatabricks.net\ntoken = {s}",
        s,
    )


@P("new_relic_license_key", "en")
def _():
    s = hx(36) + "NRAL"
    return (
        f"newrelic.ini\n[newrelic]\nlicense_key = {s}\napp_name = Billing API\nmonitor_mode = true"
    ), s


@P("algolia_admin_api_key", "en")
def _():
    s = hx(32)
    return (
        "const algoliasearch = require('algoliasearch');\n"
        f"const client = algoliasearch('{rs(UP + DIG, 10)}', '{s}'); // admin key, for reindexing\n"
        "const index = client.initIndex('products');"
    ), s


@P("snyk_token", "en")
def _():
    s = uid()
    return f"snyk auth {s} && snyk test --all-projects --severity-threshold=high", s


@P("auth0_client_secret", "en")
def _():
    s = rs(B64URL, 64)
    return (
        "AUTH0_DOMAIN=acme.eu.auth0.com\n"
        f"AUTH0_CLIENT_ID={rs(ALNUM, 32)}\nAUTH0_CLIENT_SECRET={s}\n"
        "AUTH0_AUDIENCE=https://api.acme.example"
    ), s


@P("bitbucket_app_password", "en")
def _():
    s = "ATBB" + rs(ALNUM, 32)
    return f"git remote set-url origin https://jdoe:{s}@bitbucket.org/acme/website.git", s


@P("smb_url_credentials", "en")
def _():
    s = pw_url(16)
    return f"In Finder I connect with smb://scanner:{s}@192.168.1.20/scans but it keeps failing.", s


# ==========================================================================
# Chinese
# ==========================================================================
@P("alibaba_cloud_access_key_secret", "zh")
def _():
    s = rs(ALNUM, 30)
    return (
        "帮我看下这段代码为什么报 InvalidAccessKeyId：\n"
        f"auth = oss2.Auth('LTAI5t{rs(ALNUM, 18)}', '{s}')\n"
        "bucket = oss2.Bucket(auth, 'https://oss-cn-hangzhou.aliyuncs.com', 'my-photos')"
    ), s


@P("tencent_cloud_secret_key", "zh")
def _():
    s = rs(ALNUM, 32)
    return (
        "腾讯云的密钥我放在配置里了：\n"
        f"SecretId: AKID{rs(ALNUM, 32)}\nSecretKey: {s}\n"
        "为什么调用 COS 还是返回 403？"
    ), s


@P("huawei_cloud_secret_access_key", "zh")
def _():
    s = rs(ALNUM, 40)
    return (
        f"华为云 OBS 的 AK 是 {rs(UP + DIG, 20)}，SK 是 {s}，帮我写一个上传文件的 Python 脚本。",
        s,
    )


@P("wechat_app_secret", "zh")
def _():
    s = hx(32)
    return (
        f"公众号后台的 AppID 是 wx{hx(16)}，AppSecret 是 {s}，获取 access_token 一直报 40125 错误。",
        s,
    )


@P("dingtalk_robot_access_token", "zh")
def _():
    s = hx(64)
    return (
        f"钉钉机器人 webhook：https://oapi.dingtalk.com/robot/send?access_token={s} ，"
        "发消息总是提示 keywords not in content"
    ), s


@P("feishu_bot_webhook_token", "zh")
def _():
    s = uid()
    return (
        "飞书群机器人推送失败，代码如下：\n"
        f'requests.post("https://open.feishu.cn/open-apis/bot/v2/hook/{s}",\n'
        '              json={"msg_type": "text", "content": {"text": "构建完成"}})'
    ), s


@P("deepseek_api_key", "zh")
def _():
    s = "sk-" + hx(32)
    return (
        f'client = OpenAI(api_key="{s}", base_url="https://api.deepseek.com")\n'
        "这样调用 deepseek-chat 对吗？"
    ), s


@P("bank_card_pin", "zh")
def _():
    s = pin(6)
    return f"帮我记住：招商银行卡的取款密码是{s}。", s


@P("wifi_password", "zh")
def _():
    s = human("zh")
    return f"家里的WiFi名称：ChinaNet-5G-8A2F，密码：{s}", s


@P("door_lock_code", "zh")
def _():
    s = pin(6)
    return f"{s}就是我家门锁的密码，阿姨周三来打扫的时候告诉她。", s


@P("payment_password", "zh")
def _():
    s = pin(6)
    return f"支付宝的支付密码我设成了{s}，以后忘了问你。", s


@P("mysql_go_dsn_password", "zh")
def _():
    s = pw(16, "!#*-_.")
    return (
        "Go 连接 MySQL 报错 Access denied：\n"
        f'dsn := "root:{s}@tcp(10.10.2.15:3306)/order_db?charset=utf8mb4&parseTime=True"\n'
        'db, err := sql.Open("mysql", dsn)'
    ), s


@P("redis_requirepass", "zh")
def _():
    s = pw(24, "-_.")
    return (
        "redis.conf 里我这样配的：\nbind 0.0.0.0\nport 6379\n"
        f"requirepass {s}\n可是客户端连接提示 NOAUTH，怎么回事？"
    ), s


# ==========================================================================
# German
# ==========================================================================
@P("hetzner_cloud_api_token", "de")
def _():
    s = rs(ALNUM, 64)
    return (
        "Terraform-Provider für Hetzner:\n"
        f'provider "hcloud" {{\n  token = "{s}"\n}}\n'
        "Beim terraform apply kommt trotzdem 'unauthorized'. Woran liegt das?"
    ), s


@P("bitlocker_recovery_key", "de")
def _():
    s = bitlocker()
    return (
        f"Mein Laptop fragt nach dem BitLocker-Wiederherstellungsschlüssel. Laut Ausdruck ist es {s}. "
        "Wo gebe ich den ein?"
    ), s


@P("wifi_password", "de")
def _():
    s = num(20)
    return f"Unser WLAN heißt FRITZ!Box 7590 XQ, das WLAN-Passwort lautet {s}", s


@P("front_door_code", "de")
def _():
    s = pin(4)
    return (
        f"Für den Paketboten: Der Code für die Haustür ist {s}, der Paketraum ist im Keller links.",
        s,
    )


@P("bank_card_pin", "de")
def _():
    s = pin(4)
    return f"Merk dir bitte die PIN meiner Girocard: {s}. Ich vergesse sie ständig.", s


@P("online_banking_password", "de")
def _():
    s = human("de")
    return (
        f"„{s}“ ist mein Passwort fürs Online-Banking bei der Sparkasse, schreib das nirgendwo anders hin.",
        s,
    )


@P("wpa_supplicant_psk", "de")
def _():
    s = pw(20, "-_.!?")
    return (
        "Raspberry Pi verbindet sich nicht, hier meine /etc/wpa_supplicant/wpa_supplicant.conf:\n"
        "ctrl_interface=DIR=/var/run/wpa_supplicant GROUP=netdev\nupdate_config=1\ncountry=DE\n\n"
        f'network={{\n    ssid="Zuhause-2G"\n    psk="{s}"\n    key_mgmt=WPA-PSK\n}}'
    ), s


@P("docker_compose_postgres_password", "de")
def _():
    s = pw(20, "-_.!?")
    return (
        "Warum startet der Container nicht? docker-compose.yml:\n"
        "services:\n  db:\n    image: postgres:16\n    environment:\n"
        f'      POSTGRES_USER: nextcloud\n      POSTGRES_PASSWORD: "{s}"\n'
        "    volumes:\n      - pgdata:/var/lib/postgresql/data"
    ), s


@P("spring_datasource_password", "de")
def _():
    s = pw(18)
    return (
        "Spring Boot findet die Datenbank nicht. application.properties:\n"
        "spring.datasource.url=jdbc:postgresql://db.intern:5432/kunden\n"
        f"spring.datasource.username=kunden_app\nspring.datasource.password={s}\n"
        "spring.jpa.hibernate.ddl-auto=validate"
    ), s


@P("keycloak_access_token_jwt", "de")
def _():
    t = now()
    s = jwt(
        {
            "exp": t + 300,
            "iat": t,
            "jti": uid(),
            "iss": "https://sso.example.de/realms/intern",
            "aud": "account",
            "sub": uid(),
            "typ": "Bearer",
            "azp": "auftrags-frontend",
            "preferred_username": "k.schmidt",
        },
        alg="RS256",
        kid=True,
    )
    return (
        "Ich bekomme 401 vom Backend, obwohl das Token frisch ist:\n"
        f'curl -H "Authorization: Bearer {s}" https://api.intern.example.de/v1/auftraege'
    ), s


@P("totp_seed_base32", "de")
def _():
    s = grouped(LO + "234567", 8, 4, " ")
    return (
        "Falls mein Handy kaputtgeht: der Einrichtungsschlüssel für die Authenticator-App "
        f"bei meinem Mailanbieter ist {s}"
    ), s


@P("cifs_mount_password", "de")
def _():
    s = pw(16, "!%*+-?@^_.")
    return (
        f"sudo mount -t cifs //nas.local/backup /mnt/backup -o username=admin,password={s},vers=3.0\n"
        "funktioniert, aber wie mache ich das dauerhaft in der fstab?"
    ), s


@P("nextcloud_app_password", "de")
def _():
    s = grouped(ALNUM, 5, 5)
    return (
        f"Für die Nextcloud-Synchronisation auf dem Zweitrechner: Benutzer maria, App-Passwort {s}",
        s,
    )


@P("gitlab_pipeline_trigger_token", "de")
def _():
    s = "glptt-" + hx(40)
    return (
        "Pipeline per API auslösen klappt nicht:\n"
        f"curl -X POST --fail -F token={s} -F ref=main "
        "https://gitlab.example.de/api/v4/projects/42/trigger/pipeline"
    ), s


# ==========================================================================
# French
# ==========================================================================
@P("ovh_application_secret", "fr")
def _():
    s = rs(ALNUM, 32)
    return (
        "Mon script Python OVH renvoie « Invalid signature » :\n"
        f"client = ovh.Client(\n    endpoint='ovh-eu',\n    application_key='{rs(ALNUM, 16)}',\n"
        f"    application_secret='{s}',\n    consumer_key='{rs(ALNUM, 32)}',\n)"
    ), s


@P("scaleway_secret_key", "fr")
def _():
    s = uid()
    return (
        "Dans ~/.config/scw/config.yaml j'ai :\n"
        f"access_key: SCW{rs(UP + DIG, 17)}\nsecret_key: {s}\n"
        f"default_organization_id: {uid()}\ndefault_region: fr-par\n"
        "mais scw instance server list me répond « permission denied »."
    ), s


@P("building_door_code", "fr")
def _():
    s = pick("ABCD") + pin(4)
    return f"Pour la livraison de demain : digicode {s}, puis troisième étage, porte de gauche.", s


@P("wifi_password", "fr")
def _():
    s = pw(20, "")
    return f"Pour les invités, le réseau c'est Livebox-4F2A et la clé de sécurité : {s}.", s


@P("bank_card_pin", "fr")
def _():
    s = pin(4)
    return f"Note bien le code de ma carte bleue, je l'oublie toujours : {s}.", s


@P("apple_account_recovery_key", "fr")
def _():
    s = grouped(UP + DIG, 7, 4)
    return (
        "Apple me demande ma clé de secours pour récupérer mon identifiant Apple. "
        f"Je l'avais notée : {s}. Qu'est-ce que je dois faire ensuite ?"
    ), s


@P("mistral_api_key", "fr")
def _():
    s = rs(ALNUM, 32)
    return (
        "from mistralai import Mistral\n"
        f'client = Mistral(api_key="{s}")\n'
        "Pourquoi j'ai une erreur 401 alors que la clé vient d'être créée ?"
    ), s


@P("email_password", "fr")
def _():
    s = human("fr")
    return f"{s}, c'est mon mot de passe Gmail, garde-le au cas où je l'oublie.", s


@P("ftp_url_password", "fr")
def _():
    s = pw_url(14)
    return (
        f"Je n'arrive pas à télécharger avec wget ftp://webmaster:{s}@ftp.monsite.fr/www/index.html, "
        "ça dit « Login incorrect »."
    ), s


@P("symfony_database_url_password", "fr")
def _():
    s = pw_url(20)
    return (
        f'DATABASE_URL="mysql://symfony:{s}@127.0.0.1:3306/boutique?serverVersion=8.0.32&charset=utf8mb4"\n'
        "La migration Doctrine échoue avec SQLSTATE[HY000] [1045]."
    ), s


@P("htpasswd_password", "fr")
def _():
    s = pw(16, "!%*+-?@^_.")
    return (
        f"Pour protéger le dossier admin j'ai fait : htpasswd -bc /etc/apache2/.htpasswd admin '{s}'\n"
        "et dans la conf Apache AuthType Basic. C'est bon ?"
    ), s


@P("padlock_combination", "fr")
def _():
    s = pin(4)
    return f"La combinaison du cadenas du vestiaire c'est {s}, rappelle-la-moi jeudi.", s


@P("mailjet_api_secret", "fr")
def _():
    s = hx(32)
    return (
        f"Mes identifiants Mailjet pour l'envoi SMTP : utilisateur {hx(32)} (clé API), "
        f"mot de passe {s} (clé secrète). Postfix refuse de les prendre."
    ), s


# ==========================================================================
# Spanish
# ==========================================================================
@P("mercadopago_access_token", "es")
def _():
    s = f"APP_USR-{num(16)}-{num(6)}-{hx(32)}-{num(9)}"
    return (
        "Estoy integrando Mercado Pago en Node y me da 401:\n"
        f"const client = new MercadoPagoConfig({{ accessToken: '{s}' }});"
    ), s


@P("streaming_account_password", "es")
def _():
    s = human("es")
    return (
        f"La cuenta de Netflix de casa es familia.gomez@gmail.com y la contraseña {s}. "
        "Si mi hermana te la pide, recuérdasela."
    ), s


@P("phone_unlock_code", "es")
def _():
    s = pin(6)
    return f"El código de desbloqueo de mi móvil es {s}, apúntalo por si me pasa algo.", s


@P("key_lockbox_code", "es")
def _():
    s = pin(4)
    return (
        "Para los huéspedes del apartamento: las llaves están en el cajetín junto a la puerta, "
        f"el código es {s}."
    ), s


@P("google_backup_code", "es")
def _():
    s = f"{rs(DIG, 4)} {rs(DIG, 4)}"
    return f"Me quedan pocos códigos de respaldo de Google; el siguiente que voy a usar es {s}.", s


@P("router_admin_password", "es")
def _():
    s = pw(12, "")
    return (
        f"Entra en 192.168.1.1 con usuario admin y contraseña {s} y cambia el canal del wifi al 6.",
        s,
    )


@P("wifi_password", "es")
def _():
    s = human("es")
    return f"¿Cuál era la clave del wifi? ¡Ah, sí, ya me acordé: {s}!", s


@P("email_password", "es")
def _():
    s = pw(14)
    return f"«{s}» es la contraseña de mi correo del trabajo, no la compartas con nadie.", s


@P("php_mysqli_password", "es")
def _():
    s = pw(16, "!#%*+-?@^_.")
    return (
        f"$conexion = new mysqli('localhost', 'tienda_user', '{s}', 'tienda');\n"
        "if ($conexion->connect_error) { die('Error de conexión'); }\n"
        "¿Por qué me sale Access denied for user?"
    ), s


@P("bank_card_pin", "es")
def _():
    s = pin(4)
    return f"El PIN de la tarjeta de débito del BBVA es {s}; guárdalo, porfa.", s


@P("aws_cli_configure_secret_key", "es")
def _():
    s = rs(ALNUM + "+/", 40)
    return (
        "Configuré la CLI así:\n"
        f"aws configure set aws_access_key_id AKIA{rs(B32, 16)}\n"
        f"aws configure set aws_secret_access_key {s}\n"
        "pero sigo viendo SignatureDoesNotMatch."
    ), s


@P("gcs_signed_url_signature", "es")
def _():
    s = hx(512)
    return (
        "Te paso el enlace firmado del informe (vale 7 días): "
        "https://storage.googleapis.com/informes-2024/ventas-q2.pdf?X-Goog-Algorithm=GOOG4-RSA-SHA256"
        "&X-Goog-Credential=exporter%40ventas-prod.iam.gserviceaccount.com%2F20240611%2Fauto%2Fstorage%2Fgoog4_request"
        "&X-Goog-Date=20240611T094512Z&X-Goog-Expires=604800&X-Goog-SignedHeaders=host"
        f"&X-Goog-Signature={s}"
    ), s


@P("amqp_url_password", "es")
def _():
    s = pw_url(20)
    return (
        f"En Celery tengo broker_url = 'amqp://celery:{s}@rabbitmq.interno:5672/produccion' "
        "y no conecta, ¿qué reviso?"
    ), s


# ==========================================================================
# Japanese
# ==========================================================================
@P("line_channel_access_token", "ja")
def _():
    s = rs(B64, 171) + "="
    return (
        "LINE Messaging APIでpushしても401になります。\n"
        "curl -X POST https://api.line.me/v2/bot/message/push \\\n"
        f"  -H 'Authorization: Bearer {s}' \\\n"
        "  -H 'Content-Type: application/json' \\\n"
        f'  -d \'{{"to":"U{hx(32)}","messages":[{{"type":"text","text":"テスト"}}]}}\''
    ), s


@P("line_channel_secret", "ja")
def _():
    s = hx(32)
    return (
        f"チャネルシークレットは {s} です。署名検証がうまくいかないので、コードを見てもらえますか？",
        s,
    )


@P("bank_card_pin", "ja")
def _():
    s = pin(4)
    return f"キャッシュカードの暗証番号は{s}です。忘れたら教えてください。", s


@P("building_entrance_code", "ja")
def _():
    s = pin(4)
    return f"マンションのオートロックの暗証番号：{s}。母が来たときに教えてあげて。", s


@P("wifi_password", "ja")
def _():
    s = human("ja")
    return f"実家のWi-Fiのパスワードは「{s}」だよ。", s


@P("hotel_safe_code", "ja")
def _():
    s = pin(4)
    return f"ホテルの部屋の金庫の暗証番号を{s}に設定した。チェックアウト前に思い出させて。", s


@P("bitcoin_wif_private_key", "ja")
def _():
    s = pick("KL") + rs(B58, 51)
    return (
        f"古いウォレットの秘密鍵（WIF形式）が出てきました：{s}。これをElectrumにインポートする方法を教えて。",
        s,
    )


@P("chatwork_api_token", "ja")
def _():
    s = hx(32)
    return (
        "Chatworkに通知を送りたいのですが、403になります。\n"
        f'curl -X POST -H "X-ChatWorkToken: {s}" -d "body=デプロイ完了" '
        "https://api.chatwork.com/v2/rooms/123456789/messages"
    ), s


@P("backlog_api_key", "ja")
def _():
    s = rs(ALNUM, 64)
    return (
        f'curl "https://acme.backlog.jp/api/v2/issues?apiKey={s}&projectId[]=12345" が401を返します。',
        s,
    )


@P("phone_unlock_code", "ja")
def _():
    s = pin(6)
    return f"{s}がiPhoneのパスコードね。修理に出すとき必要になるかも。", s


@P("docker_run_mysql_root_password", "ja")
def _():
    s = pw(16, "!#%*+-?@^_.")
    return (
        f"docker run -d --name db -e MYSQL_ROOT_PASSWORD='{s}' -p 3306:3306 mysql:8.0\n"
        "で起動したのですが、接続できません。"
    ), s


@P("ssh_key_passphrase", "ja")
def _():
    s = pw(20, "!#%*+-?@^_.")
    return (
        f"ssh-keygen -t ed25519 -N '{s}' -f ~/.ssh/deploy_key\n"
        "このパスフレーズを後でCIに登録したいので覚えておいて。"
    ), s


@P("github_pat_classic", "ja")
def _():
    s = "ghp_" + rs(ALNUM, 36)
    return (
        f"GitHub Actionsで別リポジトリをcheckoutするためにPATを作りました：{s}　これをSecretsに登録すればいいですか？",
        s,
    )


# ==========================================================================
# Italian
# ==========================================================================
@P("spid_password", "it")
def _():
    s = human("it")
    return f"{s} è la password dello SPID (Poste ID), me la ricordi tu quando devo fare il 730?", s


@P("sim_puk", "it")
def _():
    s = rs(DIG, 8)
    return f"La SIM si è bloccata; sul cartoncino il PUK è {s}. Come lo inserisco?", s


@P("safe_combination", "it")
def _():
    s = pin(6)
    return f"La combinazione della cassaforte in camera da letto è {s}.", s


@P("locker_combination", "it")
def _():
    s = pin(4)
    return f"Segnati la combinazione dell'armadietto in palestra: {s}", s


@P("wifi_password", "it")
def _():
    s = pw(16, "")
    return f"La password del Wi-Fi di casa (rete TIM-48213957): {s}", s


@P("bank_card_pin", "it")
def _():
    s = pin(5)
    return f"Il PIN del bancomat nuovo è {s}, l'ho appena cambiato.", s


@P("laravel_mail_password", "it")
def _():
    s = pw(16, "!%*+-?@^_.")
    return (
        "Il mio .env di Laravel:\nMAIL_MAILER=smtp\nMAIL_HOST=smtps.aruba.it\nMAIL_PORT=465\n"
        f"MAIL_USERNAME=info@pizzeriadamario.it\nMAIL_PASSWORD={s}\nMAIL_ENCRYPTION=ssl\n"
        "Perché le email non partono?"
    ), s


@P("teams_incoming_webhook_token", "it")
def _():
    s = hx(32)
    return (
        f"Il webhook di Teams per il canale Allarmi è https://contoso.webhook.office.com/webhookb2/"
        f"{uid()}@{uid()}/IncomingWebhook/{s}/{uid()}, ma risponde 400."
    ), s


@P("mqtt_password", "it")
def _():
    s = pw(18, "!%*+-?@^_.")
    return (
        f"mosquitto_pub -h broker.casa.local -t casa/luci -m on -u homeassistant -P '{s}'\n"
        "mi dà 'Connection Refused: not authorised'."
    ), s


@P("java_keystore_password", "it")
def _():
    s = pw(16, "!%*+-?@^_.")
    return (
        "keytool -importkeystore -srckeystore server.p12 -srcstoretype PKCS12 "
        f"-srcstorepass '{s}' -destkeystore server.jks\n"
        "Mi chiede comunque la password di destinazione, come la passo da riga di comando?"
    ), s


@P("google_app_password", "it")
def _():
    s = rs(LO, 16)
    return (
        "server = smtplib.SMTP_SSL('smtp.gmail.com', 465)\n"
        f"server.login('marco.bianchi@gmail.com', '{s}')\n"
        "È la password per le app che mi ha dato Google, ma dà errore 535."
    ), s


@P("alarm_disarm_code", "it")
def _():
    s = pin(4)
    return (
        f"Il codice per disinserire l'allarme è {s}: digitalo entro trenta secondi dall'ingresso.",
        s,
    )


# ==========================================================================
# Portuguese
# ==========================================================================
@P("asaas_api_key", "pt")
def _():
    raw = f"{hx(32)}::{'0' * 8}{num(10)}::$aach_{uid()}"
    s = "$aact_" + base64.b64encode(raw.encode()).decode()
    return (
        "Integração com o Asaas retornando 401:\n"
        f"curl https://api.asaas.com/v3/customers -H 'access_token: {s}'"
    ), s


@P("bip39_seed_phrase_18", "pt")
def _():
    s = seed_phrase(18)
    return f"Anota a minha frase de recuperação da carteira (18 palavras): {s}", s


@P("govbr_password", "pt")
def _():
    s = human("pt")
    return f"{s} é a minha senha do gov.br, vou precisar pra declarar o imposto de renda.", s


@P("online_banking_password", "pt")
def _():
    s = pin(6)
    return f"A senha eletrônica do internet banking do Itaú é {s}, guarda aí.", s


@P("wifi_password", "pt")
def _():
    s = human("pt")
    return f"Senha do wi-fi da casa de praia: {s}. A rede é CasaPraia_5G.", s


@P("bank_card_pin", "pt")
def _():
    s = pin(4)
    return f"A senha do cartão de crédito do Nubank é {s}, não esquece.", s


@P("gate_code", "pt")
def _():
    s = pin(6)
    return f"Código do portão eletrônico do condomínio: {s}", s


@P("apple_app_specific_password", "pt")
def _():
    s = grouped(LO, 4, 4)
    return f"Gerei uma senha de app na conta Apple pra usar o Thunderbird: {s}. Onde coloco?", s


@P("supabase_personal_access_token", "pt")
def _():
    s = "sbp_" + hx(40)
    return f"supabase login --token {s}\nnão funciona no CI, alguma ideia?", s


@P("oracle_jdbc_thin_password", "pt")
def _():
    s = pw(16, "#*-_.!")
    return (
        f'String url = "jdbc:oracle:thin:vendas/{s}@//oracle-prd.empresa.com.br:1521/VENDASPDB";\n'
        "Connection conn = DriverManager.getConnection(url);\nDá ORA-01017. O que está errado?"
    ), s


@P("elasticsearch_url_password", "pt")
def _():
    s = pw_url(18)
    return (
        "O Logstash não conecta:\noutput {\n  elasticsearch {\n"
        f'    hosts => ["https://elastic:{s}@es01.interno:9200"]\n  }}\n}}'
    ), s


@P("whatsapp_two_step_pin", "pt")
def _():
    s = pin(6)
    return (
        f"O PIN da confirmação em duas etapas do WhatsApp é {s}; me lembra se eu trocar de celular.",
        s,
    )


@P("vtex_app_token", "pt")
def _():
    s = rs(UP, 100)
    return (
        f"Na API da VTEX uso os headers X-VTEX-API-AppKey: vtexappkey-minhaloja-{rs(UP, 6)} "
        f"e X-VTEX-API-AppToken: {s}. Está dando 403."
    ), s


# ==========================================================================
# Korean
# ==========================================================================
@P("kakao_rest_api_key", "ko")
def _():
    s = hx(32)
    return f"카카오 로그인 구현 중인데 REST API 키가 {s} 이거 맞나요? KOE101 에러가 나요.", s


@P("naver_client_secret", "ko")
def _():
    s = rs(ALNUM, 10)
    return (
        f"네이버 검색 API 호출할 때 헤더에 X-Naver-Client-Id: {rs(ALNUM, 20)}, "
        f"X-Naver-Client-Secret: {s} 넣었는데 401이 떠요."
    ), s


@P("toss_payments_secret_key", "ko")
def _():
    s = "live_sk_" + rs(ALNUM, 28)
    return (
        f"토스페이먼츠 시크릿 키 {s}를 Base64로 인코딩해서 Authorization 헤더에 넣으면 되나요?",
        s,
    )


@P("door_lock_code", "ko")
def _():
    s = pin(6)
    return f"우리 집 도어락 비밀번호는 {s}이야. 택배 기사님한테는 알려주지 마.", s


@P("building_entrance_code", "ko")
def _():
    s = pin(4)
    return f"공동현관 비밀번호: {s}, 엘리베이터 타고 12층으로 오시면 돼요.", s


@P("bank_card_pin", "ko")
def _():
    s = pin(4)
    return f"체크카드 비밀번호 {s} 잊지 않게 기억해줘.", s


@P("certificate_password", "ko")
def _():
    s = pw(12, "!@#*")
    return f"공동인증서 비밀번호가 '{s}'인데 자꾸 틀렸다고 나와요.", s


@P("wifi_password", "ko")
def _():
    s = human("ko")
    return f"와이파이 이름은 iptime_5G, 비밀번호는 {s}입니다.", s


@P("ethereum_private_key", "ko")
def _():
    s = "0x" + hx(64)
    return f"메타마스크에서 내보낸 개인 키 {s}를 다른 지갑에 가져오려면 어떻게 하나요?", s


@P("ncloud_secret_key", "ko")
def _():
    s = rs(ALNUM, 40)
    return (
        f"네이버 클라우드 Object Storage에 access key는 {rs(ALNUM, 20)}, secret key는 {s}로 "
        "설정했는데 SignatureDoesNotMatch가 나와요."
    ), s


@P("kubectl_docker_registry_password", "ko")
def _():
    s = pw(20, "-_.@%+")
    return (
        "kubectl create secret docker-registry regcred --docker-server=harbor.example.co.kr "
        f"--docker-username=robot-ci --docker-password={s} -n prod\n명령어가 맞는지 봐주세요."
    ), s


@P("slack_user_token", "ko")
def _():
    s = f"xoxp-{num(12)}-{num(12)}-{num(13)}-{hx(32)}"
    return f"슬랙 사용자 토큰 {s}로 채널 히스토리를 가져오려는데 missing_scope 에러가 나요.", s


# ==========================================================================
# Dutch
# ==========================================================================
@P("mollie_api_key", "nl")
def _():
    s = "live_" + rs(ALNUM, 30)
    return (
        "Mollie-betaling aanmaken in PHP:\n"
        "$mollie = new \\Mollie\\Api\\MollieApiClient();\n"
        f'$mollie->setApiKey("{s}");\n'
        "Ik krijg 'Unauthorized request', wat gaat er mis?"
    ), s


@P("digid_password", "nl")
def _():
    s = human("nl")
    return f"{s} is mijn DigiD-wachtwoord, wil je dat onthouden voor de belastingaangifte?", s


@P("alarm_code", "nl")
def _():
    s = pin(4)
    return f"De alarmcode van de winkel is {s}; zet het alarm aan als je als laatste weggaat.", s


@P("garage_door_code", "nl")
def _():
    s = pin(6)
    return f"Code van de garagedeur: {s}.", s


@P("bike_lock_combination", "nl")
def _():
    s = pin(4)
    return f"De cijfercode van mijn fietsslot is {s}, ik vergeet hem steeds.", s


@P("wifi_password", "nl")
def _():
    s = pw(12, "")
    return f"Wifi-wachtwoord van het Ziggo-modem: {s} (netwerk Ziggo4F2A1)", s


@P("bank_card_pin", "nl")
def _():
    s = pin(4)
    return f"Mijn nieuwe pincode van de ING-pas is {s}.", s


@P("microsoft_account_recovery_code", "nl")
def _():
    s = grouped(UP + DIG, 5, 5)
    return f"Herstelcode van mijn Microsoft-account, voor als ik mijn telefoon kwijtraak: {s}.", s


@P("bunq_api_key", "nl")
def _():
    s = hx(64)
    return (
        f"Voor de bunq API gebruik ik deze sleutel: {s}. Moet ik eerst een installation aanmaken?",
        s,
    )


@P("adonet_sqlserver_password", "nl")
def _():
    s = pw(18, "!#%*+-?@^_.")
    return (
        'In appsettings.json:\n"ConnectionStrings": {\n'
        '  "Default": "Server=tcp:sql-prod.database.windows.net,1433;Database=Facturatie;'
        f'User ID=app_facturatie;Password={s};Encrypt=True;"\n}}\n'
        "EF Core geeft Login failed for user."
    ), s


@P("home_assistant_long_lived_token", "nl")
def _():
    t = now()
    s = jwt({"iss": hx(32), "iat": t, "exp": t + 315360000})
    return (
        "Mijn systemd-unit voor het script:\n[Unit]\nDescription=Energiemeter naar Home Assistant\n\n"
        '[Service]\nEnvironment="HA_URL=http://homeassistant.local:8123"\n'
        f'Environment="HA_TOKEN={s}"\nExecStart=/usr/bin/python3 /opt/meter/push.py\nRestart=always\n\n'
        "[Install]\nWantedBy=multi-user.target\n\nHet script krijgt een 401. Klopt de token?"
    ), s


@P("influxdb_token", "nl")
def _():
    s = base64.urlsafe_b64encode(secrets.token_bytes(64)).decode()
    return (
        "telegraf.conf:\n[[outputs.influxdb_v2]]\n"
        f'  urls = ["http://influx.lan:8086"]\n  token = "{s}"\n'
        '  organization = "thuis"\n  bucket = "sensoren"\n'
        "Telegraf meldt 'unauthorized access'."
    ), s


# ==========================================================================
# Russian
# ==========================================================================
@P("yandex_cloud_api_key", "ru")
def _():
    s = "AQVN" + rs(B64URL, 36)
    return (
        "Вызываю YandexGPT так:\n"
        f'curl -H "Authorization: Api-Key {s}" '
        "https://llm.api.cloud.yandex.net/foundationModels/v1/completion -d @body.json\n"
        "и получаю 401. Что не так?"
    ), s


@P("yandex_iam_token", "ru")
def _():
    s = "t1.9euelZ" + rs(B64URL, 80) + "." + rs(B64URL, 86)
    return f"Получил IAM-токен: {s}\nСколько он действует и как его обновлять?", s


@P("yandex_oauth_token", "ru")
def _():
    s = "y0_AgAAAAA" + rs(B64URL, 48)
    return (
        f"OAuth-токен Яндекс.Диска: {s} — подставил в заголовок Authorization: OAuth, "
        "но API отвечает UnauthorizedError."
    ), s


@P("vk_access_token", "ru")
def _():
    s = "vk1.a." + rs(B64URL, 210)
    return f"Токен сообщества ВК {s} перестал работать после смены пароля, надо перевыпускать?", s


@P("intercom_code", "ru")
def _():
    s = pin(4)
    return f"Код домофона у мамы — {s}, потом третий подъезд, квартира 57.", s


@P("gosuslugi_password", "ru")
def _():
    s = human("ru")
    return f"{s} — это пароль от Госуслуг, сохрани его, пожалуйста.", s


@P("bank_card_pin", "ru")
def _():
    s = pin(4)
    return f"ПИН-код от карты Сбера: {s}. Никому не говори.", s


@P("wifi_password", "ru")
def _():
    s = pw(14, "")
    return f"Пароль от вайфая на даче: {s}, сеть называется Keenetic-2041.", s


@P("bip39_seed_phrase_24", "ru")
def _():
    s = seed_phrase(24)
    return f"Вот сид-фраза от кошелька Trust Wallet, 24 слова: {s}. Сохрани, пожалуйста.", s


@P("telegram_bot_token", "ru")
def _():
    s = telegram_token()
    return (
        "Бот не отвечает, вот код:\n"
        f'bot = telebot.TeleBot("{s}")\n\n'
        "@bot.message_handler(commands=['start'])\ndef start(m):\n"
        "    bot.reply_to(m, 'Привет!')\n\nbot.infinity_polling()"
    ), s


@P("libpq_keyvalue_password", "ru")
def _():
    s = pw(16, "!#%*+-?@^_.")
    return (
        "Traceback (most recent call last):\n"
        '  File "/opt/crm/sync.py", line 14, in <module>\n'
        f'    conn = psycopg2.connect("host=pg-master.local port=5432 dbname=crm user=crm_app password={s} sslmode=require")\n'
        '  File "/usr/lib/python3/dist-packages/psycopg2/__init__.py", line 122, in connect\n'
        "    conn = _connect(dsn, connection_factory=connection_factory, **kwasync)\n"
        'psycopg2.OperationalError: connection to server at "pg-master.local" (10.0.0.5), port 5432 failed: '
        'FATAL:  password authentication failed for user "crm_app"\n\n'
        "Почему так, пароль же правильный?"
    ), s


@P("clickhouse_client_password", "ru")
def _():
    s = pw(18, "!#%*+-?@^_.")
    return (
        f"clickhouse-client --host ch01.prod --user analyst --password '{s}' "
        "--query 'SELECT count() FROM events' — выдаёт Code: 516. Authentication failed."
    ), s


@P("sms_login_code", "ru")
def _():
    s = pin(6)
    return f"Мне пришёл код из СМС от банка: {s}. Введи его на сайте, чтобы подтвердить вход.", s


# ==========================================================================
# Negatives: hand-written lines; {placeholders} are filled with fresh ids.
# ==========================================================================
NEGATIVES = {
    "en": r"""
I changed my password yesterday and now Outlook keeps asking for it again.
The PIN for the new card has 4 digits and arrives by separate mail.
Enter the code from the SMS within five minutes or request a new one.
Use promo code SUMMER25 at checkout for 25% off your first order.
Your coupon code WELCOME10 expires on 30 June.
Order #4820-1173-99 has shipped, tracking number 1Z999AA10123456784.
Ticket INC0012873 was assigned to the network team this morning.
Invoice INV-2024-00317 is due on 15 July 2024.
Booking reference QX7K2M, flight BA 287 from London Heathrow to San Francisco.
The server returned HTTP 503 Service Unavailable, retry after 120 seconds.
Error code 0x80070005 means access denied when Windows Update runs.
My zip code is 94107 and the office is on 2nd Street.
Flight LH 454 departs at 13:05 from gate B38.
The fix landed in commit {sha1}, please cherry-pick it onto release/2.4.
Short hash {git7} is the one that broke the build.
Request id {uuid} returned 404 from the orders service.
traceparent: 00-{hex32}-{hex16}-01
sha256sum ubuntu-24.04-live-server-amd64.iso should print {sha256}
The MD5 of the firmware image is {md5}, matching the vendor page.
The brand colour is #1E90FF and the accent is #FF6F61.
Upgrade from Python 3.11.7 to 3.12.4 before the end of support.
The config lives in /etc/nginx/sites-available/default on the web server.
See https://docs.python.org/3/library/secrets.html for how token_urlsafe works.
ISBN {isbn} is the second edition of the book.
Please wire the deposit to IBAN {iban_de}, reference "Flat 3B".
Call me at +1 415 555 0132 after 6 pm.
The meeting is on 2024-07-03 at 14:30 CEST.
The printer is at 192.168.1.37 and its MAC address is 3C:52:82:1A:7F:09.
I'm choosing between the iPhone 15 Pro and the Pixel 8a.
Baking soda is NaHCO3 and sulfuric acid is H2SO4.
Run `sudo passwd alice` and type the new password when prompted.
psql -h db.internal -U reporting -W reporting_db
password: ${DB_PASSWORD}
export GITHUB_TOKEN=<your-token>
api_key = os.environ["OPENAI_API_KEY"]
In the playbook, set token: "{{ vault_token }}" and let Ansible fill it in.
The password field is shown as ******** in the admin UI.
My Stripe key starts with sk_live_ but I won't paste the rest here.
Rotate the AWS access keys every 90 days according to the policy.
The Wi-Fi password is printed on the sticker under the router.
You can reset your PIN at any ATM if you still know the old one.
Two-factor authentication is now required for all admin accounts.
Your verification code will expire in 10 minutes.
I lost my recovery codes, how do I regain access to GitHub?
The door code changes every month, ask the concierge for the current one.
Generate a new API key in Settings > Developer > API keys and copy it once.
The token expired, so the CLI asked me to log in again.
Our guest network is CoffeeHouse_Guest and it is open during opening hours.
ssh-keygen -t ed25519 -C "jane@example.com" will ask you for a passphrase.
This is my public key, add it to authorized_keys: {sshpub} jane@laptop
Send the refund to my wallet address {eth_addr}.
curl -H "Authorization: Bearer $TOKEN" https://api.example.com/v1/me
docker login registry.example.com --username ci --password-stdin < /run/secrets/registry_pw
DATABASE_URL=postgres://app@localhost:5432/app_dev
git clone git@github.com:acme/payments-api.git
The JWT header is {"alg":"RS256","typ":"JWT"} and the claims include sub and exp.
Set PermitRootLogin no and PasswordAuthentication no in sshd_config.
Kubernetes stores Secret data base64-encoded, which is not encryption.
Preheat the oven to 180 °C and bake for 25 minutes.
Mix 250 g flour, 2 eggs, 500 ml milk and a pinch of salt.
Apples, bananas, cherries, dates, elderberries, figs and grapes.
Shine on, shine on, little light, stay with me through the night.
The parcel locker code will be emailed to you once the package arrives.
The safe in the hotel room uses a four-digit code that you choose yourself.
Error 401 Unauthorized: the token is missing or invalid.
HTTP 429 Too Many Requests, slow down to 10 requests per second.
Build 2024.06.11-rc2 passed all 1,482 tests.
Verify the download with gpg --verify SHA256SUMS.gpg SHA256SUMS before installing.
Use the container image python:3.12-slim-bookworm for the worker.
The AWS region is eu-west-1 and the bucket is acme-logs-prod.
The role arn:aws:iam::123456789012:role/ReadOnly is assumed by the auditors.
Order number 112-4837261-5529384 from Amazon arrived damaged.
The DHL tracking number is JD014600006281230707.
Our office postcode is SW1A 1AA.
My seat is 14C on flight UA 901.
A 12-word recovery phrase is generated when you create the wallet, write it on paper.
The BitLocker recovery key is stored in your Microsoft account, not on the laptop.
Never share your seed phrase with anyone who claims to be from support.
I forgot the combination of my luggage lock, how can I reset it?
The alarm panel beeps when you enter a wrong code three times.
Set password_min_length = 12 in the policy file.
The users table has columns id, email, password_hash and created_at.
bcrypt with cost factor 12 takes about 250 ms per hash on this server.
Our status page is https://status.example.com and the API base URL is https://api.example.com/v2.
The user record {uuid} was merged into the older account.
Correlation ID: {uuid}, span ID: {hex16}
Image digest: sha256:{sha256}
Release v2.18.0 (commit {git7}) fixes the memory leak in the importer.
The tag v1.4.2 points to {sha1}.
Product code SKU-88213-BLK-XL is out of stock until August.
The part number for the oil filter is 04E 115 561 H.
Room 4.012 in building C, ring the bell twice.
The sensor reported 21.5 °C at 06:00 and 23.1 °C at 12:00.
The coordinates 48.8584 N, 2.2945 E mark the Eiffel Tower.
CVE-2024-3094 affects xz 5.6.0 and 5.6.1.
grep -rn "TODO" src/ finds 37 remaining items.
for i in range(10): print(i ** 2)
SELECT id, email FROM users WHERE last_login < NOW() - INTERVAL '90 days';
The promo code is printed on the back of your receipt.
Enter your password to confirm the deletion of this repository.
The password must contain at least one digit and one symbol.
If you forget your PIN, the app locks after five attempts.
Reply STOP to 45678 to unsubscribe from text messages.
The gate opens automatically between 7 am and 7 pm.
Use read -s -p "Password: " PW so the password is not echoed.
In settings.py, SECRET_KEY = os.environ["DJANGO_SECRET_KEY"]
client = boto3.client("s3")  # credentials come from the instance role
This week's lottery numbers were 4, 11, 23, 35, 42 and 47.
My student number is 20231487 and my class is 3B.
The colour palette is #2E3440, #3B4252, #434C5E and #4C566A.
User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0
{"level":"info","trace_id":"{hex32}","user_id":"{uuid}","msg":"login succeeded"}
The recipe calls for 3 tbsp soy sauce and 1 tsp sesame oil.
Please buy milk, bread, apples, honey, rice and olive oil on the way home.
Can you add river, castle, dragon, forest, island and tower to the list of level names?
We were young and free, dancing in the summer rain, singing all night long.
Replace YOUR_API_KEY in the snippet with the key from your dashboard.
Authorization: Bearer <token>
An app password looks like xxxx-xxxx-xxxx-xxxx, four groups of four letters.
""",
    "zh": r"""
我昨天把密码改了，现在手机上的邮箱一直让我重新登录。
银行卡密码是六位数字，千万不要告诉别人。
请输入短信中的验证码，五分钟内有效。
结账时输入优惠码 SPRING618 可以减二十元。
您的订单号为 20240611153022871，预计明天送达。
顺丰快递单号 SF1423598761243，请注意查收。
服务器返回了 502 Bad Gateway，请稍后再试。
我家的邮政编码是 200030。
航班 CA1831 北京飞上海，14:20 起飞。
这次修复在提交 {git7} 里，麻烦合并到主分支。
请求 ID：{uuid}，请把这个发给运维同事排查。
下载后请校验 SHA256：{sha256}
主题色用 #C0392B，辅助色用 #F1C40F。
请把 Python 升级到 3.12.3 以上版本。
配置文件在 /etc/redis/redis.conf，修改后要重启服务。
忘记 WiFi 密码的话，可以看路由器背面的贴纸。
数据库密码请写在环境变量 ${DB_PASSWORD} 里，不要写死在代码中。
我的手机号是 138 0013 8000，有事打电话。
会议定在 2024 年 7 月 3 日下午三点，地点在 3 号会议室。
打印机的 IP 是 192.168.0.25，MAC 地址 00:1A:2B:3C:4D:5E。
面粉 300 克，鸡蛋 3 个，牛奶 200 毫升，白糖 30 克。
小米 14 和华为 Mate 60 你觉得哪个拍照更好？
执行 mysql -u root -p 之后会提示输入密码。
助记词一定要抄在纸上，不要截图保存。
""",
    "de": r"""
Ich habe gestern mein Passwort geändert, jetzt fragt Outlook ständig danach.
Die PIN der neuen Karte kommt in einem separaten Brief.
Gib den Code aus der SMS ein, er ist zehn Minuten gültig.
Mit dem Gutscheincode HERBST20 bekommst du 20 % Rabatt.
Deine Bestellnummer lautet 302-5518821-7741902.
Die Sendungsnummer von DHL ist 00340434161094042557.
Der Server antwortet mit HTTP 403 Forbidden.
Unsere Postleitzahl ist 10115 Berlin.
Flug LH 2034 von München nach Hamburg startet um 07:15.
Der Fehler wurde mit Commit {sha1} behoben.
Trace-ID {uuid} bitte an den Support weitergeben.
Die SHA-256-Prüfsumme der ISO-Datei lautet {sha256}.
Bitte überweise die Miete auf IBAN {iban_de}.
Ruf mich unter 030 12345678 an.
Das WLAN-Passwort steht auf der Rückseite der FRITZ!Box.
Der Türcode wird jeden Monat von der Hausverwaltung geändert.
In der docker-compose.yml steht POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}, der Wert kommt aus der .env.
Mit sudo passwd setzt du ein neues Passwort, es wird interaktiv abgefragt.
Für den Kuchen brauchst du 200 g Butter, 180 g Zucker und 4 Eier.
Die Firmware-Version 7.57 für die FRITZ!Box 7590 ist seit gestern verfügbar.
Der Termin ist am 12.07.2024 um 09:30 Uhr.
Die Zwei-Faktor-Authentifizierung ist jetzt für alle Konten Pflicht.
Den BitLocker-Wiederherstellungsschlüssel findest du in deinem Microsoft-Konto.
""",
    "fr": r"""
J'ai changé mon mot de passe hier et maintenant l'appli me déconnecte.
Le code PIN de la carte comporte quatre chiffres.
Saisissez le code reçu par SMS pour valider le paiement.
Le code promo BIENVENUE15 donne 15 % de réduction sur la première commande.
Votre numéro de commande est le 4012-7789-3321.
Le numéro de suivi Colissimo est 6A12345678901.
Le site renvoie une erreur 500 depuis ce matin.
J'habite au 12 rue de la Paix, 75002 Paris.
Le vol AF 1234 pour Nice décolle à 18h40.
Le correctif est dans le commit {git7}.
Identifiant de requête : {uuid}
L'empreinte SHA-256 du fichier téléchargé est {sha256}.
Merci de virer l'acompte sur l'IBAN {iban_fr}.
Mon numéro est le 06 12 34 56 78.
Le digicode change tous les trois mois, demande-le au gardien.
Le mot de passe doit contenir au moins douze caractères.
Dans le fichier .env, mets DATABASE_URL=${DATABASE_URL} et laisse Symfony le lire.
Pour la pâte à crêpes : 250 g de farine, 4 œufs, 50 cl de lait.
Le rendez-vous est fixé au 3 juillet à 10 h 30.
La couleur principale du logo est #0055A4.
J'ai perdu mes codes de secours, comment récupérer mon compte ?
La box affiche l'adresse IP 192.168.1.254 dans son interface.
Peugeot 208 ou Renault Clio 5, laquelle consomme le moins ?
""",
    "es": r"""
Ayer cambié la contraseña del correo y ahora no sincroniza el móvil.
El PIN de la tarjeta tiene cuatro dígitos.
Introduce el código que te hemos enviado por SMS.
Con el código de descuento VERANO20 tienes un 20 % menos.
Tu número de pedido es 402-8837165-2219.
El número de seguimiento de Correos es PQ4F6P0702945760108001V.
La API devuelve un error 404 Not Found.
Mi código postal es 28013, Madrid.
El vuelo IB 3166 sale a las 09:45 de la terminal 4.
El arreglo está en el commit {sha1}.
ID de la petición: {uuid}
Comprueba el SHA-256 del instalador: {sha256}
Haz la transferencia a la cuenta {iban_es}.
Llámame al +34 600 123 456 por la tarde.
La contraseña del wifi está en la pegatina del router.
Nunca compartas tu frase de recuperación con nadie.
En el docker-compose puse MYSQL_PASSWORD: ${MYSQL_PASSWORD} y lo leo del .env.
Para la paella: 400 g de arroz, 1 litro de caldo y una pizca de azafrán.
La reunión es el 15/07/2024 a las 16:00.
El color del botón es #27AE60.
Si olvidas el PIN, el móvil se bloquea después de diez intentos.
La versión 2.4.1 corrige el fallo de inicio de sesión.
La impresora tiene la IP 10.0.0.45.
""",
    "ja": r"""
昨日パスワードを変更したので、もう一度ログインしてください。
暗証番号は4桁の数字です。
SMSで届いた認証コードを入力してください。
クーポンコード NATSU2024 を入力すると送料無料になります。
ご注文番号は 250-1234567-8901234 です。
ヤマト運輸の伝票番号は 4567-8901-2345 です。
サーバーから 500 Internal Server Error が返ってきました。
郵便番号は 150-0002 です。
JL 123便は羽田を8時15分に出発します。
修正はコミット {git7} に含まれています。
リクエストID：{uuid}
ダウンロードしたファイルのSHA-256は {sha256} です。
電話番号は 03-1234-5678 です。
Wi-Fiのパスワードはルーターの裏に書いてあります。
環境変数 ${API_TOKEN} に値を設定してから実行してください。
卵2個、砂糖大さじ3、牛乳200mlを混ぜます。
会議は7月3日（水）14時からです。
背景色は #F5F5F5 にしてください。
二段階認証を有効にすることをおすすめします。
iPhone 15 と Galaxy S24 で迷っています。
バージョン 1.8.2 でログインの不具合が修正されました。
sudo を実行するとパスワードの入力を求められます。
復元フレーズは紙に書いて保管してください。
""",
    "it": r"""
Ho cambiato la password ieri e ora Gmail mi chiede di nuovo l'accesso.
Il PIN del bancomat ha cinque cifre.
Inserisci il codice che ti abbiamo inviato via SMS.
Con il codice sconto ESTATE10 hai il 10% di sconto.
Il numero d'ordine è 171-2938475-6612093.
Il codice di tracciamento BRT è 057123456789.
Il server risponde con errore 503.
Il CAP di Bologna centro è 40121.
Il volo AZ 610 parte alle 10:05 da Fiumicino.
La correzione è nel commit {sha1}.
ID richiesta: {uuid}
Lo SHA-256 del file è {sha256}.
Fai il bonifico sull'IBAN {iban_it}.
Chiamami al 333 123 4567.
La password del Wi-Fi è scritta sotto il modem.
Non condividere mai le parole di recupero del portafoglio.
Nel file .env metti MAIL_PASSWORD=${MAIL_PASSWORD} e non il valore vero.
Per il tiramisù: 500 g di mascarpone, 4 uova e 300 g di savoiardi.
L'appuntamento è il 3 luglio alle 15:30.
Il colore del tema è #008C45.
Se sbagli il PIN tre volte la SIM chiede il PUK.
La Fiat Panda 1.2 consuma circa 5 litri ogni 100 km.
La versione 4.2.0 è compatibile con Python 3.11.
""",
    "pt": r"""
Troquei a senha do e-mail ontem e agora o celular não sincroniza.
A senha do cartão tem quatro dígitos.
Digite o código que enviamos por SMS.
Use o cupom FRETEGRATIS na finalização da compra.
O número do pedido é 1234567890123-01.
O código de rastreio dos Correios é QB123456789BR.
A API retornou erro 401 Unauthorized.
O meu CEP é 01310-100.
O voo LA 3456 sai às 07h10 de Guarulhos.
A correção está no commit {git7}.
ID da requisição: {uuid}
O SHA-256 do arquivo é {sha256}.
Meu telefone é (11) 91234-5678.
A senha do wi-fi está no adesivo embaixo do roteador.
Nunca compartilhe sua frase de recuperação.
No docker-compose coloquei POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}.
Para o bolo: 3 ovos, 2 xícaras de farinha e 1 xícara de açúcar.
A reunião é dia 10/07/2024 às 14h.
A cor do botão é #FFCC00.
Esqueci a senha do gov.br, como recupero?
A versão 3.2.1 corrigiu o erro de login.
O código do portão é trocado todo mês pelo síndico.
A chave Pix da loja é o CNPJ que aparece na nota fiscal.
""",
    "ko": r"""
어제 비밀번호를 바꿨더니 메일 앱이 다시 로그인하라고 해요.
카드 비밀번호는 네 자리 숫자예요.
문자로 받은 인증번호를 입력해 주세요.
쿠폰 코드 WELCOME5000을 입력하면 5천 원 할인돼요.
주문번호는 20240611-0012345입니다.
CJ대한통운 송장번호는 6543-2109-8765입니다.
서버가 502 에러를 반환했어요.
우편번호는 06236입니다.
KE 017편은 인천에서 오후 2시 40분에 출발해요.
수정 사항은 커밋 {sha1}에 있어요.
요청 ID: {uuid}
파일의 SHA-256 값은 {sha256}입니다.
전화번호는 010-1234-5678이에요.
와이파이 비밀번호는 공유기 뒷면 스티커에 적혀 있어요.
도어락 비밀번호는 한 달에 한 번 바꾸는 게 좋아요.
환경 변수 ${DB_PASSWORD}에 값을 넣고 실행하세요.
밀가루 200g, 달걀 2개, 우유 150ml를 섞어 주세요.
회의는 7월 3일 오후 3시예요.
버튼 색상은 #3182F6으로 해 주세요.
공동인증서 비밀번호를 잊어버리면 재발급받아야 해요.
갤럭시 S24와 아이폰 15 중에 고민 중이에요.
버전 2.1.0에서 로그인 오류가 수정됐어요.
개인 키는 절대 다른 사람에게 보여주면 안 돼요.
""",
    "nl": r"""
Ik heb gisteren mijn wachtwoord veranderd en nu logt de app me steeds uit.
De pincode van de nieuwe pas heeft vier cijfers.
Vul de code in die je per sms hebt ontvangen.
Met kortingscode ZOMER15 krijg je 15% korting.
Je bestelnummer is 1043-2219-8876.
De track-and-trace-code van PostNL is 3SABCD1234567.
De website geeft een 404-fout.
Onze postcode is 1012 AB Amsterdam.
Vlucht KL 1001 naar Londen vertrekt om 07:25.
De fix zit in commit {git7}.
Request-ID: {uuid}
De SHA-256 van het bestand is {sha256}.
Maak het bedrag over naar {iban_nl}.
Bel me op 06 12345678.
Het wifi-wachtwoord staat op de onderkant van het modem.
Deel je herstelzin nooit met iemand.
Zet in de .env DB_PASSWORD=${DB_PASSWORD} en vul de echte waarde alleen op de server in.
Voor de pannenkoeken: 250 gram bloem, 2 eieren en een halve liter melk.
De afspraak is op 3 juli om 10:00.
De huisstijlkleur is #FF6200.
De alarmcode wordt elk kwartaal gewijzigd.
Versie 5.0.3 lost het inlogprobleem op.
Tweestapsverificatie staat nu standaard aan voor DigiD.
""",
    "ru": r"""
Вчера поменял пароль, и теперь почта на телефоне не синхронизируется.
ПИН-код карты состоит из четырёх цифр.
Введите код из СМС, он действует пять минут.
По промокоду LETO2024 скидка 15%.
Номер заказа 38472-1190-55.
Трек-номер Почты России RA123456789RU.
Сервер вернул ошибку 504 Gateway Timeout.
Мой индекс 101000, Москва.
Рейс SU 1402 вылетает в 09:50 из Шереметьево.
Исправление в коммите {sha1}.
ID запроса: {uuid}
SHA-256 образа: {sha256}
Мой телефон +7 912 345-67-89.
Пароль от вайфая написан на наклейке снизу роутера.
Никому не сообщайте код из СМС, даже сотрудникам банка.
В docker-compose указано POSTGRES_PASSWORD: ${POSTGRES_PASSWORD}.
Для блинов: 2 яйца, 500 мл молока, 250 г муки.
Встреча 3 июля в 15:00.
Цвет кнопки #0077FF.
Сид-фразу лучше хранить на бумаге, а не в заметках.
Версия 1.24.3 исправляет ошибку входа.
Код домофона можно узнать у управляющей компании.
Принтер стоит по адресу 192.168.0.100.
""",
}


def _iban(country: str, bban: str) -> str:
    digits = "".join(str(int(c, 36)) for c in bban + country + "00")
    check = 98 - int(digits) % 97
    raw = f"{country}{check:02d}{bban}"
    return " ".join(raw[i : i + 4] for i in range(0, len(raw), 4))


def _isbn13() -> str:
    d = "978" + rs(DIG, 9)
    c = (10 - sum(int(x) * (1 if i % 2 == 0 else 3) for i, x in enumerate(d)) % 10) % 10
    return f"{d[:3]}-{d[3]}-{d[4:7]}-{d[7:]}-{c}"


FILLERS = {
    "uuid": uid,
    "sha256": lambda: hx(64),
    "sha1": lambda: hx(40),
    "git7": lambda: hx(7),
    "md5": lambda: hx(32),
    "hex32": lambda: hx(32),
    "hex16": lambda: hx(16),
    "sshpub": ssh_ed25519_pub,
    "eth_addr": lambda: "0x" + hx(40),
    "iban_de": lambda: _iban("DE", rs(DIG, 18)),
    "iban_fr": lambda: _iban("FR", rs(DIG, 23)),
    "iban_es": lambda: _iban("ES", rs(DIG, 20)),
    "iban_it": lambda: _iban("IT", pick(UP) + rs(DIG, 22)),
    "iban_nl": lambda: _iban("NL", pick(["INGB", "ABNA", "RABO"]) + rs(DIG, 10)),
    "isbn": _isbn13,
}
FILL_RE = re.compile(r"\{(" + "|".join(FILLERS) + r")\}")


def build_negatives() -> list[tuple[str, str]]:
    out = []
    for lang, block in NEGATIVES.items():
        for line in block.strip().splitlines():
            line = FILL_RE.sub(lambda m: FILLERS[m.group(1)](), line.strip())
            if line:
                out.append((lang, line))
    return out


def build_positives(neg_lines: list[str]) -> list[dict]:
    rows, seen_secrets, seen_texts = [], set(), set()
    for kind, lang, fn in TEMPLATES:
        for _ in range(500):
            text, secret = fn()
            if text.count(secret) != 1 or secret in seen_secrets or text in seen_texts:
                continue
            if any(secret in n for n in neg_lines):
                continue
            break
        else:
            raise RuntimeError(f"could not draw a clean value for {kind}/{lang}")
        seen_secrets.add(secret)
        seen_texts.add(text)
        rows.append({"kind": kind, "lang": lang, "text": text, "secret": secret})
    return rows


def check(rows: list[dict], negs: list[tuple[str, str]]) -> None:
    langs = ["en", "zh", "de", "fr", "es", "ja", "it", "pt", "ko", "nl", "ru"]
    assert len({r["text"] for r in rows}) == len(rows), "duplicate positive texts"
    assert all(r["secret"] in r["text"] for r in rows)
    assert all(r["lang"] in langs for r in rows)
    for lang in langs[1:]:
        assert sum(r["lang"] == lang for r in rows) >= 8, lang
    for lang in langs:
        assert sum(lg == lang for lg, _ in negs) >= 15, lang
    lines = [t for _, t in negs]
    assert len(set(lines)) == len(lines), "duplicate negatives"
    assert all("\n" not in t and t.strip() for t in lines)
    for r in rows:
        assert not any(r["secret"] in t for t in lines), r["kind"]
    assert len({r["kind"] for r in rows}) >= 120


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    ap.add_argument("--force", action="store_true", help="overwrite existing output")
    args = ap.parse_args()
    pos_path, neg_path = args.out / "positives.jsonl", args.out / "negatives.txt"
    if not args.force and (pos_path.exists() or neg_path.exists()):
        print(f"refusing to overwrite {pos_path} / {neg_path} (use --force)", file=sys.stderr)
        return 1
    negs = build_negatives()
    rows = build_positives([t for _, t in negs])
    check(rows, negs)
    args.out.mkdir(parents=True, exist_ok=True)
    with pos_path.open("w", encoding="utf-8") as fh:
        for r in rows:
            fh.write(json.dumps(r, ensure_ascii=False) + "\n")
    with neg_path.open("w", encoding="utf-8") as fh:
        for _, t in negs:
            fh.write(t + "\n")
    print(f"{len(rows)} positives ({len({r['kind'] for r in rows})} kinds), {len(negs)} negatives")
    return 0


if __name__ == "__main__":
    sys.exit(main())
