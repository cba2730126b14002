"""`jaxlint explain --html`: the page from real reports, in a real headless Chromium.

The browser tests (marker ``browser``) need Debian's chromium and chromium-driver and the
``selenium`` package; they skip, saying what is missing, where those are not installed.
"""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from jaxlint.explain.html import render_html, write_html

ROOT = Path(__file__).resolve().parent.parent
FOUNDING = ROOT / "examples" / "founding.py"
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--window-size=1400,1000"]


def explain(target: str, *args: str, cwd: Path) -> subprocess.CompletedProcess:
    done = subprocess.run([sys.executable, "-m", "jaxlint", "explain", target, *args], cwd=cwd,
                          capture_output=True, text=True, timeout=600)
    assert "Traceback" not in done.stderr, done.stderr
    return done


def real_report(tmp_path: Path, source: Path, qualname: str) -> tuple[dict, Path]:
    """The JSON report and the --html page of one real `jaxlint explain` run (project in tmp_path)."""
    shutil.copy(source, tmp_path / source.name)
    target = f"{source.name}::{qualname}"
    as_json = explain(target, "--format", "json", cwd=tmp_path)
    assert as_json.returncode in (0, 1), as_json.stderr
    page = tmp_path / "out.html"
    as_html = explain(target, "--html", str(page), cwd=tmp_path)
    assert as_html.returncode in (0, 1), as_html.stderr
    return json.loads(as_json.stdout), page


