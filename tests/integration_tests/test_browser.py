"""The memory browser (``langmem-layers ui``) driven by headless Chromium and a plain HTTP client.

Each server is the real CLI on a free loopback port over a storage folder seeded with the
library; the pages run in Debian's Chromium through Playwright. What a test changed is
checked after the server stopped, in the folder itself.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx
import pytest

from langmem_layers import MemoryLayers
from tests.integration_tests.conftest import _stop, free_port

pytestmark = pytest.mark.integration

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
CLI = [sys.executable, "-m", "langmem_layers.cli.main"]
DIET, PLACE, DOG = "profile:context/diet", "profile:context/location", "profile:context/dog"
ADA_PROFILE = {DIET: "vegetarian", PLACE: "Berlin", DOG: "Rex"}
NOTE = "Prefers short answers"
TIMEOUT_MS = 10_000


def _seed(folder: Path) -> Path:
    with MemoryLayers.open(str(folder)) as memory:
        memory.add("I'm vegetarian and I live in Berlin. My dog is called Rex.", user_id="ada")
        memory.add("I work as a nurse in Lyon.", user_id="bob")
        memory.save(NOTE, user_id="ada")
    return folder


def _profile(folder: Path, user: str) -> dict[str, str]:
    """``{memory id: value}`` of ``user``'s profile, read from the folder (server stopped)."""
    with MemoryLayers.open(str(folder)) as memory:
        return {i.id: str(i.metadata["value"]) for i in memory.get_all(user).profile}


def _tail(log: Path) -> str:
    return log.read_text(errors="replace")[-3000:] if log.exists() else ""


@dataclass
class Server:
    """One running ``langmem-layers ui``: its base URL, the token it printed, the process."""

    base: str
    token: str
    proc: subprocess.Popen[bytes]
    folder: Path
    stopped: bool = field(default=False)

    @property
    def port(self) -> int:
        return int(self.base.rsplit(":", 1)[1])

    def url(self, path: str) -> str:
        """``path`` on this server with the token in the fragment, as the CLI prints it."""
        return f"{self.base}{path}#token={self.token}"

    def api(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        headers = {"Authorization": f"Bearer {self.token}", **kwargs.pop("headers", {})}
        return httpx.request(method, self.base + path, headers=headers, timeout=10, **kwargs)

    def stop(self) -> None:
        if self.stopped:
            return
        self.stopped = True
        _stop(self.proc)


@contextmanager
def _serving(folder: Path) -> Iterator[Server]:
    """``langmem-layers ui --storage folder`` on a free loopback port, until the block ends."""
    port = free_port()
    out, log = folder.with_suffix(".stdout"), folder.with_suffix(".log")
    env = {k: v for k, v in os.environ.items() if k != "LANGMEM_UI_TOKEN"}
    with out.open("wb") as stdout, log.open("wb") as stderr:
        proc = subprocess.Popen(
            [*CLI, "ui", "--storage", str(folder), "--port", str(port)],
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            env=env,
        )
    server: Server | None = None
    try:
        deadline = time.monotonic() + 60
        while server is None:  # the one line it prints, flushed before serving
            lines = out.read_text().splitlines()
            if lines:
                prefix = f"memory browser: http://127.0.0.1:{port}/#token="
                assert lines[0].startswith(prefix), lines
                token = lines[0].removeprefix(prefix)
                assert len(token) >= 16
                server = Server(f"http://127.0.0.1:{port}", token, proc, folder)
            elif proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"`ui` printed no address (exit {proc.poll()}):\n{_tail(log)}")
            else:
                time.sleep(0.1)  # waiting for a server to start, not synchronising a test
        while True:
            try:
                if httpx.get(server.base + "/", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"`ui` did not serve (exit {proc.poll()}):\n{_tail(log)}")
            time.sleep(0.1)  # waiting for a server to start, not synchronising a test
        yield server
    finally:
        if server is not None:
            server.stop()
        else:
            Server("", "", proc, folder).stop()


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the tests that only read (or are refused): seeded, never written."""
    with _serving(_seed(tmp_path_factory.mktemp("shared") / "data")) as server:
        yield server


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own, on a freshly seeded folder (``tmp_path / "data"``)."""
    with _serving(_seed(tmp_path / "data")) as server:
        yield server


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not CHROMIUM.exists():
        # CI (make integration) sets LANGMEM_CHROMIUM and installs it: there a missing
        # browser fails instead of skipping
        assert not os.environ.get("LANGMEM_CHROMIUM"), f"no Chromium at {CHROMIUM}"
        pytest.skip(f"Chromium is not installed at {CHROMIUM} (apt-get install chromium)")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        chromium = pw.chromium.launch(
            executable_path=str(CHROMIUM), headless=True, args=CHROMIUM_ARGS
        )
        try:
            yield chromium
        finally:
            chromium.close()


