"""Small text helpers shared by search and the offline rules."""

from __future__ import annotations

import re
import unicodedata

STOPWORDS = frozenset(
    """a about above after again against all am an and any are aren't as at be because been before
    being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
    don't down during each few for from further had hadn't has hasn't have haven't having he he'd
    he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in into
    is isn't it it's its itself let's me more most mustn't my myself no nor not of off on once only
    or other ought our ours ourselves out over own same shan't she she'd she'll she's should
    shouldn't so some such than that that's the their theirs them themselves then there there's
    these they they'd they'll they're they've this those through to too under until up very was
    wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
    who who's whom why why's with won't would wouldn't you you'd you'll you're you've your yours
    yourself yourselves s t d ll m re ve just also really yeah oh hey hi hello thanks thank ok okay
    did does do""".split()
)


TOKEN = re.compile(r"[^\W_]+", re.UNICODE)

# Letters of the scripts written without spaces between words: Han (with its extensions, compatibility
# ideographs and 々 〆 〇), Hiragana, Katakana (also half-width) and Hangul. Their punctuation, the kana
# middle dot and the combining voice marks are not letters and are left out.
CJK_LETTERS = ("\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3041-\u3096\u309d-\u309f"
               "\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
               "\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7fb\uf900-\ufaff\uff66-\uff9f\uffa0-\uffdc"
               "\U00020000-\U0003ffff")
CJK = re.compile(f"[{CJK_LETTERS}]")
CJK_RUN = re.compile(f"[{CJK_LETTERS}]+")

# Letters a reader takes for the same but FTS5's unicode61 folding does not: German ß (searched as
# "ss"), Turkish İ (its lowercase splits a word at a combining dot), Russian ё (written е as often),
# Greek accents and final sigma. One character each, except ß and ẞ (`LETTER_PAIRS`).
LETTERS_FROM = "İёЁςΆΈΉΊΌΎΏΐΪΫάέήίΰϊϋόύώ"
LETTERS_TO = "IеЕσΑΕΗΙΟΥΩιΙΥαεηιυιυουω"
LETTER_PAIRS = (("ß", "ss"), ("ẞ", "SS"), ("i\u0307", "i"))  # i + combining dot: a lowercased İ
_LETTERS = str.maketrans(LETTERS_FROM, LETTERS_TO)


def _unicode61_diacritics() -> tuple[str, str, str]:
    """(letters, their base letters, marks): what FTS5's unicode61 tokenizer folds as it tokenizes
    (its default remove_diacritics 1), so SQLite's index does it and PostgreSQL's must do it in SQL
    (`store.pg_postings`): a letter that decomposes (NFKD) into one ASCII letter and one combining
    mark becomes that letter, lowercase (é e, Å a, ẛ s); those marks written apart are dropped. A
    letter of two marks (ấ) is left as it is. Every such letter lies below U+2130."""
    letters, bases, marks = [], [], set()
    for code in range(0xC0, 0x2130):
        parts = unicodedata.normalize("NFKD", chr(code))
        if len(parts) == 2 and parts[0].isascii() and parts[0].isalpha() and unicodedata.combining(parts[1]):
            letters.append(chr(code))
            bases.append(parts[0].lower())
            marks.add(parts[1])
    return "".join(letters), "".join(bases), "".join(sorted(marks))


DIACRITIC_LETTERS, DIACRITIC_BASES, DIACRITIC_MARKS = _unicode61_diacritics()
_DIACRITICS = str.maketrans(DIACRITIC_LETTERS, DIACRITIC_BASES, DIACRITIC_MARKS)


def unaccented(text: str) -> str:
    """`text` without the diacritics FTS5's unicode61 removes (`_unicode61_diacritics`): SQLite
    removes them as it tokenizes; PostgreSQL's full-text index removes them from `indexed_text` and
    from a query's terms in SQL (`store.pg_postings`)."""
    return text.translate(_DIACRITICS)


