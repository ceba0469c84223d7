"""The keyword channel (FTS5 BM25, filtered by the documents a tag filter admits) and reciprocal-rank fusion.

The tag filter is applied to the ranked rows as they are read, and the best are picked after it: the
ids it admits come from the vector index's tag postings, in memory. Testing each matching row's tags
inside SQLite (a correlated ``EXISTS``) cost as much again as ranking them, and ``rowid IN
(subquery)`` makes SQLite scan the tag table first, orders of magnitude slower on large banks.
``tag_condition`` is that filter in SQL, for queries that select documents by their tags alone.

The index holds each document's services as words of their own (``store.scope_words``), so a search
within a service also asks FTS5 for rows of that service (``tag_filter``): FTS5 then ranks about one
service's rows instead of the whole bank's, four times faster at 10,000 records. The query's words are
matched in the text column only and the services' column weighs nothing in the score; every record has
one service word, so BM25's length normalisation moves by the same word for all of them.

FTS5 scores every row a query matches before it can sort, so a query word found in most records
("service", "timeout") costs milliseconds per thousand rows while adding almost nothing to the
ranking (its IDF is near zero). The channel therefore keeps a query's words from the rarest up, within
a budget of ``POSTINGS_BUDGET`` matching rows (the rarest word always stays). On banks smaller than
the budget every word is kept. Document frequencies come from FTS5's own vocabulary table and are
cached until the bank grows or shrinks by a tenth.
"""

import heapq
import re
import sqlite3
import threading
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter

from memory.bank import Budget, TagsMatch
from memory.embedded.store import SCOPE_TAG, scope_word

RRF_K = 60
CANDIDATE_DEPTH: dict[str, int] = {"low": 20, "mid": 50, "high": 150}
MAX_QUERY_TOKENS = 48
POSTINGS_BUDGET = 5000
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


def query_terms(query: str) -> list[str]:
    """Distinct words as FTS5's tokenizer sees them (lower case, no diacritics), stop words dropped."""
    folded = "".join(c for c in unicodedata.normalize("NFKD", query.lower()) if not unicodedata.combining(c))
    words = [w for w in dict.fromkeys(_TOKEN.findall(folded)) if w not in _STOPWORDS]
    return words[:MAX_QUERY_TOKENS]


def match_expression(terms: list[str]) -> str | None:
    """An FTS5 ``MATCH`` string: each term quoted (so ``host-1`` or ``NEAR`` stay words), OR-ed."""
    return " OR ".join(f'"{t}"' for t in terms) if terms else None


def tag_filter(tags: list[str] | None, match: TagsMatch) -> str | None:
    """An FTS5 condition on the services' column that every document the tag filter admits meets, or
    None when there is none to give: no tags, a tag that is not a service's, or a mode that also admits
    untagged documents."""
    wanted = list(dict.fromkeys(tags or []))
    if not wanted or match in ("any", "all") or not all(t.startswith(SCOPE_TAG) for t in wanted):
        return None
    return (" OR " if match == "any_strict" else " AND ").join(scope_word(t) for t in wanted)


def fts_query(terms: str, scope: str | None = None) -> str:
    """The ``MATCH`` string: the query's words in the text column, among ``scope``'s rows when given."""
    text = f"content : ({terms})"
    return f"scope : ({scope}) AND {text}" if scope else text


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


class KeywordChannel:
    """BM25 over the FTS5 index, pruned to the query's informative words (see the module docstring)."""

    def __init__(self, budget: int = POSTINGS_BUDGET) -> None:
        self.budget = budget
        self._df: dict[str, int] = {}
        self._df_size = 0
        self._lock = threading.Lock()

    def terms(self, conn: sqlite3.Connection, query: str, *, size: int) -> list[str]:
        """The words worth matching, rarest first."""
        words = query_terms(query)
        if size <= self.budget:
            return words
        with self._lock:
            if abs(size - self._df_size) * 10 > self._df_size:
                self._df, self._df_size = {}, size
            for word in words:
                if word not in self._df:
                    row = conn.execute(
                        "SELECT doc FROM documents_vocab WHERE term = ? AND col = 'content'", (word,)
                    ).fetchone()
                    self._df[word] = row[0] if row else 0
            df = {w: self._df[w] for w in words}
        chosen: list[str] = []
        total = 0
        for word in sorted(words, key=lambda w: df[w]):
            if total and total + df[word] > self.budget:
                break
            chosen.append(word)
            total += df[word]
        return chosen

    def scored(
        self,
        conn: sqlite3.Connection,
        query: str,
        *,
        admitted: set[int] | None,
        k: int,
        size: int,
        scope: str | None = None,
    ) -> list[tuple[int, float]] | None:
        """Document ids by BM25 with their scores (higher is closer), best first, among ``admitted`` (every
        document when None); ``scope`` (``tag_filter``) narrows the rows FTS5 ranks to at least those.
        None if the query has no words worth matching."""
        expression = match_expression(self.terms(conn, query, size=size))
        if expression is None:
            return None
        # Every matching row is ranked whatever the query asks; sorting them here, after the filter,
        # costs less than FTS5's own ``ORDER BY rank``, which took twice as long as ranking them.
        rows: Iterable[tuple[int, float]] = conn.execute(
            "SELECT rowid, bm25(documents_fts, 1.0, 0.0) FROM documents_fts WHERE documents_fts MATCH ?",
            [fts_query(expression, scope)],
        )
        if admitted is not None:
            rows = (row for row in rows if row[0] in admitted)
        return [(doc, -float(rank)) for doc, rank in heapq.nsmallest(max(k, 0), rows, key=itemgetter(1))]


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
