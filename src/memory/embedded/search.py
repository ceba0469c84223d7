"""The keyword channel (FTS5 BM25 with the tag filter inside the query) and reciprocal-rank fusion.

The tag filter is a correlated ``EXISTS`` on the tag table evaluated for each row the ``MATCH``
produces (FTS5 drives the join); filtering with ``rowid IN (subquery)`` instead makes SQLite scan
the tag table first and is orders of magnitude slower on large banks.
"""

import re
import sqlite3
from dataclasses import dataclass

from memory.bank import Budget, TagsMatch

RRF_K = 60
CANDIDATE_DEPTH: dict[str, int] = {"low": 20, "mid": 50, "high": 150}
MAX_QUERY_TOKENS = 48
_TOKEN = re.compile(r"[^\W_]+")
# Words so common in incident text that they only slow BM25 down; IDF would weigh them near zero.
_STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "has",
        "have",
        "in",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "that",
        "the",
        "this",
        "to",
        "was",
        "were",
        "will",
        "with",
        "we",
        "our",
        "after",
        "before",
        "when",
        "then",
        "than",
        "into",
        "out",
        "up",
    ]
)


def candidate_depth(budget: Budget, limit: int) -> int:
    return max(CANDIDATE_DEPTH[budget], 3 * limit)


def match_expression(query: str) -> str | None:
    """An FTS5 ``MATCH`` string: the query's distinct words, each quoted, OR-ed; None if no words."""
    words = [w for w in dict.fromkeys(_TOKEN.findall(query.lower())) if w not in _STOPWORDS]
    if not words:
        return None
    return " OR ".join(f'"{w}"' for w in words[:MAX_QUERY_TOKENS])


def tag_condition(tags: list[str] | None, match: TagsMatch) -> tuple[str, list[str]]:
    """SQL over ``d`` (documents) with Hindsight's meaning of each ``tags_match`` mode."""
    wanted = list(dict.fromkeys(tags or []))
    if not wanted:
        return "1", []
    marks = ",".join("?" * len(wanted))
    if match in ("any", "any_strict"):
        cond = f"EXISTS (SELECT 1 FROM document_tags t WHERE t.doc = d.id AND t.tag IN ({marks}))"
    else:
        matched = f"SELECT count(*) FROM document_tags t WHERE t.doc = d.id AND t.tag IN ({marks})"
        cond = f"({matched}) = {len(wanted)}"
        if match == "exact":
            cond += f" AND (SELECT count(*) FROM document_tags t WHERE t.doc = d.id) = {len(wanted)}"
    if match in ("any", "all"):
        cond = f"(d.tags = '[]' OR {cond})"
    return cond, wanted


def keyword_search(
    conn: sqlite3.Connection, query: str, *, tags: list[str] | None, match: TagsMatch, k: int
) -> list[int]:
    """Document ids by BM25, best first, among the documents the tag filter admits."""
    expression = match_expression(query)
    if expression is None or k <= 0:
        return []
    cond, params = tag_condition(tags, match)
    sql = (
        "SELECT d.id FROM documents_fts AS f CROSS JOIN documents AS d ON d.id = f.rowid "
        f"WHERE documents_fts MATCH ? AND {cond} ORDER BY f.rank, d.ts DESC LIMIT ?"
    )
    return [row[0] for row in conn.execute(sql, [expression, *params, k])]


@dataclass(frozen=True)
class Fused:
    id: int
    score: float  # normalised RRF: 1.0 = ranked first in every channel
    ranks: dict[str, int]


def fuse(channels: dict[str, list[int]], timestamps: dict[int, float], limit: int) -> list[Fused]:
    """Reciprocal-rank fusion; ties broken by the more recent incident."""
    raw: dict[int, float] = {}
    ranks: dict[int, dict[str, int]] = {}
    for name, ids in channels.items():
        for rank, doc in enumerate(ids, start=1):
            raw[doc] = raw.get(doc, 0.0) + 1.0 / (RRF_K + rank)
            ranks.setdefault(doc, {})[name] = rank
    best = len(channels) / (RRF_K + 1)
    order = sorted(raw, key=lambda d: (-raw[d], -timestamps.get(d, 0.0)))
    return [Fused(id=d, score=raw[d] / best, ranks=ranks[d]) for d in order[:limit]]
