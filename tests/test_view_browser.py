"""``judgelab view`` driven in a real headless browser: Debian's Chromium through Selenium.

One real ``judgelab calibrate`` of the embedded judge on an 8-row set (one label deliberately wrong)
makes the run; the test opens it, sorts and filters the rows, opens a row with the keyboard, corrects
its label, and sees ``calibrate --corrections`` and ``gate`` pick the correction up; then two runs side
by side. Every page is saved as a PNG under the test's tmp folder (and, when $JUDGELAB_VIEW_SHOTS names
a folder, there too: docs/img/view-*.png come from that).

Chromium and chromedriver come from the system packages (.ci/run installs them when missing) and
Selenium from the test extra; without them these tests skip and say why.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path

import pytest

from judgelab.calibration import read_corrections, read_metrics
from judgelab.cli import main
from judgelab.view import ViewConfig, ViewServer, create_app, load_view_run

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000")

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    pytest.skip("missing real part: no Chromium: apt-get install chromium chromium-driver "
                "(tests/install_browser.sh does when they are missing)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="needs Selenium: pip install 'judgelab[test]'")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402
from selenium.webdriver.support.ui import Select  # noqa: E402

DOC = "The Eiffel Tower is in Paris. It was completed in 1889 and is made of iron. It is 330 metres tall."
CLAIMS = [("The tower is in Paris.", 1), ("The tower is in Rome.", 0), ("It was completed in 1889.", 1),
          ("It is made of wood.", 0), ("It is made of iron.", 0),  # the wrong label the test corrects
          ("It was completed in 1920.", 0), ("It is 330 metres tall.", 1), ("It is 50 metres tall.", 0)]
WRONG = "eiffel-4"


@pytest.fixture(scope="module")
def browser():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="judgelab-view-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    driver.set_page_load_timeout(60)
    yield driver
    driver.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def shots(tmp_path_factory):
    """``shot(driver, name)``: a PNG of the whole page, under the tmp folder (and $JUDGELAB_VIEW_SHOTS)."""
    folder = tmp_path_factory.mktemp("view-screenshots")
    extra = os.environ.get("JUDGELAB_VIEW_SHOTS")

    def shot(driver, name: str) -> Path:
        height = driver.execute_script("return Math.max(document.body.scrollHeight, document.documentElement.scrollHeight)")
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": min(int(height), 4000),
                                                                      "deviceScaleFactor": 1, "mobile": False})
        path = folder / f"view-{name}.png"
        path.write_bytes(driver.get_screenshot_as_png())
        driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        assert path.stat().st_size > 10_000
        if extra:
            shutil.copy(path, Path(extra) / path.name)
        return path

    return shot


@pytest.fixture(scope="module")
def real_run(tmp_path_factory):
    """A real calibrate run of the embedded judge on 8 rows; returns (set file, run folder)."""
    folder = tmp_path_factory.mktemp("view-real")
    set_path = folder / "eiffel.jsonl"
    set_path.write_text("".join(json.dumps({"id": f"eiffel-{i}", "task": "fact-check", "documents": [DOC],
                                            "response": c, "label": y, "group": "eiffel",
                                            "split": ("dev", "test")[i // 2 % 2]}) + "\n"
                                for i, (c, y) in enumerate(CLAIMS)), encoding="utf-8")
    out = folder / "base"
    assert main(["calibrate", "--set", str(set_path), "--out", str(out), "--no-progress", "--threads", "1",
                 "--resamples", "50"]) == 0
    return set_path, out


def _serve(*runs: Path, **kw) -> ViewServer:
    return ViewServer(create_app([load_view_run(r) for r in runs], ViewConfig(n_resamples=50, **kw)), port=0).start()


def _column(driver, n: int) -> list[str]:
    return [td.text for td in driver.find_elements(By.CSS_SELECTOR, f"#rows tbody tr td:nth-child({n})")]


def _scores(driver) -> list[float]:
    return [float(t.split()[0]) for t in _column(driver, 5)]


def _navigate(driver, act, timeout: float = 30.0) -> None:
    """Run ``act`` (a click or key press that loads a page) and return once the new page has loaded.

    Selenium returns from a form submit or a script's ``location.href`` before the next page is
    there; reading at once finds the old page, or elements of it that go stale while being read
    (how CI saw this test fail twice). The old page gets a mark on its ``window``; the wait ends when
    a document without the mark has finished loading. The view draws its pages on the server, so
    nothing redraws them after that. While the old document unloads, chromedriver answers some
    commands with errors (a stale node, "Node with given id does not belong to the document"):
    those mean "not yet", and the wait asks again.
    """
    from selenium.common.exceptions import WebDriverException
    from selenium.webdriver.support.ui import WebDriverWait

    driver.execute_script("window.__judgelabOldPage = true;")
    act()
    WebDriverWait(driver, timeout, ignored_exceptions=(WebDriverException,)).until(
        lambda d: d.execute_script("return !window.__judgelabOldPage && document.readyState === 'complete'"))


def _until_sorted(driver, *, descending: bool, n: int | None = None, timeout: float = 15.0) -> list[float]:
    """The score column once the page has redrawn it in order (a TimeoutException if it never is)."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    def ready(d):
        try:
            scores = _scores(d)
        except (StaleElementReferenceException, ValueError, IndexError):  # the table is being redrawn
            return False
        ok = bool(scores) and (n is None or len(scores) == n) and scores == sorted(scores, reverse=descending)
        return scores if ok else False

    return WebDriverWait(driver, timeout).until(ready)


