"""How a command's text reads in a narrow terminal: each line within the width, and each wrapped line
going on under the text of its bullet (``- ``, a replay's added ``+ ``) or evidence number (``[3] ``),
not at column 0."""

import re

HANG = re.compile(r"^\s*(?:[-+] |\[\d+\] )?")


def assert_wrapped(wide: str, narrow: str, width: int) -> int:
    """``narrow`` is ``wide`` wrapped at ``width``: the same words in the same lines, a line too long
    for the width (but a table row, or one word alone) carried on under its hanging indent. Returns
    how many lines were wrapped, so a test can tell it saw some."""
    rows = iter(narrow.splitlines())
    wrapped = 0
    for line in wide.splitlines():
        first = next(rows)
        assert line.startswith(first.rstrip()), (line, first)
        found = HANG.match(line)
        hang = " " * len(found[0]) if found else ""
        words = first.split()
        while words != line.split():
            more = next(rows)
            assert more.startswith(hang) and more[len(hang)] != " ", (hang, line, more)
            words += more.split()
        wrapped += words != first.split()
    assert next(rows, None) is None, "lines the wide text does not have"
    for row in narrow.splitlines():
        assert len(row) <= width or row.startswith("|") or " " not in row.strip(), (width, row)
    return wrapped
