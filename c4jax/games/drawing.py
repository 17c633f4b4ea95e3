"""Board pictures as a few plain shapes (a :class:`Scene`), written as SVG (:func:`to_svg`,
:func:`animate_svg`, SMIL) or drawn with Pillow (:func:`to_image`, :func:`write_gif`; imported only there)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Sequence
from xml.sax.saxutils import escape, quoteattr

INK = "#1d2330"
BACKGROUND = "#f4f1ea"
FONT = "DejaVu Sans, Verdana, sans-serif"
FOOTER_LINE = 18  # pixels per line of a footer


@dataclass(frozen=True)
class Rect:
    x: float
    y: float
    w: float
    h: float
    fill: str
    stroke: str | None = None
    stroke_width: float = 0.0
    cls: str = ""
    data: tuple[tuple[str, str], ...] = ()  # data-* attributes of the SVG element


@dataclass(frozen=True)
class Circle:
    cx: float
    cy: float
    r: float
    fill: str
    stroke: str | None = None
    stroke_width: float = 0.0
    cls: str = ""
    data: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Polygon:
    points: tuple[tuple[float, float], ...]
    fill: str
    cls: str = ""
    data: tuple[tuple[str, str], ...] = ()
    stroke: str | None = None
    stroke_width: float = 0.0


@dataclass(frozen=True)
class Line:
    x1: float
    y1: float
    x2: float
    y2: float
    stroke: str
    stroke_width: float = 1.0
    cls: str = ""
    data: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Text:
    x: float
    y: float  # the baseline, as in SVG
    text: str
    size: float = 14.0
    fill: str = INK
    anchor: str = "middle"  # start, middle or end
    bold: bool = False
    cls: str = ""
    data: tuple[tuple[str, str], ...] = ()


Shape = Rect | Circle | Polygon | Line | Text


@dataclass(frozen=True)
class Scene:
    """A picture: ``shapes`` drawn in order on a ``width`` x ``height`` canvas of ``background``."""

    width: int
    height: int
    shapes: tuple[Shape, ...]
    title: str = ""
    background: str = BACKGROUND
    data: tuple[tuple[str, str], ...] = field(default=())  # data-* attributes of the root element


def _num(v: float) -> str:
    return f"{v:.1f}".rstrip("0").rstrip(".")


def _attrs(pairs) -> str:
    return "".join(f" {k}={quoteattr(str(v))}" for k, v in pairs if v is not None and v != "")


def _common(shape) -> list[tuple[str, str]]:
    return [("class", shape.cls)] + [(f"data-{k}", v) for k, v in shape.data]


def _paint(shape) -> list[tuple[str, str]]:
    out = [("fill", shape.fill)]
    if getattr(shape, "stroke", None):
        out += [("stroke", shape.stroke), ("stroke-width", _num(shape.stroke_width))]
    return out


def shape_svg(shape: Shape) -> str:
    """One shape as an SVG element."""
    if isinstance(shape, Rect):
        geo = [("x", _num(shape.x)), ("y", _num(shape.y)), ("width", _num(shape.w)), ("height", _num(shape.h))]
        return f"<rect{_attrs(geo + _paint(shape) + _common(shape))}/>"
    if isinstance(shape, Circle):
        geo = [("cx", _num(shape.cx)), ("cy", _num(shape.cy)), ("r", _num(shape.r))]
        return f"<circle{_attrs(geo + _paint(shape) + _common(shape))}/>"
    if isinstance(shape, Polygon):
        points = " ".join(f"{_num(x)},{_num(y)}" for x, y in shape.points)
        return f"<polygon{_attrs([('points', points)] + _paint(shape) + _common(shape))}/>"
    if isinstance(shape, Line):
        geo = [("x1", _num(shape.x1)), ("y1", _num(shape.y1)), ("x2", _num(shape.x2)), ("y2", _num(shape.y2)),
               ("stroke", shape.stroke), ("stroke-width", _num(shape.stroke_width)), ("stroke-linecap", "round")]
        return f"<line{_attrs(geo + _common(shape))}/>"
    if isinstance(shape, Text):
        attrs = [("x", _num(shape.x)), ("y", _num(shape.y)), ("font-size", _num(shape.size)),
                 ("font-family", FONT), ("text-anchor", shape.anchor), ("fill", shape.fill),
                 ("font-weight", "bold" if shape.bold else "")] + _common(shape)
        return f"<text{_attrs(attrs)}>{escape(shape.text)}</text>"
    raise TypeError(f"not a shape: {shape!r}")


def _body(scene: Scene) -> list[str]:
    return ([shape_svg(Rect(0, 0, scene.width, scene.height, scene.background, cls="background"))]
            + [shape_svg(s) for s in scene.shapes])


def _open(width: int, height: int, title: str, data=()) -> list[str]:
    root = [("xmlns", "http://www.w3.org/2000/svg"), ("width", width), ("height", height),
            ("viewBox", f"0 0 {width} {height}")] + [(f"data-{k}", v) for k, v in data]
    return [f"<svg{_attrs(root)}>"] + ([f"<title>{escape(title)}</title>"] if title else [])


def to_svg(scene: Scene) -> str:
    """A standalone SVG document of ``scene``."""
    return "\n".join(_open(scene.width, scene.height, scene.title, scene.data) + _body(scene) + ["</svg>"]) + "\n"


def footer(lines: Sequence[str], width: int, y: float) -> tuple[Text, ...]:
    """Text lines from ``y`` down (left-aligned, small), e.g. a game's move list."""
    return tuple(Text(10, y + FOOTER_LINE * (i + 1) - 4, line, size=13, anchor="start", cls="footer")
                 for i, line in enumerate(lines))