def test_open_sort_filter_open_a_row_and_correct_its_label(browser, shots, real_run, capsys):
    set_path, base = real_run
    server = _serve(base, who="reviewer")
    try:
        browser.get(server.url + "/")
        assert "Verdicts at the shipped threshold" in browser.find_element(By.ID, "threshold").text
        assert len(_column(browser, 1)) == 8
        kinds = [tr.get_attribute("class") for tr in browser.find_elements(By.CSS_SELECTOR, "#rows tbody tr")]
        assert kinds == sorted(kinds, key=lambda k: k != "wrong")  # disagreement first: the wrong verdicts on top
        shots(browser, "rows")
        _navigate(browser, browser.find_element(By.CSS_SELECTOR, "button[data-sort='score']").click)
        assert len(_until_sorted(browser, descending=True, n=8)) == 8
        assert browser.find_element(By.CSS_SELECTOR, "th[aria-sort='descending'] button").get_attribute("data-sort") == "score"
        flip = browser.find_element(By.CSS_SELECTOR, "button[data-sort='score']")
        _navigate(browser, lambda: flip.send_keys(Keys.ENTER))  # keyboard: flip
        assert len(_until_sorted(browser, descending=False, n=8)) == 8
        Select(browser.find_element(By.NAME, "verdict")).select_by_value("pass")
        _navigate(browser, browser.find_element(By.ID, "apply").click)
        assert {t.split()[0] for t in _column(browser, 7) if t.strip()} == {"pass"}
        assert _until_sorted(browser, descending=False)  # the sort survives the filter
        shots(browser, "filtered")
        browser.get(server.url + "/?q=eiffel-4")  # the search covers ids, claims and documents
        assert _column(browser, 1) == [WRONG]
        row = browser.find_element(By.CSS_SELECTOR, "#rows tbody tr")
        _navigate(browser, lambda: row.send_keys(Keys.ENTER))  # a focusable row opens with Enter
        assert browser.find_element(By.TAG_NAME, "h1").text == f"Row {WRONG}"
        assert "It is made of iron." in browser.find_element(By.ID, "claim").text
        assert "Evaluate whether or not the following claim" in browser.find_element(By.ID, "prompt").text
        assert "Yes" in browser.find_element(By.CSS_SELECTOR, "table.probs").text
        shots(browser, "row")
        browser.find_element(By.CSS_SELECTOR, "input[name='new_label'][value='1']").click()
        browser.find_element(By.ID, "note").send_keys("The document says it is made of iron.")
        _navigate(browser, browser.find_element(By.ID, "save-correction").click)
        assert "Correction saved" in browser.find_element(By.ID, "saved").text
        shots(browser, "corrected")
        browser.get(server.url + "/report")
        assert "judgelab calibration report" in browser.find_element(By.TAG_NAME, "h1").text
        shots(browser, "report")
    finally:
        server.stop()
    corrections = set_path.parent / "corrections.jsonl"
    (c,) = read_corrections(corrections)
    assert (c.id, c.old_label, c.new_label, c.who) == (WRONG, 0, 1, "reviewer")

    # calibrate --corrections measures against the corrected label, and says so
    fixed = base.parent / "corrected"
    assert main(["calibrate", "--set", str(set_path), "--corrections", str(corrections), "--out", str(fixed),
                 "--no-progress", "--no-plots", "--threads", "1", "--resamples", "50"]) == 0
    assert "labels corrected: 1 by" in capsys.readouterr().out
    meta = read_metrics(fixed / "metrics.json").meta
    assert meta.labels_corrected == 1 and meta.corrections_sha256 and meta.corrections == str(corrections)
    assert "1 label(s) of this task were corrected by" in (fixed / "report.html").read_text(encoding="utf-8")
    assert [r.label for r in load_view_run(fixed).records if r.id == WRONG] == [1]
    # and the gate reports the row whose label changed
    main(["gate", str(base), "--set", str(fixed), "--resamples", "50", "--max-label-changes", "2"])
    out = capsys.readouterr().out
    assert "(labels 1," in out and WRONG in out


def test_two_runs_side_by_side(browser, shots, real_run):
    set_path, base = real_run
    other = base.parent / "base-model"
    assert main(["calibrate", "--model", "gemma-3-270m", "--set", str(set_path), "--out", str(other),
                 "--no-progress", "--no-plots", "--threads", "1", "--resamples", "50"]) == 0
    server = _serve(base, other)
    try:
        browser.get(server.url + "/compare")
        text = browser.find_element(By.TAG_NAME, "main").text
        assert "Paired comparison" in text and "B - A [95% CI]" in text and "McNemar" in text
        assert "Rows whose verdicts differ" in text
        shots(browser, "compare")
        links = browser.find_elements(By.CSS_SELECTOR, "#diff-rows tbody tr[data-href]")
        if links:  # a differing row opens as run A's row page
            _navigate(browser, lambda: links[0].send_keys(Keys.ENTER))
        else:  # the two judges agree on every row: the page says so, and a row page opens by its address
            assert "The two runs' verdicts agree on every shared row." in text
            browser.get(server.url + "/row?run=0&id=eiffel-0")
        assert browser.find_element(By.TAG_NAME, "h1").text.startswith("Row eiffel-")
    finally:
        server.stop()
