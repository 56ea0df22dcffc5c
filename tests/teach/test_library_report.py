"""The whole library and gallery, read by a person: readable traces, and the HTML report in a real browser.

The library is proved once for the module. The browser test needs headless Chromium (the Debian
package ``chromium``) and skips cleanly without it.
"""

import re
import shutil
import subprocess
import xml.dom.minidom
from html import unescape

import pytest
from teach_helpers import INTERNAL, balanced

from symattn.theorems import load_library, prove

MATRIX_OPEN = re.compile(r"Matrix\(\[")
HALF_OPEN = re.compile(r"\[-?[\d.]+, -?[\d.]+\)")


@pytest.fixture(scope="module")
def results():
    library = load_library()
    proved = [prove(th) for th in library.values() if th.expect == "proved"]
    gallery = [prove(th) for th in library.values() if th.expect != "proved"]
    return proved, gallery


def test_every_explain_has_no_internal_names_and_closes_every_bracket(results):
    proved, gallery = results
    seen = 0
    for res in proved + gallery:
        for v in res.verdicts:
            out = v.explain()
            seen += 1
            assert not INTERNAL.search(out), (res.theorem.name, INTERNAL.search(out).group(), out)
            assert not MATRIX_OPEN.search(out), (res.theorem.name, out)
            for line in out.splitlines():
                # a half-open interval of numbers, [88, 89), is notation, not an open bracket
                assert balanced(HALF_OPEN.sub("", line)), (res.theorem.name, line)
    assert seen >= len(proved) + len(gallery)


def test_every_library_result_renders_as_markdown_and_html(results):
    proved, gallery = results
    for res in proved + gallery:
        md, html = res._repr_markdown_(), res._repr_html_()
        assert res.theorem.name in md and res.theorem.name in html
        assert "merror" not in html
        for frag in re.findall(r"<math.*?</math>", html, flags=re.S):
            xml.dom.minidom.parseString(unescape(frag))


@pytest.fixture(scope="module")
def report_dir(results, tmp_path_factory):
    from symattn.derivation import check_statements
    from symattn.derivation.latex import parse_latex
    from symattn.teach.report import write_report

    here = __import__("pathlib").Path(__file__).resolve().parents[2] / "examples"
    reports = []
    for name in ("seed000_multihead_corrupted.tex",):
        path = here / name
        if path.exists():
            reports.append(check_statements(parse_latex(path.read_text()), source=name, budget=10.0))
    out = tmp_path_factory.mktemp("report")
    proved, gallery = results
    write_report(out, proved, gallery, reports, version="test")
    return out, proved, gallery, reports


def test_report_is_self_contained_and_its_mathml_parses(report_dir):
    out, proved, gallery, _ = report_dir
    html = (out / "index.html").read_text(encoding="utf-8")
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/", "")
    assert "https://" not in html
    fragments = re.findall(r"<math.*?</math>", html, flags=re.S)
    assert len(fragments) >= len(proved) + len(gallery)
    for frag in fragments:
        xml.dom.minidom.parseString(unescape(frag))  # a MathML parse error fails here
    for svg in re.findall(r"<svg.*?</svg>", html, flags=re.S):
        xml.dom.minidom.parseString(svg)


def _chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def _run_browser(args, timeout=90, tries=3):
    """Run headless Chromium once, with a profile of its own; a run that hangs (headless Chromium
    now and then never exits after a screenshot) is killed with its children and tried again.
    Three hangs in a row mean no usable browser on this machine: the test is skipped, not passed."""
    import os
    import signal
    import tempfile

    for _ in range(tries):
        with tempfile.TemporaryDirectory(prefix="symattn-chromium-") as profile:
            proc = subprocess.Popen([_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                                     "--hide-scrollbars", "--no-first-run", f"--user-data-dir={profile}", *args],
                                    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                    start_new_session=True)
            try:
                out, err = proc.communicate(timeout=timeout)
                return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
    pytest.skip(f"headless Chromium hung {tries} times (over {timeout} s each) on {args[-1]}")


