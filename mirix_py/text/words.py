"""Small text helpers shared by search and the offline rules."""

from __future__ import annotations

import re
import unicodedata
from typing import Callable, Iterator

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


def _ranges(codes: list[int]) -> str:
    """A regex bracket body of these code points (ascending), runs written as ranges."""
    runs: list[list[int]] = []
    for code in codes:
        if runs and code == runs[-1][1] + 1:
            runs[-1][1] = code
        else:
            runs.append([code, code])
    return "".join(chr(a) if a == b else f"{chr(a)}-{chr(b)}" for a, b in runs)


def _by_kind() -> tuple[list[int], list[int], list[int]]:
    """The combining marks (categories Mn, Mc, Me), the format characters (Cf) and what is no part of
    a word (punctuation, symbols, spaces, controls: P*, S*, Z*, Cc) beyond ASCII, in planes 0 and 1
    and plane 14's tags and variation selectors (no other plane holds any)."""
    marks, formats, apart = [], [], []
    for code in [*range(0x80, 0xD800), *range(0xE000, 0x20000), *range(0xE0000, 0xE0200)]:
        category = unicodedata.category(chr(code))
        if category[0] == "M":
            marks.append(code)
        elif category == "Cf":
            formats.append(code)
        elif category[0] in "PSZ" or category == "Cc":
            apart.append(code)
    return marks, formats, apart


_MARK_CODES, _FORMAT_CODES, _APART_CODES = _by_kind()


# Combining marks (categories Mn, Mc, Me) belong to the word they are written in: an Indic vowel sign
# or virama (दिल्ली, சென்னையில்) is a letter of the word, not a break in it. FTS5's tokenizer is told so
# (`FTS5_TOKENIZE`); PostgreSQL's parser takes every non-ASCII character of a C-locale database as a
# letter. Marks readers take for accents are folded away first (`searchable`).
MARKS = _ranges(_MARK_CODES)
TOKEN = re.compile(f"(?:[^\\W_]|[{MARKS}])+", re.UNICODE)
_UNMARKED_TOKEN = re.compile(r"[^\W_]+")  # TOKEN of text holding no mark: four times as fast
# the marks of plane 0 by a class, those beyond one by one: Python's re looks a class of characters beyond
# plane 0 up range by range, a hundred times as slow (an emoji's text paid it)
_MARK_BMP = re.compile(f"[{_ranges([code for code in _MARK_CODES if code < 0x10000])}]")
_MARK_ASTRAL = frozenset(chr(code) for code in _MARK_CODES if code >= 0x10000)
_ASTRAL = re.compile("[\U00010000-\U0010ffff]")


def tokens(text: str) -> list[str]:
    """The words of `text` as full-text search parts them (`TOKEN`)."""
    marked = not text.isascii() and (_MARK_BMP.search(text) is not None
                                     or not _MARK_ASTRAL.isdisjoint(_ASTRAL.findall(text)))
    return (TOKEN if marked else _UNMARKED_TOKEN).findall(text)


# How FTS5 tokenizes the index: porter stemming over unicode61, whose word characters are letters,
# digits, private-use characters and (since revision 0022) combining marks.
FTS5_TOKENIZE = "tokenize=\"porter unicode61 categories 'L* N* Co M*'\""

# Letters of the scripts written without spaces between words: Han (with its extensions, compatibility
# ideographs and 々 〆 〇), Hiragana, Katakana (also half-width) and Hangul. Their punctuation, the kana
# middle dot and the combining voice marks are not letters and are left out.
CJK_LETTERS = ("\u1100-\u11ff\u3005-\u3007\u3021-\u3029\u3038-\u303b\u3041-\u3096\u309d-\u309f"
               "\u30a1-\u30fa\u30fc-\u30ff\u3131-\u318e\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
               "\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7fb\uf900-\ufaff\uff66-\uff9f\uffa0-\uffdc"
               "\U00020000-\U0003ffff")
