"""The bench's ``leaderboard.html`` and ``judgelab view DIR`` on a bench, in a real headless Chromium (Selenium).

A real bench of the tuned and the base embedded judges on 12 starter rows makes the folder. The test opens the
leaderboard file and checks that its table and every figure rendered (an image that failed to decode has
``naturalWidth`` 0), then serves the bench with the viewer and reads its rows page: worst disagreements first,
and the link to the leaderboard. Screenshots go to the test's tmp folder.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from judgelab.bench import BenchSpec, bench
from judgelab.calibration import load_rows
from judgelab.view import ViewServer, create_bench_app

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync", "--window-size=1400,1000")
REPO = Path(__file__).resolve().parents[1]

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    pytest.skip("missing real part: no Chromium: apt-get install chromium chromium-driver "
                "(tests/install_browser.sh does when they are missing)", allow_module_level=True)
webdriver = pytest.importorskip("selenium.webdriver", reason="needs Selenium: pip install 'judgelab[test]'")
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402


@pytest.fixture(scope="module")
def driver():
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="judgelab-bench-chromium-")
    for flag in (*FLAGS, f"--user-data-dir={profile}"):
        opts.add_argument(flag)
    d = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
    d.set_page_load_timeout(60)
    yield d
    d.quit()
    shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture(scope="module")
def bench_dir(tmp_path_factory) -> Path:
    rows = [r for r in load_rows(REPO / "calibration" / "starter.jsonl").rows if r.task == "fact-check"]
    picked = [r for split in ("dev", "test") for label in (0, 1)
              for r in [x for x in rows if x.split == split and x.label == label][:3]]
    folder = tmp_path_factory.mktemp("bench-browser")
    (folder / "set.jsonl").write_text("".join(r.model_dump_json(exclude_none=True) + "\n" for r in picked),
                                      encoding="utf-8")
    spec = BenchSpec.of(["gemma-3-270m-judge", "gemma-3-270m"], [str(folder / "set.jsonl")], out=str(folder / "out"),
                        n_resamples=100)
    assert bench(spec, progress=False).complete
    return folder / "out"


def test_the_leaderboard_page_shows_its_table_and_every_figure(driver, bench_dir, tmp_path):
    driver.get((bench_dir / "leaderboard.html").as_uri())
    assert driver.find_element(By.TAG_NAME, "h1").text == "judgelab bench"
    headers = [th.text for th in driver.find_elements(By.CSS_SELECTOR, "table:first-of-type th")]
    assert headers[:3] == ["judge", "auroc (mean over sets)", "vs best [95%]"]
    images = driver.find_elements(By.TAG_NAME, "img")
    alts = {img.get_attribute("alt") for img in images}
    assert {"Paired difference from the best", "Quality against speed"} <= alts
    assert any(a.startswith("ROC curves") for a in alts)
    widths = [driver.execute_script("return arguments[0].naturalWidth", img) for img in images]
    assert all(w > 100 for w in widths), widths
    assert "**best**" not in driver.page_source and "<b>best</b>" in driver.page_source
    driver.save_screenshot(str(tmp_path / "bench-leaderboard.png"))


def test_view_on_a_bench_lists_the_worst_disagreements_first(driver, bench_dir, tmp_path):
    server = ViewServer(create_bench_app(bench_dir), host="127.0.0.1", port=0).start()
    try:
        driver.get(f"{server.url}/?show=all")
        table = driver.find_elements(By.TAG_NAME, "table")[0]
        cells = [[td.text for td in tr.find_elements(By.TAG_NAME, "td")] for tr in table.find_elements(By.TAG_NAME, "tr")[1:]]
        assert len(cells) == 12
        wrong = [int(c[6].split(" of ")[0]) for c in cells]
        assert wrong == sorted(wrong, reverse=True) and wrong[0] >= 1
        driver.save_screenshot(str(tmp_path / "bench-view.png"))
        driver.get(f"{server.url}/?show=wrong")
        shown = driver.find_elements(By.TAG_NAME, "table")[0].find_elements(By.TAG_NAME, "tr")[1:]
        assert len(shown) == sum(1 for w in wrong if w)
        driver.find_element(By.LINK_TEXT, "leaderboard").click()
        assert driver.find_element(By.TAG_NAME, "h1").text == "judgelab bench"
    finally:
        server.stop()
