"""The words of a search query that carry meaning (English and Chinese stop words out).

Keyword search ORs the query's words; words every text has ("how", "the", "keeps", 的,
是) then match everywhere and drown the few that matter. They are dropped, unless the
query has nothing else (a search for "the who" still searches).

Pure functions; safe on any thread.
"""

from __future__ import annotations

import re

ENGLISH = frozenset(
    (
        "a",
        "about",
        "above",
        "after",
        "again",
        "against",
        "all",
        "also",
        "am",
        "an",
        "and",
        "any",
        "are",
        "as",
        "at",
        "be",
        "because",
        "been",
        "before",
        "being",
        "below",
        "between",
        "both",
        "but",
        "by",
        "can",
        "could",
        "did",
        "do",
        "does",
        "doing",
        "done",
        "down",
        "during",
        "each",
        "either",
        "else",
        "even",
        "ever",
        "every",
        "few",
        "for",
        "from",
        "further",
        "get",
        "gets",
        "got",
        "had",
        "has",
        "have",
        "having",
        "he",
        "her",
        "here",
        "hers",
        "him",
        "his",
        "how",
        "i",
        "if",
        "in",
        "into",
        "is",
        "it",
        "its",
        "itself",
        "just",
        "keep",
        "keeps",
        "kept",
        "let",
        "like",
        "make",
        "makes",
        "made",
        "many",
        "may",
        "me",
        "might",
        "more",
        "most",
        "much",
        "must",
        "my",
        "no",
        "nor",
        "not",
        "now",
        "of",
        "off",
        "on",
        "once",
        "one",
        "only",
        "or",
        "other",
        "our",
        "ours",
        "out",
        "over",
        "own",
        "per",
        "please",
        "put",
        "same",
        "say",
        "says",
        "shall",
        "she",
        "should",
        "show",
        "so",
        "some",
        "such",
        "than",
        "that",
        "the",
        "their",
        "theirs",
        "them",
        "then",
        "there",
        "these",
        "they",
        "this",
        "those",
        "through",
        "thus",
        "to",
        "too",
        "under",
        "until",
        "up",
        "upon",
        "us",
        "use",
        "used",
        "using",
        "very",
        "want",
        "was",
        "way",
        "we",
        "well",
        "were",
        "what",
        "whatever",
        "when",
        "where",
        "whether",
        "which",
        "while",
        "who",
        "whom",
        "whose",
        "why",
        "will",
        "with",
        "within",
        "without",
        "would",
        "yes",
        "yet",
        "you",
        "your",
        "yours",
    )
)

# Function words of Chinese: particles, pronouns, copulas and question words.
CHINESE = frozenset(
    (
        "的",
        "了",
        "吗",
        "呢",
        "吧",
        "啊",
        "呀",
        "么",
        "是",
        "在",
        "和",
        "与",
        "及",
        "或",
        "也",
        "都",
        "就",
        "把",
        "被",
        "给",
        "这",
        "那",
        "哪",
        "有",
        "个",
        "我",
        "你",
        "他",
        "她",
        "它",
        "我们",
        "你们",
        "他们",
        "什么",
        "怎么样",
        "怎么",
        "怎样",
        "如何",
        "为什么",
        "哪里",
        "哪些",
        "请",
        "可以",
        "能",
        "会",
        "要",
        "一个",
        "一下",
        # Measured on the Chinese evaluation set: these matched unrelated passages. Single
        # characters that start or end many content words (得 in 记得, 时 in 时差) stay out.
        "很",
        "该",
        "才",
        "些",
        "一些",
        "那些",
        "这些",
        "这个",
        "那个",
        "之前",
        "之后",
        "以后",
        "以前",
        "时候",
        "多久",
        "多少",
        "应该",
        "需要",
        "因为",
        "所以",
        "如果",
        "但是",
        "还是",
        "就是",
        "没有",
        "为了",
        "不会",
        "不能",
    )
)

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af"
_CJK_RUN = re.compile(f"[{_CJK}]+")
# Longest first, so 为什么 is removed whole rather than leaving 为 behind.
_CHINESE_STOPS = re.compile("|".join(sorted(map(re.escape, CHINESE), key=len, reverse=True)))


def _terms(query: str, *, drop: bool) -> list[str]:
    terms: list[str] = []
    for word in re.findall(r"\w+", query.lower()):
        if _CJK_RUN.fullmatch(word):
            parts = _CHINESE_STOPS.split(word) if drop else [word]
            terms += [p for p in parts if p]
        elif _CJK_RUN.search(word) or not drop or word not in ENGLISH:
            terms.append(word)  # a mixed word ("gpu显存") is kept whole
    return terms


def content_terms(query: str) -> list[str]:
    """The query's words without stop words (all its words if only stop words)."""
    return _terms(query, drop=True) or _terms(query, drop=False)


def is_cjk(term: str) -> bool:
    """Whether ``term`` holds Chinese, Japanese or Korean characters (no word boundaries)."""
    return bool(_CJK_RUN.search(term))


def search_terms(query: str) -> list[str]:
    """The content terms to search for, each Chinese run of 3+ characters as its pairs.

    Chinese has no spaces, so a run between stop words is often a whole clause
    (水一天, 涨落两回) that no document says verbatim; its overlapping character pairs
    (涨落, 落两, 两回) find the words inside it, as CJK search engines' bigrams do.
    """
    found: list[str] = []
    for term in content_terms(query):
        if len(term) > 2 and _CJK_RUN.fullmatch(term):
            found += [term[i : i + 2] for i in range(len(term) - 1)]
        else:
            found.append(term)
    return list(dict.fromkeys(found))