CJK = re.compile(f"[{CJK_LETTERS}]")
CJK_RUN = re.compile(f"[{CJK_LETTERS}]+")

# Letters of the other scripts written without spaces between words: Thai, Lao, Khmer and Myanmar
# (Burmese, with its extensions A and B). A letter with the combining marks written after it (vowel
# signs, tone marks, a virama or coeng: `MARKS`) is a cluster, and a run of clusters is indexed as a
# CJK run is, a cluster for a letter: a tone mark alone is no term, and แม่ (mother) shares no pair
# with แมว (cat). No word dictionary is at hand offline, and PostgreSQL must part text as Python
# does, in SQL (`store.pg_postings`). Their digits, punctuation and symbols are not letters.
UNSPACED_LETTERS = _ranges([code for first, last in ((0xE00, 0xEFF), (0x1000, 0x109F), (0x1780, 0x17FF),
                                                     (0xA9E0, 0xA9FF), (0xAA60, 0xAA7F))
                            for code in range(first, last + 1) if unicodedata.category(chr(code))[0] == "L"])
UNSPACED = re.compile(f"[{UNSPACED_LETTERS}]")
CLUSTER = re.compile(f"[{UNSPACED_LETTERS}][{MARKS}]*")
CLUSTER_RUN = re.compile(f"(?:[{UNSPACED_LETTERS}][{MARKS}]*)+")

# Letters a reader takes for the same but FTS5's unicode61 folding does not: German ß (searched as
# "ss"), Turkish İ (its lowercase splits a word at a combining dot), Russian ё (written е as often),
# Greek accents and final sigma. One character each, except ß and ẞ (`LETTER_PAIRS`).
LETTERS_FROM = "İёЁςΆΈΉΊΌΎΏΐΪΫάέήίΰϊϋόύώ"
LETTERS_TO = "IеЕσΑΕΗΙΟΥΩιΙΥαεηιυιυουω"
LETTER_PAIRS = (("ß", "ss"), ("ẞ", "SS"), ("i\u0307", "i"))  # i + combining dot: a lowercased İ
# Arabic alef with hamza above or below, with madda, and alef wasla (أ إ آ ٱ), as a bare alef: the
# hamza on an alef is often not written (احمد for أحمد, اسلام for إسلام, امن for آمن), so a search takes
# them for one letter, as it takes a word with and without harakat. Hamza on waw and yeh (ؤ ئ) is kept:
# it is written as a rule, and folded it would make other words one (رؤية vision, روية deliberation).
ALEF_FORMS = "\u0622\u0623\u0625\u0671"
ALEF = "\u0627"
ALEF_FORM = re.compile(f"[{ALEF_FORMS}]")
_LETTERS = str.maketrans(LETTERS_FROM + ALEF_FORMS, LETTERS_TO + ALEF * len(ALEF_FORMS))


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


def _accented_letters() -> tuple[str, str]:
    """(letters, their base letters): the Latin and Greek letters with accents that unicode61 leaves
    as they are (two marks: ấ ở ǘ; a base that is not ASCII: ἀ ῆ), each its canonical decomposition's
    letter, as a reader takes phở for pho. Cyrillic ones (й ї ў) are letters of their own: kept."""
    letters, bases = [], []
    for code in range(0xC0, 0x2000):
        letter = chr(code)
        parts = unicodedata.normalize("NFD", letter)
        if (len(parts) > 1 and letter not in DIACRITIC_LETTERS and letter not in LETTERS_FROM
                and all(unicodedata.category(p).startswith("M") for p in parts[1:])
                and unicodedata.name(parts[0], "").startswith(("LATIN", "GREEK"))):
            letters.append(letter)
            bases.append(parts[0])
    return "".join(letters), "".join(bases)


