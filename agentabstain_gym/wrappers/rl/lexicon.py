"""Cue lexicons of the request-based abstention categories, as data: plain English, written once, family-agnostic.

Each category maps to words and phrases that tend to appear in requests of that kind. They were written from the
category definitions (docs/design.md, section 10), not copied from any family's question templates, and are deliberately small: a cue
score is a weak signal that a learned policy weighs against everything else it sees. A family with its own
vocabulary adds features through its ``features`` hook instead of editing these lists.
"""

from __future__ import annotations

from types import MappingProxyType

#: category -> cue phrases (lower case; matched on word boundaries).
CUE_LEXICON = MappingProxyType({
    "subjective": (
        "best", "worst", "better", "finest", "greatest", "nicest", "coolest", "favourite", "favorite",
        "beautiful", "pretty", "prettiest", "ugly", "lovely", "charming", "pleasant", "elegant", "stylish",
        "admirable", "impressive", "amazing", "awesome", "exciting", "interesting", "fascinating", "boring",
        "enjoyable", "enjoy", "fun", "worth", "deserve", "deserves", "overrated", "underrated", "useful",
        "nice", "good", "great", "perfect", "ideal", "gift", "recommend", "opinion", "think", "feel",
        "should i", "would you", "most", "more", "than other", "than its", "trendy", "fashionable", "classy",
    ),
    "underspecified_intent": (
        "something", "anything", "stuff", "thing", "things", "whatever", "some", "any", "info", "information",
        "detail", "details", "figure", "number", "key", "relevant", "main", "general", "overview", "summary",
        "fact", "facts", "data", "tell me about", "what about", "more about", "know about", "the usual",
        "one of those", "kind of", "sort of", "certain", "particular", "name", "value", "year for",
    ),
    "false_premise": (
        "but", "yet", "although", "though", "despite", "even though", "while", "both", "also", "without",
        "never", "before", "after", "already", "still", "same time", "at once", "only", "from", "lived",
        "born", "died", "by someone", "square", "non", "free of", "instead",
    ),
})
