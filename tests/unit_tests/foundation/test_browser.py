"""The memory browser's API and security, in process (headless Chromium drives the real
server in ``tests/integration_tests/test_browser.py``)."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from importlib import resources
from pathlib import Path
from urllib.parse import quote

import httpx
import pytest

from langmem_layers import MemoryLayers
from langmem_layers.agent.browser import create_browser_app
from langmem_layers.cli.main import main
from langmem_layers.errors import ConfigurationError
from langmem_layers.testing import DeterministicEmbeddings

TOKEN = "a-browser-token-of-24ch"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
HERE = "http://127.0.0.1:8766"


@pytest.fixture
async def memory(memory: MemoryLayers) -> MemoryLayers:
    """The conftest's layers, with three users."""
    layers = memory
    await layers.aadd("I'm vegetarian and I live in Berlin. My dog is called Rex.", user_id="ada")
    await layers.asave("Prefers short answers", user_id="ada")
    await layers.aadd("I work as a nurse in Lyon.", user_id="bob")
    await layers.aadd("My cat is called Tom.", user_id="a/b")
    return layers


@pytest.fixture
async def client(memory: MemoryLayers) -> AsyncIterator[httpx.AsyncClient]:
    app = create_browser_app(memory, token=TOKEN)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url=HERE) as c:
        yield c


def _item(memory_id: str) -> str:
    return quote(memory_id, safe="")


async def _profile(memory: MemoryLayers, user: str) -> dict[str, str]:
    return {i.id: str(i.metadata["value"]) for i in (await memory.aget_all(user)).profile}


async def test_every_api_call_needs_the_token(client: httpx.AsyncClient) -> None:
    for path in ("/api/users", "/api/users/ada", "/api/users/ada/export", "/api/metrics"):
        assert (await client.get(path)).status_code == 401
        wrong = await client.get(path, headers={"Authorization": "Bearer " + "x" * 23})
        assert wrong.status_code == 401
        assert (await client.get(path, headers=AUTH)).status_code == 200
    assert (await client.get("/")).status_code == 200  # the page holds no data


async def test_a_write_without_the_token_or_from_another_site_changes_nothing(
    client: httpx.AsyncClient, memory: MemoryLayers
) -> None:
    before = await _profile(memory, "ada")
    url = f"/api/users/ada/memories/{_item('profile:context/diet')}"
    assert (await client.patch(url, json={"text": "vegan"})).status_code == 401
    evil = {**AUTH, "Origin": "http://evil.example"}
    assert (await client.patch(url, json={"text": "vegan"}, headers=evil)).status_code == 403
    assert (await client.delete(url, headers=evil)).status_code == 403
    cross = {**AUTH, "Sec-Fetch-Site": "cross-site"}
    assert (await client.delete(url, headers=cross)).status_code == 403
    forget = await client.post("/api/users/ada/forget", json={"confirm": "ada"}, headers=evil)
    assert forget.status_code == 403
    assert await _profile(memory, "ada") == before
    same = {**AUTH, "Origin": HERE, "Sec-Fetch-Site": "same-origin"}
    assert (await client.patch(url, json={"text": "vegan"}, headers=same)).status_code == 200
    assert (await _profile(memory, "ada"))["profile:context/diet"] == "vegan"


async def test_the_ipv6_loopback_name_is_served(memory: MemoryLayers) -> None:
    app = create_browser_app(memory, token=TOKEN)
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://[::1]:8766") as c:
        assert (await c.get("/api/users", headers=AUTH)).status_code == 200


async def test_another_host_name_is_refused(client: httpx.AsyncClient) -> None:
    """DNS rebinding: a page of evil.example resolved to 127.0.0.1 gets nothing."""
    assert (await client.get("/", headers={"Host": "evil.example"})).status_code == 400
    assert (
        await client.get("/api/users", headers={**AUTH, "Host": "evil.example"})
    ).status_code == 400


async def test_a_users_page_holds_that_user_only(client: httpx.AsyncClient) -> None:
    assert (await client.get("/api/users", headers=AUTH)).json() == {"users": ["a/b", "ada", "bob"]}
    ada = (await client.get("/api/users/ada", headers=AUTH)).text
    assert "Berlin" in ada and "Rex" in ada and "Prefers short answers" in ada
    assert "nurse" not in ada and "Lyon" not in ada and "Tom" not in ada
    slash = (await client.get("/api/users/a%2Fb", headers=AUTH)).json()
    assert slash["user_id"] == "a/b" and "Tom" in str(slash["profile"])
    assert "Berlin" not in str(slash)
    assert (await client.get("/api/users/%20", headers=AUTH)).status_code == 400