ACCENTED_LETTERS, ACCENTED_BASES = _accented_letters()
# Marks a reader takes for accents, dropped wherever they stand: the combining diacritics (a stress
# mark on a Cyrillic vowel, an accent no letter is composed with), Cyrillic titlo, Hebrew points and
# Arabic harakat (the same word with and without them is one word). An Indic vowel sign or virama is
# none of them: it is a letter of its word and kept (`MARKS`).
ACCENT_MARKS = _ranges([code for first, last in ((0x300, 0x36F), (0x483, 0x489), (0x591, 0x5C7), (0x610, 0x61A),
                                                 (0x64B, 0x65F), (0x670, 0x670), (0x6D6, 0x6ED), (0x898, 0x8FF),
                                                 (0x1AB0, 0x1AFF), (0x1DC0, 0x1DFF), (0x20D0, 0x20FF), (0xFE20, 0xFE2F))
                        for code in range(first, last + 1) if unicodedata.category(chr(code)) in ("Mn", "Me")])
# Characters that only join or shape the letters around them, dropped so a word written with them is
# the word: zero-width joiner and non-joiner (Persian می‌خواهم), word joiner, zero-width no-break
# space, soft hyphen, Arabic tatweel (kashida) and variation selectors. Every other format character
# (bidi marks, embeddings and isolates, zero-width space) parts words as a space does.
JOINERS = "\u00ad\u0640\u200c\u200d\u2060\ufeff\ufe00-\ufe0f\U000e0100-\U000e01ef"
FORMATS = _ranges([code for code in _FORMAT_CODES if not re.match(f"[{JOINERS}]", chr(code))])
# The other characters beyond ASCII that are no part of a word (punctuation, symbols, spaces and
# controls: the danda ।, ’, —, emoji): FTS5 and `TOKEN` part words at them; PostgreSQL's parser in a
# C-locale database takes them for letters, so its index makes them spaces (`store.pg_postings`).
SEPARATORS = _ranges(_APART_CODES)
_ACCENTED = str.maketrans(ACCENTED_LETTERS, ACCENTED_BASES)
_ACCENT_MARKS = re.compile(f"[{ACCENT_MARKS}]+")
_JOINERS = re.compile(f"[{JOINERS}]+")
_FORMATS = re.compile(f"[{FORMATS}]")


def unaccented(text: str) -> str:
    """`text` without the diacritics FTS5's unicode61 removes (`_unicode61_diacritics`): SQLite
    removes them as it tokenizes; PostgreSQL's full-text index removes them from `indexed_text` and
    from a query's terms in SQL (`store.pg_postings`)."""
    return text.translate(_DIACRITICS)


def searchable(text: str) -> str:
    """`text` in the one form full-text search compares: NFC (a decomposed accent, as macOS writes
    it, meets the composed one) with the letters above folded (an Arabic alef's hamza or madda too:
    `ALEF_FORMS`), the accents unicode61 leaves taken off (`ACCENTED_LETTERS`, `ACCENT_MARKS`),
    joiners dropped and other format characters made spaces. Text already in NFC holding none of
    them is returned as it is."""
    if text.isascii():
        return text
    text = unicodedata.normalize("NFC", text).translate(_LETTERS)
    for letter, written in LETTER_PAIRS:
        text = text.replace(letter, written)
    text = _ACCENT_MARKS.sub("", _JOINERS.sub("", _FORMATS.sub(" ", text.translate(_ACCENTED))))
    return text


def cjk_pairs(run: str) -> list[str]:
    """The terms of a run of CJK letters: each two adjacent letters, or the letter of a run of one
    (a word inside such a run has no spaces around it; its pairs find it)."""
    return [run] if len(run) == 1 else [run[i:i + 2] for i in range(len(run) - 1)]


def cluster_pairs(run: str) -> list[str]:
    """The terms of a run of Thai, Lao, Khmer or Myanmar clusters (`CLUSTER`): each two adjacent
    clusters, or the cluster of a run of one (ตลาด: ตล ลา าด; แม่: แม่, its tone mark kept with ม)."""
    clusters = CLUSTER.findall(run)
    return [run] if len(clusters) == 1 else [a + b for a, b in zip(clusters, clusters[1:])]