class Rows(HTMLParser):
    """Every source/jaxpr/HLO row of a page: (kind, attributes)."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: list[tuple[str, dict[str, str | None]]] = []
        self.scripts = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.scripts += tag == "script"
        classes = (dict(attrs).get("class") or "").split()
        for kind in ("src", "eq", "hlo"):
            if "ln" in classes and kind in classes:
                self.rows.append((kind, dict(attrs)))


def parse(page: str) -> Rows:
    rows = Rows()
    rows.feed(page)
    return rows


def hand_report(**parts: object) -> dict:
    """A minimal hand-made report, only for the escaping and missing-parts cases."""
    report: dict = {"schema_version": 1,
                    "target": {"path": "/p/m.py", "display_path": "m.py", "qualname": "f", "line": 3,
                               "kind": "plain"},
                    "arguments": {"source": "args-flag", "signature": [{"name": "x", "abstract": "f32[4]"}]},
                    "source": {"path": "/p/m.py", "first_line": 3,
                               "lines": ["def f(x):", "    return x + 1"]},
                    "jaxpr": {"lines": [{"depth": 0, "text": "b:f32[4] = add a 1.0", "primitive": "add",
                                         "line": 4, "id": "e1"}]}}
    report.update(parts)
    return report


def test_every_report_string_is_escaped() -> None:
    evil = "<script>alert('x')</script>&\""
    report = hand_report(
        target={"path": "/p/m.py", "display_path": evil, "qualname": evil, "line": 3, "kind": evil},
        source={"path": "/p/m.py", "first_line": 3, "lines": [f"def f(x):  # {evil}", "    return x"]},
        jaxpr={"lines": [{"depth": 1, "text": evil, "primitive": evil, "line": 4, "id": evil}]},
        hlo={"module_name": evil, "fusions": [],
             "instructions": [{"id": "h1", "name": evil, "opcode": "add", "computation": evil,
                               "fusion": None, "text": evil, "line": 4, "flops": 1},
                              {"id": "h2", "name": "add.2", "opcode": "add", "computation": evil,
                               "fusion": evil, "text": "%add.2 = f32[] add(a, b)", "line": 4, "flops": 1}],
             "duplicates": [{"opcode": evil, "line": 4, "count": 2, "instruction_ids": ["h1", "h2"],
                             "classification": evil, "cause": evil, "extra_flops": 1, "extra_bytes": 0,
                             "explanation": evil}]},
        cost={"compiled": {"flops": 1.0}, "memory": {}, "estimate": {"label": evil}, "notes": [evil]},
        memory={"analysis": {}, "differentiated_loops": [
                    {"path": evil, "line": 4, "trips": 2, "total_bytes": 8,
                     "residuals": [{"shape": evil, "bytes": 8, "made_at": evil}]}],
                "loop_copies": [{"path": "/p/m.py", "line": 4, "trips": None, "total_bytes": None,
                                 "bytes_per_iteration": 4, "copies": [{"shape": evil, "bytes": 4}]}]},
        findings=[{"code": evil, "name": evil, "message": evil, "line": 4, "fix": evil,
                   "cost_before": {evil: 1.0}, "cost_after": None, "eager": None, "verdict": evil}],
        summary=[evil])
    page = render_html(report)
    assert "<script>alert" not in page
    assert "&lt;script&gt;alert(&#x27;x&#x27;)&lt;/script&gt;&amp;&quot;" in page
    parsed = parse(page)
    assert parsed.scripts == 1  # only the page's own script
    assert [kind for kind, _ in parsed.rows] == ["src", "src", "eq", "hlo", "hlo"]


def test_renders_without_hlo_findings_or_cost() -> None:
    report = hand_report(hlo={"error": "compile failed: <XlaRuntimeError>"})
    page = render_html(report)
    assert "No optimized HLO: compile failed: &lt;XlaRuntimeError&gt;" in page
    assert "No findings for this function." in page
    rows = parse(page).rows
    assert [(kind, attrs["data-line"]) for kind, attrs in rows] == [("src", "3"), ("src", "4"), ("eq", "4")]
    # Only the required parts: still a whole page.
    bare = render_html({"schema_version": 1, "target": {"qualname": "g"}})
    assert bare.rstrip().endswith("</html>") and "No jaxpr." in bare


def test_write_html_replaces_the_file_whole(tmp_path: Path) -> None:
    page = tmp_path / "sub" / "page.html"
    write_html(hand_report(), str(page))
    write_html(hand_report(summary=["second run"]), str(page))
    assert "second run" in page.read_text(encoding="utf-8")
    assert sorted(p.name for p in page.parent.iterdir()) == ["page.html"]  # no temporary left
    assert page.stat().st_mode & 0o044  # readable by others, unlike mkstemp's 0600


@pytest.fixture
def browser(tmp_path: Path):
    """Headless Debian Chromium through /usr/bin/chromedriver; Selenium Manager never downloads."""
    webdriver = pytest.importorskip("selenium.webdriver", reason="the selenium package is not installed")
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    driver_path = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    missing = [p for p in (chromium, driver_path) if not os.access(p, os.X_OK)]
    if missing:
        pytest.skip(f"no browser: {', '.join(missing)} missing (apt-get install chromium chromium-driver)")
    options = webdriver.ChromeOptions()
    options.binary_location = chromium
    for flag in [*CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / 'chromium-profile'}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(executable_path=driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def lit(driver) -> dict[str, set[str]]:
    """Ids of the highlighted rows, per kind."""
    found = driver.execute_script(
        "return Array.from(document.querySelectorAll('.ln.hl')).map(e => "
        "[['src', 'eq', 'hlo'].find(k => e.classList.contains(k)), e.id]);")
    return {kind: {i for k, i in found if k == kind} for kind in ("src", "eq", "hlo")}


def hover(driver, css: str) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By

    ActionChains(driver).move_to_element(driver.find_element(By.CSS_SELECTOR, css)).perform()


@pytest.mark.browser
def test_hovering_the_founding_add_lights_its_equations_and_instructions(tmp_path: Path, browser) -> None:
    report, page = real_report(tmp_path, FOUNDING, "my_mapped_function")
    add_line = next(n for n, text in enumerate(FOUNDING.read_text().splitlines(), 1) if "x = x + 1" in text)
    equations = {f"jaxpr-{e['id']}" for e in report["jaxpr"]["lines"] if e["line"] == add_line}
    instructions = {f"hlo-{i['id']}" for i in report["hlo"]["instructions"] if i["line"] == add_line}
    assert equations and instructions  # the add and its two fused copies come from this line
    browser.get(page.as_uri())
    assert browser.execute_script("return document.querySelectorAll('.ln:not([data-line])').length") == 0
    # Self-contained: the page loaded nothing besides itself.
    assert browser.execute_script("return performance.getEntriesByType('resource').length") == 0

    hover(browser, f'.ln.src[data-line="{add_line}"]')
    highlighted = lit(browser)
    browser.save_screenshot(str(tmp_path / "explain-founding.png"))
    assert highlighted == {"src": {f"src-{add_line}"}, "eq": equations, "hlo": instructions}
    # The fusion's copy of the cheap add is marked with its classification.
    duplicate = next(d for d in report["hlo"]["duplicates"] if d["line"] == add_line)
    for ident in duplicate["instruction_ids"]:
        classes = browser.execute_script(f"return document.getElementById('hlo-{ident}').className")
        assert "dup" in classes.split() and duplicate["classification"] in classes.split()

    # Back from an instruction to its source line.
    other = next(i for i in report["hlo"]["instructions"]
                 if i["line"] is not None and i["line"] != add_line)
    hover(browser, f"#hlo-{other['id']}")
    assert lit(browser)["src"] == {f"src-{other['line']}"}


def long_function(folder: Path) -> Path:
    """A real module whose listings are far longer than the panes: one transcendental per line."""
    body = "".join(f"    x = jnp.{('sin', 'cos', 'tanh', 'exp')[i % 4]}(x) * {i + 2}.0\n" for i in range(60))
    path = folder / "long_chain.py"
    path.write_text("import jax\nimport jax.numpy as jnp\n\n\n@jax.jit\ndef long_chain(x):\n"
                    f"{body}    return x\n\n\nlong_chain.lower(jnp.zeros(8))\n", encoding="utf-8")
    return path


def visible_in_pane(driver, ident: str) -> bool:
    return driver.execute_script(
        "var r = document.getElementById(arguments[0]), box = r.closest('.scroll');"
        "var a = r.getBoundingClientRect(), b = box.getBoundingClientRect();"
        "return a.top >= b.top && a.bottom <= b.bottom;", ident)


@pytest.mark.browser
def test_highlights_scroll_into_view_and_follow_the_keyboard(tmp_path: Path, browser) -> None:
    from selenium.webdriver.common.action_chains import ActionChains
    from selenium.webdriver.common.by import By
    from selenium.webdriver.common.keys import Keys

    (tmp_path / "generated").mkdir()
    source = long_function(tmp_path / "generated")
    report, page = real_report(tmp_path, source, "long_chain")
    browser.get(page.as_uri())
    last = max(e["line"] for e in report["jaxpr"]["lines"] if e["line"] is not None)
    first_eq = next(f"jaxpr-{e['id']}" for e in report["jaxpr"]["lines"] if e["line"] == last)
    first_hlo = next(f"hlo-{i['id']}" for i in report["hlo"]["instructions"] if i["line"] == last)
    assert not visible_in_pane(browser, first_eq) and not visible_in_pane(browser, first_hlo)

    # The mouse reaches the last line of the source pane; its equations scroll into view.
    browser.execute_script(f"document.getElementById('src-{last}').scrollIntoView({{block: 'center'}})")
    hover(browser, f"#src-{last}")
    assert first_eq in lit(browser)["eq"] and first_hlo in lit(browser)["hlo"]
    assert visible_in_pane(browser, first_eq) and visible_in_pane(browser, first_hlo)

    # Keyboard: a click focuses a line, arrows move, the focused line stays lit, Escape clears.
    line = last - 1
    browser.find_element(By.ID, f"src-{line}").click()
    ActionChains(browser).send_keys(Keys.ARROW_DOWN).perform()
    assert browser.switch_to.active_element.get_attribute("id") == f"src-{last}"
    ActionChains(browser).move_to_element(browser.find_element(By.TAG_NAME, "h1")).perform()
    assert lit(browser)["src"] == {f"src-{last}"} and first_eq in lit(browser)["eq"]
    ActionChains(browser).send_keys(Keys.ESCAPE).perform()
    assert lit(browser) == {"src": set(), "eq": set(), "hlo": set()}