async def test_profile_items_carry_their_source_and_history(client: httpx.AsyncClient) -> None:
    data = (await client.get("/api/users/ada", headers=AUTH)).json()
    diet = next(i for i in data["profile"] if i["id"] == "profile:context/diet")
    assert diet["metadata"]["evidence"].startswith("I'm vegetarian")
    assert diet["session_id"] and diet["metadata"]["first_stored"] > 0
    assert any(h["new_value"] == "vegetarian" and h["action"] == "added" for h in data["history"])
    assert data["episodes"] and data["episodes"][0]["turns"]


async def test_edit_and_delete_reach_the_store_and_the_history_keeps_the_old_value(
    client: httpx.AsyncClient, memory: MemoryLayers
) -> None:
    url = f"/api/users/ada/memories/{_item('profile:context/diet')}"
    answer = await client.patch(url, json={"text": "vegan"}, headers=AUTH)
    assert answer.status_code == 200 and answer.json()["metadata"]["value"] == "vegan"
    history = await memory.ahistory(user_id="ada")
    assert any(h.old_value == "vegetarian" and h.new_value == "vegan" for h in history)
    dog = f"/api/users/ada/memories/{_item('profile:context/dog')}"
    assert (await client.delete(dog, headers=AUTH)).status_code == 200
    assert "profile:context/dog" not in await _profile(memory, "ada")
    assert (await client.delete(dog, headers=AUTH)).status_code == 404
    assert (await client.patch(url, json={}, headers=AUTH)).status_code == 400
    assert (await client.patch(url, content=b"{", headers=AUTH)).status_code == 400
    turn = (await memory.aget_all("ada")).turns[0].id
    refused = await client.patch(
        f"/api/users/ada/memories/{_item(turn)}", json={"text": "x"}, headers=AUTH
    )
    assert refused.status_code == 400 and "error" in refused.json()


async def test_forgetting_needs_the_user_id_typed_again(
    client: httpx.AsyncClient, memory: MemoryLayers
) -> None:
    wrong = await client.post("/api/users/bob/forget", json={"confirm": "ada"}, headers=AUTH)
    assert wrong.status_code == 400
    assert await _profile(memory, "bob")
    done = await client.post("/api/users/bob/forget", json={"confirm": "bob"}, headers=AUTH)
    assert done.status_code == 200 and "/" not in str(done.json()["compacted"])
    assert await _profile(memory, "bob") == {}
    assert "bob" not in (await client.get("/api/users", headers=AUTH)).json()["users"]
    assert await _profile(memory, "ada")


async def test_export_and_search(client: httpx.AsyncClient, memory: MemoryLayers) -> None:
    export = await client.get("/api/users/ada/export", headers=AUTH)
    assert export.headers["content-disposition"] == 'attachment; filename="ada.json"'
    assert export.json().keys() == (await memory.aexport("ada")).keys()
    hits = (await client.get("/api/users/ada/search?q=dog", headers=AUTH)).json()["hits"]
    recalled = [h for h in hits if h["kind"] in ("episode", "turn")]
    assert recalled and all(
        {"relevance", "recency", "importance"} <= set(h["metadata"]["why"]) for h in recalled
    )
    assert (await client.get("/api/users/ada/search?q=", headers=AUTH)).status_code == 400
    metrics = (await client.get("/api/metrics", headers=AUTH)).json()
    assert metrics["recalls"][-1][2] >= len(recalled)  # records the recall returned
    assert len(metrics["archives"]) == 4  # three adds and one saved note


async def test_the_pages_run_only_their_own_script_and_set_text_never_html(
    client: httpx.AsyncClient,
) -> None:
    page = await client.get("/users/ada")
    policy = page.headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy
    assert re.search(r"<script[^>]*>\s*[^<\s]", page.text) is None  # no inline script
    script = resources.files("langmem_layers.agent").joinpath("_browser", "app.js").read_text()
    for sink in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval("):
        assert sink not in script
    assert (
        (await client.get("/static/app.js")).headers["content-type"].startswith("text/javascript")
    )


async def test_layers_without_a_store_are_refused_up_front(tmp_path: Path) -> None:
    layers = MemoryLayers(storage=str(tmp_path), embeddings=DeterministicEmbeddings())
    try:
        with pytest.raises(ConfigurationError, match="have no store outside a graph run"):
            create_browser_app(layers, token=TOKEN)
    finally:
        await layers.aclose()


def test_a_short_token_is_refused(tmp_path: Path) -> None:
    with MemoryLayers.open(tmp_path) as layers, pytest.raises(ConfigurationError, match="16"):
        create_browser_app(layers, token="short")


def test_the_cli_will_not_serve_other_hosts_without_a_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delenv("LANGMEM_UI_TOKEN", raising=False)
    assert main(["ui", "--storage", str(tmp_path), "--host", "0.0.0.0"]) == 2
    assert "access token" in capsys.readouterr().err
