"""``abstain-gym serve``: a person shops in a real browser (headless Chromium through Selenium) and the episode is
recorded like an agent's. Plain HTTP checks cover the rules that need no browser."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest
from conftest import skip_or_fail

import agentabstain_gym  # noqa: F401 - registers the ids
from agentabstain_gym.mcp_server import Session
from agentabstain_gym.serve import start_server

ENV_ID = "AbstainWebShop-v1"


def _solvable_task() -> str:
    env = gym.make(ENV_ID)
    return next(t.task_id for t in env.unwrapped.tasks(split="test") if not t.should_abstain)


@pytest.fixture()
def shop(tmp_path: Path) -> Iterator[tuple[str, Path, Session]]:
    out = tmp_path / "runs.jsonl"
    session = Session(ENV_ID, out=str(out), agent="human", task_id=_solvable_task(),
                      env_kwargs={"observation_mode": "html"}, harness="serve")
    server = start_server(session, port=0)
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", out, session
    finally:
        server.shutdown()
        server.server_close()
        session.close()


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode("utf-8")


def _post(url: str, **form: str) -> str:
    data = urllib.parse.urlencode(form).encode()
    with urllib.request.urlopen(urllib.request.Request(url, data=data), timeout=10) as response:
        return response.read().decode("utf-8")


def _records(out: Path) -> list[dict]:
    return [json.loads(line) for line in out.read_text().splitlines()] if out.exists() else []


def test_http_actions_are_env_steps_and_reloading_repeats_nothing(shop: tuple[str, Path, Session]) -> None:
    base, out, session = shop
    first = _get(base + "/")
    assert 'name="search_query"' in first and "turn 0 of" in first and 'id="abstain-form"' in first
    page = _post(base + "/search", search_query="chips")  # redirected to / (post/redirect/get)
    assert "turn 1 of" in page and "Total results" in page
    assert "turn 1 of" in _get(base + "/")  # a reload is not an action
    assert "turn 1 of" in _get(base + "/item/not-on-this-page")  # nor is a link that is not on the page
    assert "turn 1 of" in _post(base + "/click", click="buy now")  # nor a button that is not on the page
    done = _post(base + "/abstain", reason="nothing fits")
    assert "The episode is over." in done and "over_abstain" in done and 'id="next-task"' in done
    [record] = _records(out)
    assert record["agent"] == "human" and record["outcome"] == "over_abstain" and record["extras"]["harness"] == "serve"
    assert "turn 0 of" in _post(base + "/next")  # the next task starts
    with pytest.raises(urllib.error.HTTPError):
        _post(base + "/shutdown")


def test_serve_refuses_other_families_in_one_line() -> None:
    result = subprocess.run([sys.executable, "-m", "agentabstain_gym.cli", "serve", "AbstainQA-v0", "--port", "0"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 2 and result.stderr.count("\n") == 1 and "not a web-shop id" in result.stderr


def _browser():
    chromium, driver = shutil.which("chromium"), shutil.which("chromedriver")
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        skip_or_fail("selenium is not installed (pip install selenium)")
    if not chromium or not driver:
        skip_or_fail("headless Chromium is not installed (Debian: apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1100,900",
                 "--disable-dev-shm-usage"):
        options.add_argument(flag)
    return webdriver.Chrome(service=Service(executable_path=driver), options=options)


def test_a_person_shops_in_headless_chromium(shop: tuple[str, Path, Session], tmp_path: Path) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    base, out, session = shop
    task = next(t for t in session.env.unwrapped.tasks() if t.task_id == session.task_id)
    query = " ".join([task.payload["goal"]["product_type"], *task.payload["goal"]["attributes"][:1]])
    browser = _browser()
    wait = WebDriverWait(browser, 30)  # every click loads a new page: wait for it, never read the old one
    buy = (By.XPATH, "//button[normalize-space()='Buy Now']")
    try:
        browser.get(base + "/")
        instruction = wait.until(ec.presence_of_element_located((By.ID, "instruction-text"))).text
        assert instruction
        box = browser.find_element(By.NAME, "search_query")
        box.send_keys(query)
        box.submit()
        wait.until(ec.staleness_of(box))
        links = wait.until(ec.presence_of_all_elements_located((By.CSS_SELECTOR, "a.product-link")))
        assert links, browser.page_source[:2000]
        links[0].click()
        wait.until(ec.staleness_of(links[0]))
        wait.until(ec.presence_of_element_located(buy))
        browser.save_screenshot(str(tmp_path / "item.png"))
        browser.find_element(*buy).click()
        assert "The episode is over." in wait.until(ec.presence_of_element_located((By.ID, "outcome"))).text
    finally:
        browser.quit()
    [record] = _records(out)
    assert record["agent"] == "human" and record["tau"] is None and record["turns"] == 3
    assert record["outcome"] in ("success", "failure") and (tmp_path / "item.png").stat().st_size > 10_000


def test_play_shows_a_readable_page_and_the_click_actions() -> None:
    result = subprocess.run([sys.executable, "-m", "agentabstain_gym.cli", "play", ENV_ID, "--seed", "0"],
                            input="search[hdmi cable]\nabstain[nothing fits]\n", capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert "[SEP]" not in result.stdout and "\nBack to Search\n" in result.stdout
    assert "actions: search[...], click[search], abstain[reason]" in result.stdout
    assert "click[back to search]" in result.stdout and "click[next >]" in result.stdout
