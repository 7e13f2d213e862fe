import json

import pytest

from langmem_layers.procedural import REDACTED, is_secret_key, redact, redact_text


@pytest.mark.parametrize(
    "key",
    [
        "token",
        "access_token",
        "X-Auth-Token",
        "Password",
        "passwd",
        "api_key",
        "apiKey",
        "API-KEY",
        "client_secret",
        "Authorization",
        "cookie",
        "Set-Cookie",
        "privateKey",
        "session_id",
        "aws_secret_access_key",
    ],
)
def test_secret_keys_are_recognised(key):
    assert is_secret_key(key)


@pytest.mark.parametrize(
    "key", ["max_tokens", "author", "city", "unit", "date", "query", "keyword"]
)
def test_ordinary_keys_are_not_secrets(key):
    assert not is_secret_key(key)


def test_nested_values_under_secret_keys_are_replaced_whole():
    args = {
        "city": "Paris",
        "headers": {"Authorization": "Bearer abc", "Accept": "json"},
        "items": [{"password": 12345}, {"name": "x"}],
        "Cookie": {"sid": "1"},
    }
    out = redact(args)
    assert out == {
        "city": "Paris",
        "headers": {"Authorization": REDACTED, "Accept": "json"},
        "items": [{"password": REDACTED}, {"name": "x"}],
        "Cookie": REDACTED,
    }
    assert args["headers"]["Authorization"] == "Bearer abc"  # input untouched


@pytest.mark.parametrize(
    "secret",
    [
        "sk-proj-Ab3dEf5hIj7lMn9pQr1tUv3x",
        "sk-ant-api03-abcdefghijklmnop1234",
        "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0In0.c2lnbmF0dXJl",
        "AKIAIOSFODNN7EXAMPLE",
        "ghp_16C7e42F292c6912E7710c838347Ae178B4a",
        "xoxb-123456789012-abcdefghijkl",
        "AIzaSyA1234567890abcdefghijklmnopqrstuv",
        "q8Zr2LmX9vTn4KpW7sYb3HdF6gJc",  # generic high-entropy
    ],
)
def test_credential_shaped_values_are_redacted_anywhere(secret):
    for value in (secret, f"call failed with {secret} today"):
        out = redact({"note": value})["note"]
        assert secret not in out
        assert REDACTED in out


def test_secret_pairs_in_text_and_urls():
    text = "GET /v1?city=Oslo&api_key=abc123&x=1 failed: password: hunter2, token=zzz"
    out = redact_text(text)
    for leaked in ("abc123", "hunter2", "zzz"):
        assert leaked not in out
    assert "city=Oslo" in out and "x=1" in out


def test_ordinary_values_survive():
    args = {
        "date": "2024-05-01",
        "id": "123e4567-e89b-12d3-a456-426614174000",
        "n": 3.5,
        "text": "the quick brown fox",
        "flag": True,
        "none": None,
        "max_tokens": 100,
    }
    assert redact(args) == args


def test_non_json_values_become_redacted_reprs():
    class Thing:
        def __repr__(self):
            return "Thing(sk-abcdefghijklmnopqrstuvwx)"

    out = redact({"t": Thing(), "s": {1, 2}})
    assert out["t"] == f"Thing({REDACTED})"
    json.dumps(out)