def test_report_renders_in_headless_chromium(report_dir, tmp_path):
    if _chromium() is None:
        pytest.skip("headless Chromium is not installed (Debian package chromium)")
    out, proved, gallery, reports = report_dir
    url = (out / "index.html").as_uri()
    dom = _run_browser(["--dump-dom", url]).stdout
    assert "<body" in dom, "the browser produced no document"
    body = re.sub(r"<[^>]+>", " ", dom[dom.index("<body"):])
    assert len(body.split()) > 500, "blank page"
    for res in proved + gallery:
        name = res.theorem.name
        section = re.search(rf"<section class=\"theorem\" id=\"{name}\">(.*?)</section>", dom, flags=re.S)
        assert section, f"theorem {name} is missing from the rendered page"
        assert res.status in section.group(1)
    assert "<merror" not in dom and "parsererror" not in dom
    assert dom.count("<math") >= len(proved) + len(gallery)
    for rep in reports:
        assert rep.source in dom
    # a screenshot of the page and of an empty page: the report must not look empty
    shot, blank = tmp_path / "report.png", tmp_path / "blank.png"
    empty = tmp_path / "empty.html"
    empty.write_text("<!DOCTYPE html><html><body></body></html>")
    _run_browser([f"--screenshot={shot}", "--window-size=1200,1600", url])
    _run_browser([f"--screenshot={blank}", "--window-size=1200,1600", empty.as_uri()])
    assert shot.exists() and blank.exists()
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert shot.stat().st_size > 5 * blank.stat().st_size, "the screenshot is as empty as a blank page"


# --- nothing wider than its container, at 1,400 and 400 px ---------------------------

# Injected into a copy of the page: after load, open every <details>, then find every element of the
# gallery and derivation parts that is wider than its container (a block whose content overflows it,
# scrollWidth > clientWidth, or an element whose right edge passes its section's), and write what it
# found into <pre id="overflow-report"> for --dump-dom. Headless Chromium lays a page out at least
# 500 px wide, so a narrower width is set on the root element: the page is laid out as in that window.
MEASURE = """
window.addEventListener("load", function () {
  var want = parseInt(document.documentElement.dataset.width || "0");
  if (want && window.innerWidth > want) document.documentElement.style.width = want + "px";
  document.querySelectorAll("details").forEach(function (d) { d.open = true; });
  var found = [], checked = 0, parts = document.querySelectorAll(".part");
  function name(e) {
    var id = e.closest("[id]");
    return e.tagName.toLowerCase() + (typeof e.className === "string" && e.className ? "." + e.className : "")
      + " in #" + (id ? id.id : "?");
  }
  parts.forEach(function (part) {
    part.querySelectorAll("*").forEach(function (e) {
      var r = e.getBoundingClientRect();
      if (r.width === 0 && r.height === 0) return;
      checked += 1;
      var box = (e.closest("section") || part).getBoundingClientRect();
      var block = e.namespaceURI === "http://www.w3.org/1999/xhtml" && getComputedStyle(e).display !== "inline";
      if (block && e.clientWidth > 0 && e.scrollWidth > e.clientWidth + 1)
        found.push(name(e) + ": scrollWidth " + e.scrollWidth + " > clientWidth " + e.clientWidth);
      else if (r.right > box.right + 1)
        found.push(name(e) + ": right edge " + Math.round(r.right) + " beyond its section's " + Math.round(box.right));
    });
  });
  var pre = document.createElement("pre");
  pre.id = "overflow-report";
  pre.textContent = JSON.stringify({width: Math.round(document.documentElement.getBoundingClientRect().width),
                                    parts: parts.length, checked: checked, count: found.length,
                                    found: found.slice(0, 300)});
  document.body.appendChild(pre);
});
"""


def _overflow(page: str, width: int, where):
    """What the injected script found in ``page`` laid out ``width`` px wide (a dict)."""
    import json

    probe = where / f"probe{width}.html"
    probe.write_text(page.replace("<html lang='en'>", f"<html lang='en' data-width='{width}'>", 1)
                     .replace("</body>", f"<script>{MEASURE}</script></body>"), encoding="utf-8")
    dom = _run_browser([f"--window-size={max(width, 500)},900", "--virtual-time-budget=5000", "--dump-dom",
                        probe.as_uri()]).stdout
    found = re.search(r'<pre id="overflow-report">(.*?)</pre>', dom, flags=re.S)
    assert found, f"the measuring script wrote no report at {width} px"
    return json.loads(unescape(found.group(1)))


