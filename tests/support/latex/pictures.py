"""`make pictures`: the title page of each manuscript of the layout tests, built with pdfLaTeX
with the default placement and with placement=margin, rendered by pdftoppm at 50 dpi and cut to
the top of the page (down to just below the badge), as docs/img/layout-NAME-PLACEMENT.png."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from pathlib import Path

# run as a script (`make pictures`): tests/ on the path, for the support package
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from support.latex.layout import MANUSCRIPT_LIST, build_variant
from support.latex.pdfcheck import pages_words
from support.latex.texbuild import REPO, SHORT

DPI = 50
SHARE = 0.4  # of the page height, from the top, or down to just below the badge


def main() -> None:
    out = REPO / "docs" / "img"
    with tempfile.TemporaryDirectory(prefix="pith-pictures-") as tmp:
        for manuscript in MANUSCRIPT_LIST:
            for variant in ("title", "margin"):
                build = build_variant(manuscript, "pdflatex", variant, Path(tmp) / variant)
                if not build.ok:
                    raise SystemExit(f"{manuscript.name} {variant}: the build failed")
                pages = pages_words(build.pdf)
                index = next(
                    i
                    for i, (_size, words) in enumerate(pages)
                    if any(manuscript.marker in w for w, _b in words)
                )
                (width, height), words = pages[index]
                badge = [b for w, b in words if w == SHORT]
                bottom = max([height * SHARE] + [b[3] + 30 for b in badge])
                png = out / f"layout-{manuscript.name}-{variant}"
                page = str(index + 1)
                args = ["pdftoppm", "-png", "-gray", "-singlefile", "-r", str(DPI)]
                args += ["-f", page, "-l", page, "-x", "0", "-y", "0"]
                args += ["-W", str(round(width * DPI / 72))]
                args += ["-H", str(round(min(bottom, height) * DPI / 72))]
                subprocess.run([*args, str(build.pdf), str(png)], check=True)
                print(f"{png}.png", file=sys.stderr)


if __name__ == "__main__":
    main()