def wrap(text: str, width: int) -> list[str]:
    """``text`` broken into lines of at most ``width`` characters at spaces."""
    return textwrap.wrap(text, width, break_on_hyphens=False) or [""]


def with_footer(scene: Scene, lines: Sequence[str]) -> Scene:
    """``scene`` with ``lines`` of text added below it."""
    extra = FOOTER_LINE * len(lines) + 8 if lines else 0
    return replace(scene, height=scene.height + extra, shapes=scene.shapes + footer(lines, scene.width, scene.height))


def animate_svg(scenes: Sequence[Scene], seconds: float = 1.0, hold: float = 3.0,
                footer_lines: Sequence[str] = (), title: str = "") -> str:
    """One SVG document that shows ``scenes`` in a loop, ``seconds`` each (the last one ``hold``), with
    ``footer_lines`` under them. The shapes every scene begins with are drawn once; each scene's rest is a
    ``<g class="frame">`` shown in turn by SMIL ``<set>`` elements; the last frame is visible by default, so a
    viewer without SMIL shows the final position. All scenes must have the same size and background."""
    if not scenes:
        raise ValueError("animate_svg needs at least one scene")
    if seconds <= 0 or hold <= 0:
        raise ValueError(f"seconds and hold must be positive, got {seconds} and {hold}")
    width, height, background = scenes[0].width, scenes[0].height, scenes[0].background
    if any((s.width, s.height, s.background) != (width, height, background) for s in scenes):
        raise ValueError("every scene of an animation must have the same size and background")
    shared = 0
    while shared < min(len(s.shapes) for s in scenes) and all(s.shapes[shared] == scenes[0].shapes[shared]
                                                                  for s in scenes):
        shared += 1
    last = len(scenes) - 1
    total = seconds * last + hold
    extra = FOOTER_LINE * len(footer_lines) + 8 if footer_lines else 0
    out = _open(width, height + extra, title or scenes[-1].title, [("frames", len(scenes))])
    out.append(shape_svg(Rect(0, 0, width, height + extra, background, cls="background")))
    # The clock: an animation of nothing visible that restarts itself when it ends.
    out.append(f'<rect width="0" height="0" fill="none"><animate id="clock" attributeName="x" from="0" to="0" '
               f'begin="0s;clock.end" dur="{_num(total)}s"/></rect>')
    out += [shape_svg(s) for s in scenes[0].shapes[:shared]]
    for i, scene in enumerate(scenes):
        if i < last:
            out.append(f'<g class="frame" data-index="{i}" visibility="hidden">')
            out.append(f'<set attributeName="visibility" to="visible" begin="clock.begin+{_num(i * seconds)}s" '
                       f'dur="{_num(seconds)}s"/>')
        else:
            out.append(f'<g class="frame final" data-index="{i}">')
            if last:
                out.append(f'<set attributeName="visibility" to="hidden" begin="clock.begin" '
                           f'dur="{_num(last * seconds)}s"/>')
        out += [shape_svg(s) for s in scene.shapes[shared:]]
        out.append("</g>")
    out += [shape_svg(s) for s in footer(footer_lines, width, height)]
    out.append("</svg>")
    return "\n".join(out) + "\n"


