"""Colours for the charts' lines, handed to the pages with their data so that no two lines of
one chart share a colour, however many there are (Plotly's own colour cycle repeats after ten:
the eleventh job of the spend chart wore the first one's colour)."""

from __future__ import annotations

import colorsys

# Ten colours apart at a glance (Tableau 10, which Plotly's own default follows), then hues
# spread by the golden angle on alternating lightness rings.
BASE_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
               "#7f7f7f", "#bcbd22", "#17becf")
_GOLDEN = 0.381966
_LIGHTNESS = (0.38, 0.55, 0.30)


def colors(count: int) -> list[str]:
    """`count` colours, all different."""
    out = list(BASE_COLORS[:count])
    hue, tried = 0.0, 0
    while len(out) < count:
        hue = (hue + _GOLDEN) % 1.0
        light = _LIGHTNESS[(tried // 8) % len(_LIGHTNESS)]
        tried += 1
        red, green, blue = colorsys.hls_to_rgb(hue, light, 0.65)
        color = f"#{round(red * 255):02x}{round(green * 255):02x}{round(blue * 255):02x}"
        if color not in out:
            out.append(color)
    return out
