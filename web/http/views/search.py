"""Memory search results made readable: the query's words marked in the text, and why each one matched."""

import re
from dataclasses import dataclass

from memory.service import RecalledIncident

MIN_TERM_CHARS = 3
CHANNEL_NAMES = {"semantic": "meaning", "keyword": "words", "bm25": "words", "recency": "recency"}


@dataclass(frozen=True)
class Piece:
    text: str
    marked: bool = False


def terms(query: str) -> list[str]:
    words = {w.casefold() for w in re.findall(r"[\w.:/-]+", query) if len(w) >= MIN_TERM_CHARS}
    return sorted(words, key=len, reverse=True)


def highlight(text: str, query_terms: list[str]) -> list[Piece]:
    """Split ``text`` into pieces, marking each occurrence of a query term (case-insensitive)."""
    if not query_terms:
        return [Piece(text)]
    pattern = re.compile("|".join(re.escape(t) for t in query_terms), re.IGNORECASE)
    pieces: list[Piece] = []
    position = 0
    for match in pattern.finditer(text):
        if match.start() > position:
            pieces.append(Piece(text[position : match.start()]))
        pieces.append(Piece(match.group(0), marked=True))
        position = match.end()
    if position < len(text):
        pieces.append(Piece(text[position:]))
    return pieces


def why(result: RecalledIncident) -> str:
    """ "ranked 1st by meaning, 3rd by words" from the channel ranks recall reports."""
    parts = [
        f"{_ordinal(rank)} by {CHANNEL_NAMES.get(channel, channel)}"
        for channel, rank in sorted(result.why.items(), key=lambda kv: kv[1])
    ]
    return "ranked " + ", ".join(parts) if parts else "matched"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"
