"""Full-text search shared by the QA and web families: a tantivy index, built once per document set.

An index is keyed by a hash of its documents, kept on disk under the user's cache directory and shared by every env
in the process, so eight envs over one corpus cost one index. Agent text never reaches tantivy's query parser (it
raises on quotes, brackets and ``field:value``): queries are tokenized here and built from term queries.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
import threading
from collections.abc import Sequence
from pathlib import Path

import tantivy

_TOKEN = re.compile(r"[a-z0-9]+")
#: Bounds the work one query may cause, however long the text an agent sends.
MAX_QUERY_TERMS = 32
_MAX_TOKEN_LEN = 40  # tantivy's default tokenizer drops longer tokens
_STOPWORDS = frozenset(
    ["a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from", "has", "have", "how", "in", "is", "it", "its", "of", "on", "or", "that", "the", "this", "to", "was", "were", "what", "when", "where", "which", "who", "whom", "whose", "why", "with"]
)
_FORMAT = 1  # bump when the on-disk layout changes, so old caches are rebuilt rather than misread

_shared: dict[str, SearchIndex] = {}
_shared_lock = threading.Lock()


def tokenize(text: str) -> list[str]:
    """Lower-case alphanumeric tokens, as tantivy's default tokenizer makes them."""
    return [t for t in _TOKEN.findall(text.lower()) if len(t) <= _MAX_TOKEN_LEN]


def query_terms(text: str) -> list[str]:
    """Distinct content terms of a query, in order, at most :data:`MAX_QUERY_TERMS`."""
    seen: dict[str, None] = {}
    for token in tokenize(text[: 64 * MAX_QUERY_TERMS]):
        if token not in _STOPWORDS:
            seen.setdefault(token, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)


def default_cache_dir() -> Path:
    """``$ABSTAIN_GYM_CACHE`` if set, else the platform's user cache directory."""
    env = os.environ.get("ABSTAIN_GYM_CACHE")
    if env:
        return Path(env)
    import platformdirs

    return Path(platformdirs.user_cache_dir("agentabstain-gym"))


def content_hash(documents: Sequence[str]) -> str:
    """A short digest of the documents, naming the on-disk cache of their index (same documents, same index).
    """
    digest = hashlib.sha256(f"format={_FORMAT};n={len(documents)}".encode())
    for doc in documents:
        digest.update(hashlib.sha256(doc.encode("utf-8")).digest())
    return digest.hexdigest()[:24]


class SearchIndex:
    """BM25 search over a fixed list of documents; results are positions in that list.

    Use :meth:`shared` rather than the constructor: it reuses an index already open in this process and the copy
    cached on disk, and rebuilds a cache that is missing or corrupt.
    """

    def __init__(self, documents: Sequence[str], *, cache_dir: Path | None = None) -> None:
        self.n_documents = len(documents)
        self.key = content_hash(documents)
        root = (cache_dir or default_cache_dir()) / "index"
        self.path = root / self.key
        self._index = self._open(self.path) or self._build(documents, root)
        self._searcher = self._index.searcher()

    @classmethod
    def shared(cls, documents: Sequence[str], *, cache_dir: Path | None = None) -> SearchIndex:
        """The process-wide index of these documents, built once however many envs ask (thread-safe)."""
        key = content_hash(documents)
        with _shared_lock:
            index = _shared.get(key)
            if index is None:
                index = _shared[key] = cls(documents, cache_dir=cache_dir)
            return index

    @staticmethod
    def _schema() -> tantivy.Schema:
        builder = tantivy.SchemaBuilder()
        builder.add_text_field("body", stored=False, tokenizer_name="default", index_option="freq")
        builder.add_integer_field("pos", stored=False, fast=True, indexed=False)
        return builder.build()

    def _open(self, path: Path) -> tantivy.Index | None:
        """The cached index if it is complete and matches, else None (it will be rebuilt)."""
        try:
            meta = json.loads((path / "abstain_gym.json").read_text())
            if meta != {"format": _FORMAT, "documents": self.n_documents}:
                return None
            index = tantivy.Index.open(str(path))
            index.reload()
            if index.searcher().num_docs != self.n_documents:
                return None
            return index
        except (OSError, ValueError, RuntimeError):
            return None

    def _build(self, documents: Sequence[str], root: Path) -> tantivy.Index:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{self.key}.", dir=root))
        try:
            index = tantivy.Index(self._schema(), path=str(tmp))
            # one thread and one commit give one segment, so document order and ties are the same on every build
            writer = index.writer(heap_size=128 * 1024 * 1024, num_threads=1)
            for pos, text in enumerate(documents):
                writer.add_document(tantivy.Document(body=text, pos=pos))
            writer.commit()
            writer.wait_merging_threads()
            (tmp / "abstain_gym.json").write_text(json.dumps({"format": _FORMAT, "documents": len(documents)}))
            if self.path.exists():
                shutil.rmtree(self.path, ignore_errors=True)
            try:
                os.replace(tmp, self.path)
            except OSError:  # another process installed the same index first: use theirs
                shutil.rmtree(tmp, ignore_errors=True)
        finally:
            if tmp.exists() and tmp != self.path:
                shutil.rmtree(tmp, ignore_errors=True)
        index = self._open(self.path)
        if index is None:
            raise RuntimeError(f"search index at {self.path} could not be opened after building it")
        return index

    def search(self, query: str, k: int = 10) -> list[tuple[int, float]]:
        """The ``k`` best ``(position, score)`` pairs, best first; ties broken by position. Never raises on text."""
        terms = query_terms(query)
        if not terms or k <= 0:
            return []
        schema = self._index.schema
        clauses = [(tantivy.Occur.Should, tantivy.Query.term_query(schema, "body", t)) for t in terms]
        result = self._searcher.search(tantivy.Query.boolean_query(clauses), limit=k + 8, count=False)
        if not result.hits:
            return []
        positions = self._searcher.fast_field_values("pos", [addr for _, addr in result.hits])
        hits = [(int(pos), round(float(score), 6)) for pos, (score, _) in zip(positions, result.hits, strict=False)]
        hits.sort(key=lambda h: (-h[1], h[0]))
        return hits[:k]
