"""Headless figures and their files: the axes to draw on, and PNGs written atomically.

Figures are built with ``matplotlib.figure.Figure``, never through pyplot's global state;
save_figure writes a temporary file beside the target and renames it, so a reader never sees
a half-written PNG (fastcdl.plot, the leaderboard).
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from fastcdl._writing import writing_to
from fastcdl.io import InputError

_DPI = 150


def new_axes(ax, figsize):
    """The axes to draw on: ``ax`` itself, or the single axes of a new headless figure."""
    if ax is not None:
        return ax.figure, ax
    from matplotlib.figure import Figure

    fig = Figure(figsize=figsize, layout="constrained")
    return fig, fig.add_subplot()


def save_figure(fig, path, *, dpi=_DPI) -> Path:
    """Write ``fig`` as a PNG at ``path`` atomically: to a temporary file in the same
    folder, then ``os.replace``, so the path holds either the old file or the whole new one.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        The figure (a display's ``figure_``).
    path : str or Path
        Where to write; its folder must exist.
    dpi : int, default 150
        Resolution.

    Returns
    -------
    Path
        ``path``.

    Examples
    --------
    >>> import os, tempfile
    >>> from fastcdl.plot import ReliabilityDisplay
    >>> disp = ReliabilityDisplay.from_predictions([0, 1, 1, 0], [0.2, 0.7, 0.7, 0.2])
    >>> out = save_figure(disp.figure_, os.path.join(tempfile.mkdtemp(), "rel.png"))
    >>> out.name, out.stat().st_size > 0
    ('rel.png', True)
    """
    path = Path(path)
    fd, tmp = _temporary(path.parent, path.name)
    try:
        with writing_to(path), os.fdopen(fd, "wb") as fh:
            fig.savefig(fh, format="png", dpi=dpi)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def _temporary(folder: Path, name: str):
    """(open file descriptor, path) of a new empty file ``.NAME.XXXXXXXX.tmp`` in ``folder``.

    Created with mode 0o666 less the umask, as ``open`` creates files (``tempfile.mkstemp``
    makes them 0o600), so the PNG renamed from it has the permissions its CSV and JSON
    neighbours get."""
    while True:
        tmp = folder / f".{name}.{secrets.token_hex(4)}.tmp"
        try:
            return os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666), tmp
        except FileExistsError:
            continue
        except OSError as e:  # a read-only folder (a committed run folder, a read-only mount)
            raise InputError(
                f"{folder}: cannot write figures into this folder ({e.strerror}); write them into "
                "another folder (--out)"
            ) from None


def save_all(named_figures, out_dir: Path) -> list[Path]:
    """Write every (file name, figure) into out_dir, all or none: each figure goes to a
    temporary file first and the files are renamed into place only when all rendered."""
    out_dir.mkdir(parents=True, exist_ok=True)
    staged = []
    try:
        for name, fig in named_figures:
            fd, tmp = _temporary(out_dir, name)
            staged.append((tmp, out_dir / name))
            with writing_to(out_dir / name), os.fdopen(fd, "wb") as fh:
                fig.savefig(fh, format="png", dpi=_DPI)
    except BaseException:
        for tmp, _ in staged:
            os.unlink(tmp)
        raise
    for tmp, path in staged:
        os.replace(tmp, path)
    return [path for _, path in staged]
