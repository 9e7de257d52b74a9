"""Render resources/icons/app.svg to the hicolor PNG sizes under resources/icons/hicolor/.

Run after changing the SVG and commit the PNGs:
    uv run python packaging/render_icons.py
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SVG = ROOT / "resources" / "icons" / "app.svg"
OUT = ROOT / "resources" / "icons" / "hicolor"
SIZES = (16, 22, 24, 32, 48, 64, 128, 256)


def render(svg: Path, out_dir: Path, sizes: tuple[int, ...] = SIZES) -> list[Path]:
    """Write `<out_dir>/<N>x<N>/koroku.png` for each size; the files written."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import QByteArray, QSize, Qt
    from PySide6.QtGui import QGuiApplication, QImage, QPainter
    from PySide6.QtSvg import QSvgRenderer

    _app = QGuiApplication.instance() or QGuiApplication(sys.argv[:1])
    renderer = QSvgRenderer(QByteArray(svg.read_bytes()))
    if not renderer.isValid():
        raise SystemExit(f"not a valid SVG: {svg}")
    written = []
    for size in sizes:
        image = QImage(QSize(size, size), QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        target = out_dir / f"{size}x{size}" / "koroku.png"
        target.parent.mkdir(parents=True, exist_ok=True)
        if not image.save(str(target)):
            raise SystemExit(f"could not write {target}")
        written.append(target)
    return written


def main() -> int:
    """Render every size and list the files."""
    for path in render(SVG, OUT):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main())
