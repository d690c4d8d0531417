"""`--plot FILE.png`: both learning rate curves and their difference, drawn with matplotlib (an
optional extra: `pip install 'neoconv[plot]'`)."""

from __future__ import annotations

import io

from ..core.errors import NeoconvError
from .certificate import Certificate

MISSING = "--plot needs matplotlib, which is not installed (pip install 'neoconv[plot]'); no plot was written"


class PlotUnavailable(NeoconvError):
    """matplotlib is not installed."""


def render_png(cert: Certificate) -> bytes:
    """The PNG of the two curves (top) and B - A at the steps both recorded (bottom)."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display: a file only
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable(MISSING) from None
    curves = []
    for label, side in (("A", cert.a), ("B", cert.b)):
        lr = (side.answer.result or {}).get("lr") or {}
        points = dict(zip(lr.get("steps", ()), lr.get("values", ())))
        curves.append((f"{label}: {side.format} ({lr.get('scheduler', 'no curve')})", points))
    figure, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    for label, points in curves:
        steps = sorted(points)
        top.plot(steps, [points[s] for s in steps], label=label, linewidth=1.2)
    top.set_ylabel("learning rate")
    top.legend(loc="best", fontsize="small")
    top.set_title(f"{cert.a.file} -> {cert.b.file}", fontsize="small")
    common = sorted(curves[0][1].keys() & curves[1][1].keys())
    bottom.plot(common, [curves[1][1][s] - curves[0][1][s] for s in common], color="tab:red", linewidth=1.0)
    bottom.axhline(0.0, color="grey", linewidth=0.5)
    bottom.set_ylabel("B - A")
    bottom.set_xlabel("optimizer step")
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=110)
    plt.close(figure)
    return buffer.getvalue()


def write_plot(cert: Certificate, path: str, inputs: tuple[str, ...] = ()) -> None:
    from ..io.outputs import check_target, replace_file

    data = render_png(cert)
    check_target(path, inputs)  # never over an input, into a folder, or where no folder is
    replace_file(path, data)