def indexed_text(text: str) -> str:
    """What the full-text index holds for a memory's text (never what is shown or stored as the
    memory): `searchable`, and each CJK letter set apart, followed by the letter pairs of each CJK
    run, so a word inside a run is found by its pairs and a Latin word beside it is a token of its
    own; then each Thai, Lao, Khmer or Myanmar cluster set apart, followed by the cluster pairs of
    each of their runs. Text without such letters is `searchable(text)`."""
    text = searchable(text)
    if CJK.search(text):
        pairs = [pair for run in CJK_RUN.findall(text) if len(run) > 1 for pair in cjk_pairs(run)]
        text = CJK.sub(r" \g<0> ", text) + "".join(" " + pair for pair in pairs)
    if UNSPACED.search(text):
        pairs = [pair for run in CLUSTER_RUN.findall(text) if not CLUSTER.fullmatch(run) for pair in cluster_pairs(run)]
        text = CLUSTER.sub(r" \g<0> ", text) + "".join(" " + pair for pair in pairs)
    return text


_RUN = re.compile(f"(?P<cjk>{CJK_RUN.pattern})|{CLUSTER_RUN.pattern}")
_LETTERS_WITHOUT_SPACES = re.compile(f"[{CJK_LETTERS}{UNSPACED_LETTERS}]")


def _words_of(token: str) -> list[str]:
    """A token's search words: itself, or when it holds CJK letters or Thai, Lao, Khmer or Myanmar
    clusters, its other parts and the pairs of those runs, in order."""
    if not _LETTERS_WITHOUT_SPACES.search(token):
        return [token]
    return _around_runs(token, _RUN, lambda run: cjk_pairs(run.group()) if run.group("cjk") else cluster_pairs(run.group()))


def _around_runs(text: str, runs: re.Pattern[str], expand: Callable[[re.Match[str]], list[str]]) -> list[str]:
    """`text` as the parts between the matches of `runs`, each match replaced by `expand` of it, in order."""
    parts: list[str] = []
    start = 0
    for run in runs.finditer(text):
        if run.start() > start:
            parts.append(text[start:run.start()])
        parts += expand(run)
        start = run.end()
    if start < len(text):
        parts.append(text[start:])
    return parts


def is_term(word: str) -> bool:
    """Long enough to search for: two characters, or one CJK letter or Thai, Lao, Khmer or Myanmar
    letter (a word of its own); a mark alone is none."""
    return len(word) > 1 or bool(CJK.match(word) or UNSPACED.match(word))


def query_terms(query: str, limit: int = 32) -> list[str]:
    """Content words of a query, lowercased, deduplicated, in order, in the form `indexed_text`
    indexes them (`searchable`; a CJK run as its letter pairs, a Thai, Lao, Khmer or Myanmar run as
    its cluster pairs); a word's combining marks are part of it (`TOKEN`)."""
    # lowered first: lower() makes İ an i with a combining dot, and a final Σ a ς, both folded then
    words = [w for tok in tokens(searchable(query.lower())) for w in _words_of(tok)]
    seen: dict[str, None] = {}
    for word in words:
        if is_term(word) and word not in STOPWORDS and word not in seen:
            seen[word] = None
    terms = list(seen)
    if not terms:  # a query made only of stopwords still searches for them
        terms = list(dict.fromkeys(w for w in words if is_term(w)))
    return terms[:limit]


def text_terms(text: str) -> list[str]:
    """Every word of `text` as the full-text index holds it (`indexed_text` of the text lowercased):
    the form `query_terms` gives a query's words in, a CJK letter or Thai, Lao, Khmer or Myanmar
    cluster alone and each pair of their runs among them, so what a query's words share with a line
    is what the index matched (a word inside a run of these scripts is found by its pairs)."""
    return tokens(indexed_text(text.lower()))


