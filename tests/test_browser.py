"""What a reviewer and a student see, checked in headless Chromium (Debian's ``chromium`` and
``chromium-driver``, installed by ``make test``; no browser download): the reproduction report
renders every artifact with its figure and the cross-family section (figure, table, link), and
JupyterLab runs ``notebooks/00_vcube.ipynb``."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from causal_lab import paths, report

ROOT = paths.repo_root()
CHROMIUM, DRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")


@pytest.fixture(scope="module")
def browser():
    if not (CHROMIUM.exists() and DRIVER.exists()):
        pytest.fail("Debian's chromium and chromium-driver are missing: `make test` installs them")
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1400,1000"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(str(DRIVER)), options=options)
    yield driver
    driver.quit()


def test_report_renders_every_artifact_and_every_image(browser):
    target = report.build()
    arts = report.artifacts()
    browser.get((target / "index.html").as_uri())
    sections = browser.find_elements("css selector", "section.artifact")
    assert [s.get_attribute("id") for s in sections] == [a.notebook for a in arts]
    assert all(s.find_element("css selector", "h3").text for s in sections)
    times = [s.find_element("css selector", "p.runtime").text for s in sections]
    assert all(re.search(r"default scale [\d,]+ s \(20\d\d-\d\d-\d\d\)", t) for t in times), times
    images = browser.execute_script(
        "return Array.from(document.images).map(i => [i.getAttribute('src'), i.complete && i.naturalWidth > 0])")
    cross = browser.find_elements("css selector", f"section.cross[id='{report.CROSS_FAMILY}']")
    assert len(cross) == 1  # notebook 90: its figure, its table and the link to the notebook
    assert cross[0].find_elements("css selector", "div.table table")
    assert cross[0].find_elements("css selector", f"a[href='notebooks/{report.CROSS_FAMILY}.html']")
    assert len(images) == len(arts) + 1
    assert [src for src, loaded in images if not loaded] == []
    links = browser.execute_script("return Array.from(document.links).map(a => a.href)")
    missing = [h for h in links if h.startswith("file:") and not Path(h[7:].split("#")[0]).exists()]
    assert missing == []
    browser.save_screenshot(str(target / "screenshot.png"))


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def lab(tmp_path):
    """A JupyterLab server (as root too) on a free local port, serving a copy of notebook 00."""
    shutil.copy(ROOT / "notebooks" / "00_vcube.ipynb", tmp_path)
    port, token = _free_port(), "causal-lab-test"
    env = {**os.environ, "CAUSAL_LAB_SCALE": "smoke"}
    server = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", f"--port={port}", "--ip=127.0.0.1",
         f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={tmp_path}", "--allow-root",
         "--LabApp.expose_app_in_browser=True"],
        env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 60
    while time.time() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.5)
    else:
        server.kill()
        pytest.fail("JupyterLab did not start within 60 s")
    yield f"http://127.0.0.1:{port}/lab/tree/00_vcube.ipynb?token={token}"
    server.terminate()
    server.wait(timeout=30)


def test_jupyterlab_runs_notebook_00_and_shows_its_figure(browser, lab):
    from selenium.webdriver.support.ui import WebDriverWait

    browser.get(lab)
    wait = WebDriverWait(browser, 120, poll_frequency=1)
    # the notebook panel is open and its kernel is idle
    wait.until(lambda b: b.execute_script(
        "const a = window.jupyterapp; const w = a && a.shell.currentWidget;"
        "return !!(w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel"
        " && w.sessionContext.session.kernel.status === 'idle');"))
    browser.execute_script("window.jupyterapp.commands.execute('notebook:run-all-cells');")
    wait.until(lambda b: b.execute_script(
        "return document.querySelectorAll('.jp-OutputArea-output img').length > 0"
        " || document.querySelectorAll('.jp-OutputArea-output[data-mime-type=\"application/vnd.jupyter.stderr\"]"
        " .jp-RenderedText').length > 0 && /Error/.test(document.body.innerText);"))
    errors = browser.execute_script(
        "return Array.from(document.querySelectorAll('.jp-OutputArea-output')).map(e => e.innerText)"
        ".filter(t => /Traceback|Error:/.test(t));")
    assert errors == []
    assert browser.execute_script("return document.querySelectorAll('.jp-OutputArea-output img').length") > 0
