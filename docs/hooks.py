"""MkDocs hooks for the lwsim site (run by ``mkdocs build``; not part of the package).

- The committed figures (``figures/*.png``) live outside ``docs/``; they are added to the site as
  ``figures/<name>.png`` so that ``docs/gallery.md`` can show them without copies in ``docs/``.
- Pages written by other parts of the project (fidelity.md, analyze.md, cluster.md) join the
  navigation only when they exist, so ``mkdocs build --strict`` passes before and after.
"""
from __future__ import annotations

import pathlib

from mkdocs.structure.files import File

ROOT = pathlib.Path(__file__).resolve().parent.parent
OPTIONAL_PAGES = [("Fidelity to the authors' code", "fidelity.md"),
                  ("Analysing your own model", "analyze.md"),
                  ("Running on a cluster", "cluster.md")]


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
