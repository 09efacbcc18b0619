"""A real browser for the web page's tests: Debian's headless Chromium driven by Selenium.

Chromium's fake microphone plays a WAV file in a loop (``fake_audio``) and its fake permission
prompt says yes. The driver keeps the page's console (CSP violations are reported there).
"""

from __future__ import annotations

import contextlib
import shutil
from pathlib import Path
from typing import Iterator, List, Optional

import pytest
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.support.ui import WebDriverWait

from server_helpers import NEMO_DIR, ServerProcess
from setup_checks import missing
from stream_helpers import MODELS, SMALL_WINDOW

CHROMIUM = shutil.which("chromium")
CHROMEDRIVER = shutil.which("chromedriver")
#: The key the page's server is started with: every test types it into #api-key.
API_KEY = "sekret"
# What a test waits for at most for anything the page shows (a 2-core machine shared by many).
PAGE_WAIT_SEC = 120


@contextlib.contextmanager
def chromium(downloads: Path, fake_audio: Optional[Path] = None) -> Iterator[webdriver.Chrome]:
    """A Selenium WebDriver for headless Chromium, quit on exit (without Debian's chromium and
    chromium-driver the test is skipped, or fails under CI: tools/setup.sh installs them)."""
    if not (CHROMIUM and CHROMEDRIVER):
        missing("chromium and chromium-driver", "apt-get install chromium chromium-driver")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1000,640",
                 "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream"):
        options.add_argument(flag)
    if fake_audio is not None:
        options.add_argument(f"--use-file-for-fake-audio-capture={fake_audio}")
    options.add_experimental_option("prefs", {"download.default_directory": str(downloads),
                                              "download.prompt_for_download": False})
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(options=options, service=Service(executable_path=CHROMEDRIVER))
    try:
        yield driver
    finally:
        driver.quit()


def console(driver) -> List[str]:
    """The console messages logged since the last call."""
    return [entry["message"] for entry in driver.get_log("browser")]


def wait_until(driver, condition, what: str):  # type: ignore[no-untyped-def]
    """``condition(driver)``'s first truthy value, polled until PAGE_WAIT_SEC."""
    return WebDriverWait(driver, PAGE_WAIT_SEC, poll_frequency=0.1).until(condition, message=f"waiting for {what}")


def page_server(log_dir: Path, vad: Optional[str] = None) -> ServerProcess:
    """The server the page's tests open: the fixture TDT model with the small realtime window,
    the fixture diarization model (speakers on uploads), an API key and ``vad`` (ServerProcess's:
    None is the package's VAD, server_vad turns; "none": no turn detection)."""
    if not MODELS["tdt"].exists():
        pytest.skip("fixture model missing")
    return ServerProcess(["--api-key", API_KEY, "--threads", "1", "--realtime-window", SMALL_WINDOW,
                          "--diarize-model", str(NEMO_DIR / "sortformer_offline" / "model.gguf")], log_dir,
                         model=MODELS["tdt"], vad=vad)
