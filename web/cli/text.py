"""Text a command prints, wrapped to the terminal with each line's hanging indent kept.

A terminal wraps a long line at column 0, so a record's bullet or indented field loses its shape on the
second row and reads as a new paragraph. Here a line too long for the width is wrapped by ``textwrap``
under its own indent, plus the width of its list marker (``- ``, ``* ``, ``3. ``, an evidence number
``[12] ``, a replay's added ``+ ``) when it has one. Words are never split (an incident id, a URL, a
path stays whole, even past the width), and a table row (``| a | b |``) is left whole: wrapped, its
cells would no longer line up.
"""

import re
import shutil
import textwrap

_MARKER = re.compile(r"^(?P<indent>\s*)(?P<marker>(?:[-+*•]|\d{1,3}[.)]|\[\d{1,3}\])\s+)?")


def terminal_width() -> int:
    """The terminal's columns (``COLUMNS`` first), 80 when the output is not a terminal."""
    return shutil.get_terminal_size((80, 24)).columns


def hanging(text: str, width: int | None = None) -> str:
    """``text`` with every line longer than ``width`` (default: the terminal's) wrapped under its indent."""
    width = width or terminal_width()
    return "\n".join(_wrap(line, width) for line in text.splitlines())


def _wrap(line: str, width: int) -> str:
    if len(line) <= width or line.lstrip().startswith("|"):
        return line
    found = _MARKER.match(line)
    assert found is not None  # every part of the pattern is optional
    indent = found["indent"].expandtabs()
    hang = " " * (len(indent) + len(found["marker"] or ""))
    return textwrap.fill(
        line.strip(),
        width=max(width, len(hang) + 20),  # a terminal narrower than the indent still shows words
        initial_indent=indent,
        subsequent_indent=hang,
        break_long_words=False,
        break_on_hyphens=False,
    )