@dataclass
class Tab:
    """A page in a fresh browser context (its own sessionStorage) and its script errors."""

    page: Any
    errors: list[str]


@pytest.fixture
def tab(browser: Any) -> Iterator[Tab]:
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    context.set_default_timeout(TIMEOUT_MS)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        yield Tab(page, errors)
    finally:
        context.close()


def _row(page: Any, memory_id: str) -> Any:
    return page.locator(f'#profile tr[data-id="{memory_id}"]')


# ------------------------------------------------------------------------------ pages
def test_home_page_lists_both_users_as_links(shared: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    page = tab.page
    page.goto(shared.url("/"))
    links = page.locator("ul#users li a")
    expect(links).to_have_count(2)
    assert links.all_inner_texts() == ["ada", "bob"]
    assert [a.get_attribute("href") for a in links.all()] == ["/users/ada", "/users/bob"]
    expect(page.locator("h1")).to_have_text("Users (2)")
    assert "token" not in page.url  # the token left the address bar (and history)
    links.first.click()  # the token stayed in sessionStorage for the next page
    expect(page.locator("#user-id")).to_have_text("ada")
    assert page.url == f"{shared.base}/users/ada"
    assert tab.errors == []


def test_user_page_shows_only_that_users_memories(shared: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    page = tab.page
    page.goto(shared.url("/users/ada"))
    expect(page.locator("#user-id")).to_have_text("ada")
    for memory_id, value in ADA_PROFILE.items():
        expect(_row(page, memory_id).locator("td.value")).to_have_text(value)
    expect(page.locator("#profile tr[data-id]")).to_have_count(3)
    expect(page.locator("#notes td.value")).to_have_text([NOTE])
    for section in ("#search", "#notes", "#episodes", "#tools", "#account"):
        expect(page.locator(section)).to_be_visible()
    text = page.locator("body").inner_text()
    for fact in ("vegetarian", "Berlin", "Rex", NOTE):
        assert fact in text
    for other in ("nurse", "Lyon", "bob"):
        assert other not in text
    assert tab.errors == []


# ------------------------------------------------------------------------------ writes
def test_edit_and_delete_through_the_page_reach_the_store(fresh: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    page = tab.page
    page.goto(fresh.url("/users/ada"))
    diet = _row(page, DIET)
    expect(diet.locator("td.value")).to_have_text("vegetarian")
    diet.locator("button.edit").click()
    box = diet.locator("input.edit-value")
    expect(box).to_have_value("vegetarian")
    box.fill("vegan")
    diet.locator("button.save").click()
    # the page re-renders from the server: a plain value cell again, and a second change
    expect(diet.locator("td.value")).to_have_text("vegan")
    expect(diet.locator("input.edit-value")).to_have_count(0)
    expect(diet.locator("details summary")).to_have_text("2 changes")
    expect(diet.locator("details")).to_contain_text("vegetarian → vegan")

    sent: list[str] = []
    page.on("request", lambda r: sent.append(r.method) if r.method == "DELETE" else None)
    asked: list[str] = []

    def dismiss(dialog: Any) -> None:
        asked.append(dialog.message)
        dialog.dismiss()

    page.once("dialog", dismiss)  # dismissed: nothing is deleted
    _row(page, PLACE).locator("button.delete").click()
    assert asked == [f"Delete {PLACE}?"]
    page.once("dialog", lambda d: d.accept())
    _row(page, DOG).locator("button.delete").click()
    expect(_row(page, DOG)).to_have_count(0)
    expect(_row(page, PLACE).locator("td.value")).to_have_text("Berlin")
    assert sent == ["DELETE"]
    assert tab.errors == []

    fresh.stop()
    folder = fresh.folder
    assert _profile(folder, "ada") == {DIET: "vegan", PLACE: "Berlin"}
    with MemoryLayers.open(str(folder)) as memory:
        changes = [
            (h.action, h.old_value, h.new_value)
            for h in memory.history(user_id="ada")
            if h.key == "diet"
        ]
        assert ("added", None, "vegetarian") in changes
        assert any(old == "vegetarian" and new == "vegan" for _, old, new in changes), changes
        assert any(h.key == "dog" and h.new_value is None for h in memory.history(user_id="ada"))
        assert [n.text for n in memory.get_all("ada").notes] == [NOTE]
        assert {i.metadata["value"] for i in memory.get_all("bob").profile} == {"nurse"}


def test_forget_through_the_page_removes_the_user(fresh: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    page = tab.page
    page.goto(fresh.url("/users/bob"))
    expect(page.locator("#user-id")).to_have_text("bob")
    page.locator("#forget-confirm").fill("bo")  # a wrong confirmation is refused
    page.locator("#forget").click()
    expect(page.locator("#status")).to_contain_text("forgetting needs the body")
    assert fresh.api("GET", "/api/users").json() == {"users": ["ada", "bob"]}

    page.locator("#forget-confirm").fill("bob")
    page.locator("#forget").click()
    page.wait_for_url(f"{fresh.base}/")
    expect(page.locator("ul#users li a")).to_have_text(["ada"])
    assert fresh.api("GET", "/api/users").json() == {"users": ["ada"]}
    gone = fresh.api("GET", "/api/users/bob").json()
    assert gone["profile"] == [] and gone["episodes"] == [] and gone["notes"] == []
    assert tab.errors == []

    fresh.stop()
    folder = fresh.folder
    with MemoryLayers.open(str(folder)) as memory:
        assert memory.users() == ["ada"]
        assert memory.get_all("bob").profile == []
        assert memory.get_all("bob").episodes == []
    assert _profile(folder, "ada") == ADA_PROFILE


# ---------------------------------------------------------------------------- refusals
def _ada_now(server: Server) -> tuple[dict[str, str], list[str], Any]:
    data = server.api("GET", "/api/users/ada").json()
    profile = {i["id"]: i["metadata"]["value"] for i in data["profile"]}
    return profile, [n["text"] for n in data["notes"]], server.api("GET", "/api/users").json()


def test_refused_writes_change_nothing(shared: Server) -> None:
    diet = f"{shared.base}/api/users/ada/memories/{quote(DIET, safe='')}"
    place = f"{shared.base}/api/users/ada/memories/{quote(PLACE, safe='')}"
    forget = f"{shared.base}/api/users/ada/forget"
    bearer = {"Authorization": f"Bearer {shared.token}"}
    body = {"text": "pwned"}
    refused = [
        (401, "PATCH", diet, {}),
        (401, "PATCH", diet, {"Authorization": "Bearer wrong-token-0123456789abcdef"}),
        (401, "PATCH", diet, {"Authorization": shared.token}),  # not "Bearer <token>"
        (403, "PATCH", diet, {**bearer, "Origin": "http://evil.example"}),
        (403, "PATCH", diet, {**bearer, "Origin": "null"}),
        (403, "PATCH", diet, {**bearer, "Sec-Fetch-Site": "cross-site"}),
        (403, "PATCH", diet, {**bearer, "Sec-Fetch-Site": "same-site"}),
        (403, "DELETE", place, {**bearer, "Origin": "http://evil.example"}),
        (403, "DELETE", place, {**bearer, "Origin": f"http://127.0.0.1:{shared.port + 1}"}),
        (403, "POST", forget, {**bearer, "Origin": "http://evil.example"}),
        (401, "POST", forget, {"Origin": shared.base}),
    ]
    for status, method, url, headers in refused:
        payload = {"confirm": "ada"} if method == "POST" else body
        answer = httpx.request(method, url, headers=headers, json=payload, timeout=10)
        assert answer.status_code == status, (method, url, headers, answer.text)
        assert "error" in answer.json()
    # reads need the token too, and a foreign Host (DNS rebinding) is refused outright
    assert httpx.get(f"{shared.base}/api/users", timeout=10).status_code == 401
    for url in (f"{shared.base}/", f"{shared.base}/api/users"):
        rebound = httpx.get(url, headers={**bearer, "Host": "evil.example"}, timeout=10)
        assert rebound.status_code == 400
    # control: the same URL with the token and no foreign origin reaches the handler
    control = httpx.patch(diet, headers={**bearer, "Origin": shared.base}, json={}, timeout=10)
    assert control.status_code == 400 and "PATCH needs a JSON body" in control.json()["error"]
    assert _ada_now(shared) == (ADA_PROFILE, [NOTE], {"users": ["ada", "bob"]})


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def _static_site(root: Path) -> Iterator[int]:
    """``root`` served by ``http.server`` on a free loopback port: yields the port."""
    handler = functools.partial(_Quiet, directory=str(root))
    site = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=site.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(site.server_address[1])
    finally:
        site.shutdown()
        site.server_close()
        thread.join(timeout=5)


_ATTACK = """<!doctype html><html><body><pre id="out"></pre><script>
const out = document.getElementById("out");
async function attempt(name, url, init) {
  try { const r = await fetch(url, init); return name + " " + r.status + " " + r.type; }
  catch (e) { return name + " failed " + e.name; }
}
(async () => {
  const results = [
    await attempt("patch", %(patch)s, {method: "PATCH", headers: {Authorization: %(bearer)s,
      "Content-Type": "application/json"}, body: JSON.stringify({text: "pwned"})}),
    await attempt("forget", %(forget)s, {method: "POST", mode: "no-cors",
      headers: {Authorization: %(bearer)s, "Content-Type": "text/plain"},
      body: JSON.stringify({confirm: "ada"})}),
  ];
  out.textContent = results.join("\\n");
  out.dataset.done = "yes";
})();
</script></body></html>
"""


def test_page_on_another_origin_cannot_write(shared: Server, tab: Tab, tmp_path: Path) -> None:
    from playwright.sync_api import expect

    api = f"{shared.base}/api/users/ada"
    (tmp_path / "index.html").write_text(
        _ATTACK
        % {
            "patch": json.dumps(f"{api}/memories/{quote(DIET, safe='')}"),
            "forget": json.dumps(f"{api}/forget"),
            "bearer": json.dumps(f"Bearer {shared.token}"),  # even knowing the token
        },
        encoding="utf-8",
    )
    with _static_site(tmp_path) as port:
        assert port != shared.port
        tab.page.goto(f"http://localhost:{port}/index.html")  # another site altogether
        out = tab.page.locator("#out[data-done=yes]")
        expect(out).to_have_count(1)
        outcome = out.inner_text().splitlines()
    # the PATCH needs a CORS preflight the server never grants: the browser does not send
    # it; the no-cors POST goes out without its Authorization header and is refused
    assert outcome == ["patch failed TypeError", "forget 0 opaque"], outcome
    assert _ada_now(shared) == (ADA_PROFILE, [NOTE], {"users": ["ada", "bob"]})
    assert tab.errors == []


def test_ui_off_loopback_without_token_exits_2(tmp_path: Path) -> None:
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "LANGMEM_UI_TOKEN"}
    started = time.monotonic()
    done = subprocess.run(
        [*CLI, "ui", "--storage", str(tmp_path / "data"), "--host", "0.0.0.0", "--port", str(port)],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env,
        timeout=30,
    )
    took = time.monotonic() - started
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert took < 15, took
    assert "error:" in done.stderr and "token" in done.stderr and "0.0.0.0" in done.stderr
    assert "memory browser" not in done.stdout
    with pytest.raises(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
        pass
    assert not (tmp_path / "data").exists()  # it did not even open the storage


# ----------------------------------------------------------------------------- monitor
def test_monitor_plots_after_a_search(shared: Server, tab: Tab) -> None:
    from playwright.sync_api import expect

    page = tab.page
    page.goto(shared.url("/users/ada"))
    page.locator("#query").fill("dog")
    page.locator("#query").press("Enter")
    hits = page.locator("#hits tr")
    expect(hits.first).to_be_visible()
    expect(page.locator("#hits")).to_contain_text("Rex")
    expect(page.locator("#hits td.why").first).to_contain_text("score")
    expect(page.locator("#hits")).to_contain_text("recency")
    recalls = len(shared.api("GET", "/api/metrics").json()["recalls"])
    assert recalls >= 1

    page.goto(f"{shared.base}/monitor")  # same tab: the token is in sessionStorage
    plots = page.locator("svg.plot")
    expect(plots).to_have_count(4)
    titles = page.locator(".plots h2").all_inner_texts()
    assert titles == [
        "Recall latency",
        "Recall hit rate",
        "Archives (none yet)",  # this server archived nothing
        "Forgotten (none yet)",
    ]
    line = plots.first.locator("polyline")
    if recalls == 1:
        assert plots.first.locator("circle").count() == 1
    else:
        assert len((line.get_attribute("points") or "").split()) == recalls
    expect(page.locator("main")).to_contain_text(f"{recalls} recalls")
    assert plots.nth(1).locator("rect").count() >= 1  # the hit rate has a bar
    for plot in plots.all():
        box = plot.bounding_box()
        assert box is not None and box["width"] > 100 and box["height"] > 100
    assert tab.errors == []


def test_the_browser_serves_postgresql_and_a_chroma_server(
    postgres_schema: str, chroma_server: tuple[str, int], tmp_path: Path
) -> None:
    """``ui --postgres DSN --chroma HOST:PORT``: the same API over the servers' data."""
    from langgraph.checkpoint.postgres import PostgresSaver
    from langgraph.store.postgres import PostgresStore

    from langmem_layers.agent.studio import episode_store_from_env

    host, chroma_port = chroma_server
    servers = {"LANGMEM_CHROMA_HOST": host, "LANGMEM_CHROMA_PORT": str(chroma_port)}

    @contextmanager
    def layers() -> Iterator[MemoryLayers]:
        with (
            PostgresStore.from_conn_string(postgres_schema) as store,
            PostgresSaver.from_conn_string(postgres_schema) as saver,
        ):
            store.setup()
            saver.setup()
            episodes = episode_store_from_env(servers)
            with MemoryLayers(episodes=episodes, store=store, checkpointer=saver) as memory:
                yield memory
            episodes.close()

    with layers() as memory:
        memory.add("I'm vegetarian and my dog is called Rex.", user_id="ada")
        memory.add("I work as a nurse in Lyon.", user_id="bob")
    port, token = free_port(), "a-server-token-0123456789"
    log = tmp_path / "ui.log"
    with log.open("wb") as stderr:
        proc = subprocess.Popen(
            [
                *CLI,
                *("ui", "--storage", str(tmp_path / "unused"), "--port", str(port)),
                *("--token", token, "--postgres", postgres_schema),
                *("--chroma", f"{host}:{chroma_port}"),
            ],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
    try:
        auth = {"Authorization": f"Bearer {token}"}
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 60
        while True:
            try:
                if httpx.get(f"{base}/api/users", headers=auth, timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None and time.monotonic() < deadline, _tail(log)
            time.sleep(0.2)
        assert httpx.get(f"{base}/api/users", headers=auth).json() == {"users": ["ada", "bob"]}
        ada = httpx.get(f"{base}/api/users/ada", headers=auth).json()
        assert ada["episodes"] and "Rex" in str(ada["profile"]) and "nurse" not in str(ada)
        diet = quote("profile:context/diet", safe="")
        fixed = httpx.patch(
            f"{base}/api/users/ada/memories/{diet}", json={"text": "vegan"}, headers=auth
        )
        assert fixed.status_code == 200, fixed.text
    finally:
        _stop(proc)
    assert not (tmp_path / "unused" / "chroma").exists()  # nothing went to the folder's Chroma
    with layers() as memory:
        profile = {i.id: i.metadata["value"] for i in memory.get_all("ada").profile}
    assert profile["profile:context/diet"] == "vegan"