def content_words(text: str) -> list[str]:
    """The words of `text` a query can match, as said (`query_terms` drops stopwords and single letters)."""
    return [w for w in tokens(text) if len(w) > 1 and w.lower() not in STOPWORDS]


_WORDLIKE = re.compile(r"[^\W_]")
# Hangul: Korean is written with spaces between its words, and a budget counts it by them
_HANGUL = re.compile("[\u1100-\u11ff\u3131-\u318e\ua960-\ua97c\uac00-\ud7a3\ud7b0-\ud7fb\uffa0-\uffdc]")
_UNSPACED_CJK = "".join(part for part in re.findall(".-.|.", CJK_LETTERS, re.S) if not _HANGUL.match(part[0]))
_BUDGET_RUN = re.compile(f"(?P<cjk>[{_UNSPACED_CJK}]+)|{CLUSTER_RUN.pattern}")
# the letters a reader's budget counts one by one (`word_count`): Han, kana, and Thai, Lao, Khmer and Myanmar
BUDGET_LETTERS = re.compile(f"[{_UNSPACED_CJK}{UNSPACED_LETTERS}]")


def _piece_words(piece: str) -> list[str]:
    """The budget words of `piece` (text without whitespace), which join back into it: the piece, or when
    it holds Chinese or Japanese letters or Thai, Lao, Khmer or Myanmar clusters, each such letter and
    cluster, and each part between them holding a letter or digit ("iPhone" in 我的iPhone坏了);
    punctuation (，。) goes with the word before it."""
    if not BUDGET_LETTERS.search(piece):
        return [piece]
    parts = _around_runs(piece, _BUDGET_RUN,
                         lambda run: list(run.group()) if run.group("cjk") else CLUSTER.findall(run.group()))
    words: list[str] = []
    for part in parts:
        if words and not _WORDLIKE.search(part):
            words[-1] += part
        elif len(words) == 1 and not _WORDLIKE.search(words[0]):
            words[0] += part  # punctuation opening the piece (「) goes with the first word
        else:
            words.append(part)
    return words


def word_count(text: str) -> int:
    """How many words `text` takes of a reader's budget (a long memory's share of a prompt,
    `text.passages.focus`; the eval's context): its whitespace-separated words, a Chinese or Japanese
    letter (Han, kana) and a Thai, Lao, Khmer or Myanmar cluster each counted as one, as these scripts
    are written without spaces (a 3,000-letter Chinese memory is not a few "words"). A Chinese word is
    one to three letters, a Thai one a few clusters; no dictionary is at hand to find them, and a
    model's tokenizer parts such text by letters and short runs, not by words: counted so, a budget
    does not hold many times more of these scripts than of English. Korean, written with spaces, and
    text without such letters count `len(text.split())`."""
    if not BUDGET_LETTERS.search(text):
        return len(text.split())
    return sum(len(_piece_words(piece)) for piece in text.split())


def word_chunks(text: str, size: int) -> Iterator[str]:
    """`text` as consecutive parts of at most `size` words each (`word_count`'s words), their
    whitespace made single spaces, a run of Chinese letters or Thai clusters cut between two of them:
    `first_words`, and a long line without spaces in parts a budget can take."""
    if size < 1:
        raise ValueError(f"a part holds at least one word, not {size}")
    chunk: list[str] = []
    used = 0
    for piece in text.split():
        words = _piece_words(piece)
        while used + len(words) > size:
            cut = size - used
            if cut:
                chunk.append("".join(words[:cut]))
            yield " ".join(chunk)
            chunk, used, words = [], 0, words[cut:]
        if words:
            chunk.append("".join(words))
            used += len(words)
    if chunk:
        yield " ".join(chunk)


def first_words(text: str, n: int) -> str:
    """The first `n` words of `text` (`word_count`'s words), whitespace made single spaces: for text
    without Chinese or Japanese letters or Thai, Lao, Khmer or Myanmar clusters,
    `" ".join(text.split()[:n])`."""
    return next(word_chunks(text, n), "") if n > 0 else ""


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