# --------------------------------------------------------------------------- raster (Pillow)

def _font(size: float):
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # a Pillow without FreeType's scalable default font
        return ImageFont.load_default()


def to_image(scene: Scene, scale: float = 1.0):
    """``scene`` drawn as a ``PIL.Image`` (RGB), ``scale`` times its size."""
    from PIL import Image, ImageDraw

    s = float(scale)
    image = Image.new("RGB", (max(1, round(scene.width * s)), max(1, round(scene.height * s))), scene.background)
    draw = ImageDraw.Draw(image)
    anchors = {"start": "ls", "middle": "ms", "end": "rs"}
    for shape in scene.shapes:
        if isinstance(shape, Rect):
            box = [shape.x * s, shape.y * s, (shape.x + shape.w) * s - 1, (shape.y + shape.h) * s - 1]
            draw.rectangle(box, fill=None if shape.fill == "none" else shape.fill, outline=shape.stroke,
                           width=max(1, round(shape.stroke_width * s)) if shape.stroke else 0)
        elif isinstance(shape, Circle):
            box = [(shape.cx - shape.r) * s, (shape.cy - shape.r) * s, (shape.cx + shape.r) * s,
                   (shape.cy + shape.r) * s]
            fill = None if shape.fill == "none" else shape.fill
            draw.ellipse(box, fill=fill, outline=shape.stroke,
                         width=max(1, round(shape.stroke_width * s)) if shape.stroke else 0)
        elif isinstance(shape, Polygon):
            outline = {"outline": shape.stroke, "width": max(1, round(shape.stroke_width * s))} if shape.stroke else {}
            draw.polygon([(x * s, y * s) for x, y in shape.points], fill=None if shape.fill == "none" else shape.fill,
                         **outline)
        elif isinstance(shape, Line):
            draw.line([shape.x1 * s, shape.y1 * s, shape.x2 * s, shape.y2 * s], fill=shape.stroke,
                      width=max(1, round(shape.stroke_width * s)))
        elif isinstance(shape, Text):
            draw.text((shape.x * s, shape.y * s), shape.text, fill=shape.fill, font=_font(shape.size * s),
                      anchor=anchors[shape.anchor])
    return image


def write_gif(scenes: Sequence[Scene], path: str | Path, seconds: float = 1.0, hold: float = 3.0,
              scale: float = 1.0) -> Path:
    """An animated GIF of ``scenes`` (``seconds`` each, the last ``hold``), looping forever."""
    if not scenes:
        raise ValueError("write_gif needs at least one scene")
    frames = [to_image(s, scale) for s in scenes]
    durations = [round(1000 * seconds)] * (len(frames) - 1) + [round(1000 * hold)]
    path = Path(path)
    frames[0].save(path, format="GIF", save_all=True, append_images=frames[1:], duration=durations, loop=0,
                   disposal=1)
    return path
