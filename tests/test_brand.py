"""The brand images HA >= 2026.3 serves from the integration's own brand/ folder.

They must have the sizes HA's brand rules name, keep transparent corners, and be exactly what
scripts/brand_images.py draws, so the committed files cannot drift from the script.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
import runpy
import sys
from types import ModuleType

from PIL import Image, ImageFont
import pytest

from custom_components import mcp_gateway

REPO = Path(mcp_gateway.__file__).resolve().parent.parent.parent
BRAND = Path(mcp_gateway.__file__).resolve().parent / "brand"
SCRIPT = REPO / "scripts" / "brand_images.py"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

ICONS = {"icon.png": 256, "icon@2x.png": 512, "dark_icon.png": 256, "dark_icon@2x.png": 512}
LOGOS = ("logo.png", "dark_logo.png")
EXPECTED = {*ICONS, *LOGOS, *(name.replace(".png", "@2x.png") for name in LOGOS)}


def _load_script() -> ModuleType:
    spec = importlib.util.spec_from_file_location("brand_images", SCRIPT)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    # dataclasses resolve the module through sys.modules while the class body runs.
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


brand_images = _load_script()


@pytest.fixture
def bitmap_font_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pillow as built without FreeType: load_default gives the fixed bitmap font."""
    bitmap = ImageFont.load_default_imagefont()
    monkeypatch.setattr(ImageFont, "load_default", lambda size=None: bitmap)


def _open(name: str) -> Image.Image:
    image = Image.open(BRAND / name)
    image.load()
    return image


def test_brand_folder_holds_exactly_the_expected_images() -> None:
    """No image missing and nothing else that HA's brands proxy would not know."""
    assert {path.name for path in BRAND.iterdir()} == EXPECTED


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_png_rgba_with_transparent_corners(name: str) -> None:
    """A real PNG, RGBA, with its four corners see-through and an opaque centre of the mark."""
    assert (BRAND / name).read_bytes()[:8] == PNG_SIGNATURE
    image = _open(name)
    assert image.format == "PNG"
    assert image.mode == "RGBA"
    width, height = image.size
    for corner in ((0, 0), (width - 1, 0), (0, height - 1), (width - 1, height - 1)):
        assert image.getpixel(corner)[3] == 0, corner
    # The mark's tile always fills the left square, so its middle is fully opaque.
    assert image.getpixel((height // 2, height // 2))[3] == 255


@pytest.mark.parametrize(("name", "size"), sorted(ICONS.items()))
def test_icon_is_square_of_documented_size(name: str, size: int) -> None:
    """Each icon is square, of its documented size."""
    assert _open(name).size == (size, size)


@pytest.mark.parametrize("name", LOGOS)
def test_logo_sizes(name: str) -> None:
    """Shortest side 128-256 px; the @2x exactly doubles both sides."""
    logo = _open(name)
    double = _open(name.replace(".png", "@2x.png"))
    assert 128 <= min(logo.size) <= 256
    assert logo.width > logo.height  # the words sit beside the mark
    assert double.size == (logo.width * 2, logo.height * 2)


def _words_luminance(name: str) -> float:
    """Mean luminance of the opaque ink right of the mark (the words)."""
    image = _open(name)
    words = image.crop((image.height, 0, image.width, image.height))
    # Raw RGBA bytes: Pillow 12 deprecates getdata(), and the 11.1 of 2025.4 lacks its successor.
    raw = words.convert("RGBA").tobytes()
    inked = [(raw[i], raw[i + 1], raw[i + 2]) for i in range(0, len(raw), 4) if raw[i + 3] == 255]
    assert len(inked) > 500, name  # the words were drawn at all
    return sum(0.2126 * r + 0.7152 * g + 0.0722 * b for r, g, b in inked) / len(inked)


def test_logo_words_contrast_with_their_background() -> None:
    """Dark words for light backgrounds, light words for dark ones."""
    for suffix in (".png", "@2x.png"):
        assert _words_luminance(f"logo{suffix}") < 80
        assert _words_luminance(f"dark_logo{suffix}") > 200


def test_icons_differ_between_themes() -> None:
    """The dark variant is its own drawing, not a copy of the light one."""
    assert _open("icon.png").tobytes() != _open("dark_icon.png").tobytes()


def test_generator_reproduces_the_committed_files(tmp_path: Path) -> None:
    """Re-drawing gives byte-identical files; run scripts/brand-images if this fails."""
    written = brand_images.main(tmp_path)
    assert {path.name for path in written} == EXPECTED
    for path in written:
        assert path.read_bytes() == (BRAND / path.name).read_bytes(), (
            f"{path.name} differs from what the script draws: run scripts/brand-images"
        )


def test_missing_font_fails_clearly(bitmap_font_only: None) -> None:
    """Without FreeType the image script fails with a clear error."""
    with pytest.raises(brand_images.FontMissingError, match="without FreeType"):
        brand_images.logo(1, brand_images.LIGHT)


def test_command_line_reports_a_missing_font(
    bitmap_font_only: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The script exits with one readable line instead of a traceback."""
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), str(tmp_path)])
    with pytest.raises(SystemExit) as exit_info:
        runpy.run_path(str(SCRIPT), run_name="__main__")
    assert str(exit_info.value.code).startswith("brand-images: Pillow was built without FreeType")


def test_command_line_writes_into_the_given_folder(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The image script writes every brand image into the given folder."""
    out = tmp_path / "out"
    monkeypatch.setattr(sys, "argv", [str(SCRIPT), str(out)])
    runpy.run_path(str(SCRIPT), run_name="__main__")
    assert {path.name for path in out.iterdir()} == EXPECTED
    assert sorted(capsys.readouterr().out.split()) == sorted(str(out / name) for name in EXPECTED)


def test_words_that_do_not_fit_are_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The logo's width is fixed from the 1x layout; clipped words must not pass silently."""
    monkeypatch.setattr(brand_images, "_logo_width", lambda: brand_images.LOGO_HEIGHT)
    with pytest.raises(ValueError, match="overflow"):
        brand_images.logo(2, brand_images.DARK)
