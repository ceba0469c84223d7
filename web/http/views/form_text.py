"""A form field as the person typed it, for the pages that compare what came back with what was shown."""


def as_typed(sent: object) -> str:
    """The field with the line ends it was typed with: a browser sends a textarea's as CRLF, which would
    count an untouched field as edited (the resolve form's first draft, a draft's fields) and a
    revision's unchanged field as changed."""
    return str(sent).replace("\r\n", "\n")
