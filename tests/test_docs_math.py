"""Checks across the project (cross-cutting; docs/testing.md).

The site's formulas are MathML written at build time (docs/hooks.py, docs/index.md): every
formula of every page is a <math> element, no raw LaTeX delimiter is left for a script, and no
script is fetched from the network."""


import html
import re
import subprocess
import sys
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent


sys.path.insert(0, str(ROOT / "docs"))


hooks = pytest.importorskip("hooks")


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    out = tmp_path_factory.mktemp("site")
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
                       cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    return {p.relative_to(out).as_posix(): p.read_text(encoding="utf-8") for p in out.rglob("*.html")}


def visible_text(page):
    """The page's text as a reader sees it: code, scripts and MathML's LaTeX annotations removed."""
    page = re.sub(r"<(script|pre|code|annotation)\b[^>]*>.*?</\1>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", " ", page))


def test_every_formula_is_mathml_and_no_delimiter_is_left(site):
    total = 0
    for name, page in site.items():
        marked = re.findall(r'<(span|div) class="arithmatex">(.*?)</\1>', page, flags=re.S)
        assert all(body.lstrip().startswith("<math") for _, body in marked), name
        text = visible_text(page)
        for raw in ("\\(", "\\)", "\\[", "\\]", "$"):
            assert raw not in text, (name, raw, text[max(0, text.find(raw) - 80):text.find(raw) + 80])
        total += sum(body.count("<math ") for _, body in marked)
    # a formula arithmatex did not mark would show its "$" above; and the pages have hundreds
    assert total > 300, total


def test_headings_with_formulas_show_mathml_in_the_navigation(site):
    page = site["cells/index.html"]
    nav = re.search(r"1\.7 Exact one-step Jacobians\s*(<math\b.*?</math>)", page, flags=re.S)
    assert nav is not None
    assert "<msub><mi>J</mi><mi>t</mi></msub>" in nav.group(1)


def test_no_script_from_the_network(site):
    for name, page in site.items():
        assert not re.search(r"<script[^>]+src=\"(https?:)?//", page), name
        assert "mathjax" not in page.lower(), name


def test_tex_to_mathml_pinned_and_rewrites():
    # SαS: one-letter \mathrm stays upright (latex2mathml alone would set it in italics)
    assert hooks.tex_to_mathml(r"\mathrm{S}\alpha\mathrm{S}") == (
        '<math xmlns="http://www.w3.org/1998/Math/MathML" display="inline"><mrow><mtext>S</mtext>'
        "<mi>&#x003B1;</mi><mtext>S</mtext></mrow></math>")
    aligned = hooks.tex_to_mathml(r"\begin{aligned} a &= b \\ c &= d \end{aligned}", display=True)
    assert 'display="block"' in aligned and aligned.count("<mtr>") == 2 and "&</mi>" not in aligned
    out = hooks.render_math('<p><span class="arithmatex">\\(x &lt; 1\\)</span></p>')
    assert "<mo>&#x0003C;</mo>" in out
    assert '<annotation encoding="application/x-tex">x &lt; 1</annotation>' in out


def test_tex_to_mathml_rejects_bad_input():
    with pytest.raises(ValueError, match="x\\^\\{"):
        hooks.tex_to_mathml("x^{")
    with pytest.raises(TypeError, match="tex"):
        hooks.tex_to_mathml(3)