def searchable(text: str) -> str:
    """`text` in the one form full-text search compares: NFC (a decomposed accent, as macOS writes
    it, meets the composed one) with the letters above folded. Text already in NFC holding none of
    them is returned as it is."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text).translate(_LETTERS)
    for letter, written in LETTER_PAIRS:
        text = text.replace(letter, written)
    return text


def cjk_pairs(run: str) -> list[str]:
    """The terms of a run of CJK letters: each two adjacent letters, or the letter of a run of one
    (a word inside such a run has no spaces around it; its pairs find it)."""
    return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]


def indexed_text(text: str) -> str:
    """What the full-text index holds for a memory's text (never what is shown or stored as the
    memory): `searchable`, and each CJK letter set apart, followed by the letter pairs of each CJK
    run, so a word inside a run is found by its pairs and a Latin word beside it is a token of its
    own. Text without CJK letters is `searchable(text)`."""
    text = searchable(text)
    if not CJK.search(text):
        return text
    pairs = [pair for run in CJK_RUN.findall(text) if len(run) > 1 for pair in cjk_pairs(run)]
    return CJK.sub(r" \g<0> ", text) + "".join(" " + pair for pair in pairs)


def _words_of(token: str) -> list[str]:
    """A token's search words: itself, or when it holds CJK letters, its other parts and the pairs
    of its CJK runs, in order."""
    if not CJK.search(token):
        return [token]
    words: list[str] = []
    start = 0
    for run in CJK_RUN.finditer(token):
        if run.start() > start:
            words.append(token[start:run.start()])
        words += cjk_pairs(run.group())
        start = run.end()
    if start < len(token):
        words.append(token[start:])
    return words


def _is_term(word: str) -> bool:
    """Long enough to search for: two characters, or one CJK letter (a word of its own)."""
    return len(word) > 1 or bool(CJK.match(word))


def query_terms(query: str, limit: int = 32) -> list[str]:
    """Content words of a query, lowercased, deduplicated, in order, in the form `indexed_text`
    indexes them (`searchable`; a CJK run as its letter pairs)."""
    # lowered first: lower() makes İ an i with a combining dot, and a final Σ a ς, both folded then
    words = [w for tok in TOKEN.findall(searchable(query.lower())) for w in _words_of(tok)]
    seen: dict[str, None] = {}
    for word in words:
        if _is_term(word) and word not in STOPWORDS and word not in seen:
            seen[word] = None
    terms = list(seen)
    if not terms:  # a query made only of stopwords still searches for them
        terms = list(dict.fromkeys(w for w in words if _is_term(w)))
    return terms[:limit]


def content_words(text: str) -> list[str]:
    """The words of `text` a query can match, as said (`query_terms` drops stopwords and single letters)."""
    return [w for w in TOKEN.findall(text) if len(w) > 1 and w.lower() not in STOPWORDS]


def word_count(text: str) -> int:
    return len(text.split())


def is_sentence_start(text: str, pos: int, end_punct: str = ".!?") -> bool:
    """True when `pos` begins a sentence: text start, after a newline, after end punctuation (but
    not after an initial like "J. K."), or after an opening quote/bracket. Looks back only over
    the whitespace before `pos`, so scanning every token stays linear."""
    i = pos
    while i > 0 and text[i - 1] in " \t":
        i -= 1
    if i == 0 or text[i - 1] in "\n\r":
        return True
    c = text[i - 1]
    if c in end_punct:
        initial = i >= 2 and text[i - 2].isupper() and (i < 3 or not text[i - 3].isalnum())
        return not initial and i < pos  # "e.g.Bob" is not a sentence break; ". Bob" is
    if c in "\"“(" and (i == 1 or text[i - 2].isspace()):
        return True
    return False


def human_bytes(n: float) -> str:
    """A byte count for people: "632 B", "112.5 KB", "3.1 MB"."""
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"
