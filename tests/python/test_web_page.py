"""The page at ``/`` of parakeet-server, in headless Chromium (browser_helpers.py): it loads
without the API key, under a Content-Security-Policy the browser enforces (an inline script is
refused; the page's own files raise no violation); a chosen file shows the API's own words for
that file, with their times on hover and their speakers (the server has a diarization model),
and its SRT download is the API's; without the key the upload shows the server's refusal. The
policy names no WebSocket origin for a Host header that could smuggle a directive in."""

import time

import httpx
import pytest
from selenium.webdriver.common.by import By

from browser_helpers import API_KEY, chromium, console, page_server, wait_until
from data_helpers import CONVERSATION
from parakeet_cli.server.page import content_security_policy
from stream_helpers import per_test_limit

_bounded = per_test_limit(240)
AUTH = {"Authorization": f"Bearer {API_KEY}"}
# [speaker label, word, title] of every word #transcript shows.
SHOWN_WORDS = """
return [...document.querySelectorAll("#transcript p")].flatMap((p) =>
  [...p.querySelectorAll(".word")].map((w) => [p.querySelector(".speaker").textContent, w.textContent, w.title]));
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with page_server(tmp_path_factory.mktemp("page")) as srv:
        yield srv


@pytest.fixture(scope="module")
def downloads(tmp_path_factory):
    return tmp_path_factory.mktemp("downloads")


@pytest.fixture(scope="module")
def browser(downloads):
    with chromium(downloads) as driver:
        yield driver


def directives(policy: str) -> dict:
    return {d.split()[0]: d.split()[1:] for d in (p.strip() for p in policy.split(";")) if d}


def test_page_loads_without_the_key_under_a_strict_csp(server, browser):
    page = httpx.get(server.url + "/", timeout=10)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert httpx.get(server.url + "/v1/models", timeout=10).status_code == 401  # the API still needs it
    csp = directives(page.headers["content-security-policy"])
    assert csp["default-src"] == ["'none'"] and csp["script-src"] == ["'self'"] and csp["style-src"] == ["'self'"]
    host = server.url.split("//")[1]
    assert set(csp["connect-src"]) == {"'self'", f"ws://{host}", f"wss://{host}"}
    assert page.headers["x-content-type-options"] == "nosniff"

    browser.get(server.url + "/")
    wait_until(browser, lambda d: d.execute_script("return document.readyState") == "complete", "the page")
    assert not [m for m in console(browser) if "Content Security Policy" in m]
    # The policy is in force: an inline script the page did not ship is refused.
    browser.execute_script("const s = document.createElement('script'); s.textContent = 'window.injected = 1';"
                           "document.body.appendChild(s);")
    assert browser.execute_script("return window.injected") is None
    assert any("Content Security Policy" in m for m in console(browser))


@pytest.mark.parametrize("host", ["evil.example; script-src *", "a b", "x'", ""])
def test_policy_takes_only_a_plain_host(host):
    # (with --trusted-host '*' any Host header reaches the page)
    assert directives(content_security_policy(host))["connect-src"] == ["'self'"]
    assert directives(content_security_policy("[::1]:8000"))["connect-src"] == ["'self'", "ws://[::1]:8000",
                                                                               "wss://[::1]:8000"]


def test_upload_shows_the_apis_words_and_needs_the_key(server, browser, downloads):
    browser.get(server.url + "/")
    status, transcript = browser.find_element(By.ID, "status"), browser.find_element(By.ID, "transcript")
    browser.find_element(By.ID, "file").send_keys(str(CONVERSATION))  # no key yet
    wait_until(browser, lambda d: "error" in status.get_attribute("class"), "the upload's error")
    assert "401" in status.text and "missing API key" in status.text and transcript.text == ""

    browser.find_element(By.ID, "api-key").send_keys(API_KEY)
    browser.find_element(By.ID, "file").send_keys(str(CONVERSATION))  # the same file again, with the key
    wait_until(browser, lambda d: transcript.text or "error" in status.get_attribute("class"), "the transcript")
    assert "error" not in status.get_attribute("class"), status.text
    with open(CONVERSATION, "rb") as f:
        api = httpx.post(server.url + "/v1/audio/transcriptions", headers=AUTH, timeout=60,
                         files={"file": f}, data={"response_format": "verbose_json",
                                                  "timestamp_granularities[]": "word"}).json()
    # Every word under its speaker's label, with its times as its title.
    shown = browser.execute_script(SHOWN_WORDS)
    assert shown == [[f"Speaker {w['speaker']}", w["word"], f"{clock(w['start'])} – {clock(w['end'])}"]
                     for w in api["words"]]
    assert [word for _, word, _ in shown] == api["text"].split()

    browser.find_element(By.CSS_SELECTOR, "#downloads button[data-format=srt]").click()
    saved = downloads / f"{CONVERSATION.stem}.srt"
    deadline = time.monotonic() + 60
    while not saved.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    with open(CONVERSATION, "rb") as f:
        srt = httpx.post(server.url + "/v1/audio/transcriptions", headers=AUTH, timeout=60, files={"file": f},
                         data={"response_format": "srt"}).text
    assert saved.read_text() == srt


def clock(seconds: float) -> str:
    """The page's time format: minutes and seconds to the hundredth ("0:03.25")."""
    minutes = int(seconds // 60)
    return f"{minutes}:{seconds - minutes * 60:05.2f}"
