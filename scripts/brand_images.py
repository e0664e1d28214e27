"""Draw MCP Gateway's brand images into custom_components/mcp_gateway/brand/.

Home Assistant 2026.3 and later serve a custom integration's own `brand/` folder through the
brands proxy; older releases ignore it. The mark: a rounded blue tile holding one endpoint node
wired to three backend nodes. The logo adds the words "MCP Gateway".

Every image is drawn at 4x its size and reduced with LANCZOS, so edges are antialiased. Nothing
depends on the clock or on the machine's fonts: the text uses the font bundled inside Pillow
(pinned through Home Assistant), so re-running this reproduces the committed bytes
(tests/test_brand.py checks that).

Usage: scripts/brand-images [OUT_DIR]
"""

from __future__ import annotations

from dataclasses import dataclass
import math
from pathlib import Path
import sys

from PIL import Image, ImageDraw, ImageFont

ROOT = Path(__file__).resolve().parent.parent
BRAND_DIR = ROOT / "custom_components" / "mcp_gateway" / "brand"

SUPERSAMPLE = 4
ICON_SIZE = 256
LOGO_HEIGHT = 128
WORDS = "MCP Gateway"
GAP = 0.20  # between the mark and the words, as a share of the logo's height

type RGBA = tuple[int, int, int, int]


@dataclass(frozen=True)
class Palette:
    """Colours of one theme variant."""

    tile: RGBA
    glyph: RGBA
    text: RGBA


# Light backgrounds: HA's blue tile with white wiring and near-black words.
LIGHT = Palette(tile=(24, 188, 242, 255), glyph=(255, 255, 255, 255), text=(33, 37, 41, 255))
# Dark backgrounds: a deeper blue glares less beside HA's dark cards; the words turn light.
DARK = Palette(tile=(14, 143, 196, 255), glyph=(255, 255, 255, 255), text=(241, 243, 245, 255))


class FontMissingError(RuntimeError):
    """Pillow cannot give the scalable font the logo's words need."""


def _font(size: int) -> ImageFont.FreeTypeFont:
    """Pillow's bundled Aileron Regular, which travels with the Pillow wheel itself."""
    font = ImageFont.load_default(size=size)
    if not isinstance(font, ImageFont.FreeTypeFont):
        # Without FreeType Pillow falls back to a fixed bitmap font that ignores the size.
        raise FontMissingError(
            "Pillow was built without FreeType, so its scalable default font "
            "(Aileron Regular, Pillow >= 10.1) is missing; install a Pillow wheel with FreeType"
        )
    return font


def _mark(size: int, palette: Palette) -> Image.Image:
    """The tile with its four nodes, drawn at `size` pixels (already supersampled)."""
    image = Image.new("RGBA", (size, size), (0, 0, 0, 0))
    draw = ImageDraw.Draw(image)
    unit = size / 1024
    draw.rounded_rectangle((0, 0, size - 1, size - 1), radius=round(228 * unit), fill=palette.tile)

    spoke = 316 * unit
    hub_radius = 136 * unit
    leaf_radius = 92 * unit
    # Up, lower right, lower left: a Y whose box is centred in the tile.
    angles = (-90.0, 30.0, 150.0)
    top = spoke + leaf_radius
    bottom = spoke * math.sin(math.radians(30)) + leaf_radius
    cx = size / 2
    cy = size / 2 + (top - bottom) / 2
    leaves = [
        (cx + spoke * math.cos(math.radians(a)), cy + spoke * math.sin(math.radians(a)))
        for a in angles
    ]
    for x, y in leaves:
        draw.line((cx, cy, x, y), fill=palette.glyph, width=round(64 * unit))
    for x, y in leaves:
        _disc(draw, x, y, leaf_radius, palette.glyph)
    _disc(draw, cx, cy, hub_radius, palette.glyph)
    # A tile-coloured core marks the hub as the one endpoint the backends meet at.
    _disc(draw, cx, cy, 56 * unit, palette.tile)
    return image


def _disc(draw: ImageDraw.ImageDraw, x: float, y: float, radius: float, fill: RGBA) -> None:
    draw.ellipse((x - radius, y - radius, x + radius, y + radius), fill=fill)


def _reduce(image: Image.Image) -> Image.Image:
    width, height = image.size
    return image.resize((width // SUPERSAMPLE, height // SUPERSAMPLE), Image.Resampling.LANCZOS)


def icon(size: int, palette: Palette) -> Image.Image:
    """The square mark, `size` pixels wide."""
    return _reduce(_mark(size * SUPERSAMPLE, palette))


def _words_layout(big: int) -> tuple[ImageFont.FreeTypeFont, int, tuple[int, int, int, int]]:
    """Font, stroke and ink box of the words for a supersampled logo `big` pixels tall."""
    font = _font(round(big * 0.40))
    stroke = max(1, round(big * 0.008))  # a hair of stroke gives Aileron Regular some weight
    return font, stroke, font.getbbox(WORDS, stroke_width=stroke)


def _logo_width() -> int:
    """The 1x logo's width; the @2x is exactly twice it, as HA's naming promises."""
    big = LOGO_HEIGHT * SUPERSAMPLE
    _, _, (left, _, right, _) = _words_layout(big)
    # Two spare pixels absorb the words growing a little more than twice at @2x (hinting).
    return math.ceil((big * (1 + GAP) + right - left) / SUPERSAMPLE) + 2


def logo(scale: int, palette: Palette) -> Image.Image:
    """The mark with the words beside it: LOGO_HEIGHT * scale pixels tall."""
    big = LOGO_HEIGHT * scale * SUPERSAMPLE
    font, stroke, (left, top, right, bottom) = _words_layout(big)
    width = _logo_width() * scale * SUPERSAMPLE
    x = big + round(big * GAP) - left
    if x + right > width:
        raise ValueError(f"the words overflow the {scale}x logo")
    image = Image.new("RGBA", (width, big), (0, 0, 0, 0))
    image.alpha_composite(_mark(big, palette))
    draw = ImageDraw.Draw(image)
    # Centre the glyphs' ink box vertically on the mark.
    y = (big - (bottom - top)) / 2 - top
    draw.text(
        (x, y), WORDS, font=font, fill=palette.text, stroke_width=stroke, stroke_fill=palette.text
    )
    return _reduce(image)


def images() -> dict[str, Image.Image]:
    """Every brand image by file name, in HA's naming."""
    drawn: dict[str, Image.Image] = {}
    for prefix, palette in (("", LIGHT), ("dark_", DARK)):
        drawn[f"{prefix}icon.png"] = icon(ICON_SIZE, palette)
        drawn[f"{prefix}icon@2x.png"] = icon(ICON_SIZE * 2, palette)
        drawn[f"{prefix}logo.png"] = logo(1, palette)
        drawn[f"{prefix}logo@2x.png"] = logo(2, palette)
    return drawn


def main(out_dir: Path = BRAND_DIR) -> list[Path]:
    """Write every image into `out_dir` and return the paths written."""
    out_dir.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, image in images().items():
        path = out_dir / name
        image.save(path, format="PNG", optimize=True)
        written.append(path)
    return written


if __name__ == "__main__":
    try:
        paths = main(Path(sys.argv[1]) if len(sys.argv) > 1 else BRAND_DIR)
    except FontMissingError as err:
        sys.exit(f"brand-images: {err}")
    for written_path in paths:
        print(written_path.relative_to(ROOT) if written_path.is_relative_to(ROOT) else written_path)
