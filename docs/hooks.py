"""MkDocs hooks for the lwsim site (run by ``mkdocs build``; not part of the package).

- The committed figures (``figures/*.png``) live outside ``docs/``; they are added to the site as
  ``figures/<name>.png`` so that ``docs/gallery.md`` can show them without copies in ``docs/``.
- Pages written by other parts of the project (fidelity.md, analyze.md, cluster.md) join the
  navigation only when they exist, so ``mkdocs build --strict`` passes before and after.
- Formulas are rendered when the site is built: ``pymdownx.arithmatex`` (generic mode) marks
  every ``$…$`` and ``$$…$$`` as ``<span|div class="arithmatex">\\(…\\)</…>`` and
  :func:`render_math` replaces each with MathML (latex2mathml), which browsers display natively.
  No script and no network are needed to read the site (a laptop offline, an air-gapped login
  node); a formula the converter cannot read fails the build instead of showing raw LaTeX.
"""
from __future__ import annotations

import html
import pathlib
import re

from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPTIONAL_PAGES = [("Fidelity to the authors' code", "fidelity.md"),
                  ("Analysing your own model", "analyze.md"),
                  ("Running on a cluster", "cluster.md")]


MATH = re.compile(r'<(span|div) class="arithmatex">\s*\\([(\[])(.*?)\\[)\]]\s*</\1>', re.S)
# LaTeX the converter renders wrongly, written with what it renders right (same look):
# "aligned" loses its alignment (split is the same table), \mathrm of one letter comes out italic
REWRITES = [(re.compile(r"\\(begin|end)\{aligned\}"), r"\\\1{split}"),
            (re.compile(r"\\mathrm\{([A-Za-z])\}"), r"\\text{\1}")]


def tex_to_mathml(tex, display=False):
    """MathML (``<math …>…</math>``) of the LaTeX ``tex``; ValueError naming the formula when the
    converter cannot read it (the build then stops rather than shipping raw LaTeX)."""
    from latex2mathml.converter import convert
    if not isinstance(tex, str):
        raise TypeError(f"tex must be a str, got {type(tex).__name__}")
    for pattern, repl in REWRITES:
        tex = pattern.sub(repl, tex)
    try:
        return convert(tex.strip(), display="block" if display else "inline")
    except Exception as exc:                     # the converter raises many kinds
        raise ValueError(f"cannot render the formula {tex!r}: {type(exc).__name__}: {exc}") from None


def render_math(page_html):
    """``page_html`` with every arithmatex formula replaced by its MathML, the LaTeX source kept
    as the ``<annotation>`` screen readers and copy-paste use."""
    def annotated(tex, display):
        mathml = tex_to_mathml(tex, display=display)
        src = html.escape(tex.strip(), quote=False)
        return re.sub(r"(<math[^>]*>)(.*)(</math>)",
                      lambda k: f"{k.group(1)}<semantics><mrow>{k.group(2)}</mrow>"
                                f'<annotation encoding="application/x-tex">{src}</annotation>'
                                f"</semantics>{k.group(3)}", mathml, count=1, flags=re.S)

    def one(m):
        tag, opener, tex = m.group(1), m.group(2), html.unescape(m.group(3))
        # "$$ a $$" and "$$ b $$" on consecutive lines reach us as one block "a $$ $$ b"
        parts = re.split(r"\$\$\s*\$\$", tex) if opener == "[" else [tex]
        return f'<{tag} class="arithmatex">' + "".join(annotated(p, opener == "[") for p in parts) + f"</{tag}>"
    return MATH.sub(one, page_html)


INLINE = re.compile(r"\\\((.*?)\\\)", re.S)


def _toc_math(items):
    """Headings with formulas: the navigation's copy of each title is plain text with the
    ``\\(…\\)`` delimiters left in; give it the same MathML as the heading."""
    for item in items:
        if "\\(" in item.title:
            item.title = INLINE.sub(lambda m: tex_to_mathml(html.unescape(m.group(1))), item.title)
        _toc_math(item.children)


def on_page_content(page_html, page, config, files):
    _toc_math(page.toc)
    return render_math(page_html)


def on_config(config):
    docs = pathlib.Path(config["docs_dir"])
    nav = config.get("nav") or []
    listed = {next(iter(e.values())) for e in nav if isinstance(e, dict)}
    # insert before the generated/reference pages at the end
    at = next((i for i, e in enumerate(nav) if isinstance(e, dict)
               and next(iter(e.values())) == "derivations.md"), len(nav))
    for title, page in OPTIONAL_PAGES:
        if (docs / page).exists() and page not in listed:
            nav.insert(at, {title: page})
            at += 1
    config["nav"] = nav
    return config


def on_files(files, config):
    for png in sorted((ROOT / "figures").glob("*.png")):
        files.append(File.generated(config, f"figures/{png.name}", abs_src_path=str(png)))
    return files