@pytest.mark.parametrize("width", [1400, 400])
def test_no_element_of_the_gallery_or_the_derivations_is_wider_than_its_container(report_dir, tmp_path, width):
    if _chromium() is None:
        pytest.skip("headless Chromium is not installed (Debian package chromium)")
    out, proved, gallery, reports = report_dir
    page = (out / "index.html").read_text(encoding="utf-8")
    got = _overflow(page, width, tmp_path)
    assert got["width"] == width and got["parts"] == 2
    assert got["checked"] > 50 * len(gallery), got  # the parts were laid out and measured
    assert got["count"] == 0, "\n".join(got["found"])
    shot = tmp_path / f"report-{width}.png"
    _run_browser([f"--screenshot={shot}", f"--window-size={width},1600", (tmp_path / f"probe{width}.html").as_uri()])
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 20_000


def test_the_overflow_check_catches_an_element_wider_than_its_section(report_dir, tmp_path):
    """The check can fail: a fixed-width block in a gallery section and a scroll box in a derivation
    (what the report had, a claim in <div style='overflow-x:auto'>) are found at 400 px."""
    if _chromium() is None:
        pytest.skip("headless Chromium is not installed (Debian package chromium)")
    out, _, gallery, reports = report_dir
    page = (out / "index.html").read_text(encoding="utf-8")
    first = gallery[0].theorem.name
    marker = f"<section class='theorem' id='{first}'>"
    assert marker in page and "<section class='derivation'" in page
    page = page.replace(marker, marker + "<div class='wide' style='width:900px'>a fixed 900 px block</div>", 1)
    page = page.replace("<ol class='steps'>", "<div class='scroller' style='overflow-x:auto'><span style="
                        "'white-space:nowrap'>" + "Softmax(KᵀQ/√d_k) " * 20 + "</span></div><ol class='steps'>", 1)
    got = _overflow(page, 400, tmp_path)
    found = "\n".join(got["found"])
    assert f"div.wide in #{first}: right edge" in found, found
    assert "div.scroller in #derivation-" in found and "scrollWidth" in found, found
    assert any(f.startswith("div.scroller") for f in _overflow(page, 1400, tmp_path)["found"])  # wide at 1,400 too


# --- the library from Python: symattn.library(), symattn.theorem(NAME) ------------


def test_the_library_and_one_theorem_are_public_and_are_the_registry():
    import symattn as sa
    from symattn.theorems import REGISTRY, load_library

    lib = sa.library()
    assert lib == load_library() and lib is not REGISTRY  # a copy: changing it changes no registry
    assert "column_row_transpose" in lib and "mistake_transpose_keeps_order" in lib
    assert all(sa.theorem(name) is th for name, th in lib.items())
    assert isinstance(sa.theorem("column_row_transpose"), sa.Theorem)


def test_a_misspelt_theorem_name_is_an_error_naming_the_closest():
    import pytest

    import symattn as sa

    with pytest.raises(sa.UnknownTheoremError, match="did you mean column_row_transpose"):
        sa.theorem("column_row_transpos")
    with pytest.raises(LookupError, match="no theorem named 'zzz' in the library; symattn.library"):
        sa.theorem("zzz")


def test_a_theorem_shows_itself_as_text_and_as_html_with_its_claims():
    import xml.dom.minidom

    import symattn as sa

    th = sa.theorem("mistake_transpose_keeps_order")
    said = str(th)
    assert said.startswith("mistake_transpose_keeps_order (expected: refuted)\n  (A B)ᵀ = Aᵀ Bᵀ")
    assert "claim 1: " in said and "why: " in said
    html = th._repr_html_()
    xml.dom.minidom.parseString(html.replace("&InvisibleTimes;", "&#8290;"))  # well formed
    assert html.count("class='equation") == len(th.claims()) and "expected: refuted" in html
