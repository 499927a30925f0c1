"""What a model may write, judged against the batch it was shown: pure functions.

The same test decides whether the router is offered the vault, which values the vault tool's
schema enumerates, and whether a vault value a model sent is accepted: a model cannot be asked
for a value no word of the batch could be, and cannot store one that is not in the batch.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Iterable, Sequence

from mirix_py.secrets.detection import value_fits
from mirix_py.records import MemoryType
from mirix_py.text.words import word_count

VAULT_ENTRY_TYPES = ("password", "api_key", "card_number", "card_cvv", "card_expiry", "bank_account",
                     "recovery_code", "id_number", "address", "phone", "email", "booking")

# a vault value holds a digit or a symbol of keys and addresses: plain words, even hyphenated or
# with punctuation, are no secret (passphrases in words are the vault rules' to find)
VAULT_VALUE = re.compile(r"[\d@#$%^&*_+=/\\|~]")
# values with that shape that are still no secret: years, dates, times, ordinals, amounts, short numbers
NOT_A_SECRET = re.compile(
    r"""^(?:
        \d{1,2}                                   # a count, a day
      | (?:19|20)\d{2}s?                          # a year, a decade
      | \d{1,4}(?:[-/.]\d{1,2}){1,2}              # 2023-05-07, 7/5, 07.05.23
      | \d{1,2}:\d{2}(?::\d{2})?(?:am|pm)?        # 20:00, 8:30pm
      | \d{1,2}(?:am|pm|st|nd|rd|th|s)            # 8pm, 1st, 90s
      | [$€£]\d[\d,.]*[kmb]?                      # $5, €1,200
      | \d[\d,.]*(?:%|k|m|km|kg|mi|lbs?)          # 50%, 10k, 5km
      | [&+=/|~*#@_\\^%$-]+                       # symbols alone
    )$""", re.IGNORECASE | re.VERBOSE)
EDGE_PUNCTUATION = "\"'“”‘’.,;:!?()[]{}<>"
SAME_WORDS_SHARE = 0.8  # of both texts' words together: a short text written again
MAX_ENUMERATED = 40  # more candidates than this: the schema takes any string, grounding still checks


def _words(text: str) -> list[str]:
    return [w.strip(EDGE_PUNCTUATION) for w in text.split() if not w.startswith("[vault:")]


def secret_shaped(value: str) -> bool:
    """Whether a value looks like something the vault keeps (not whether it is secret)."""
    value = value.strip()
    return bool(value) and bool(VAULT_VALUE.search(value)) and not NOT_A_SECRET.match(value)


def vault_value_candidates(texts: Iterable[str]) -> list[str]:
    """Every value of these texts a model may store in the vault: words shaped like a secret, and runs
    of such words that are all digits (a card number written in groups). In order, without repeats."""
    out: dict[str, None] = {}
    for text in texts:
        run: list[str] = []
        for word in [*_words(text), ""]:
            if word and secret_shaped(word):
                out.setdefault(word, None)
                run = run + [word] if word.replace("-", "").isdigit() else []
                if len(run) > 1:
                    out.setdefault(" ".join(run), None)
            elif word.isdigit() and run:  # a short group inside a long number ("4111 1111 ... 11")
                run.append(word)
                out.setdefault(" ".join(run), None)
            else:
                run = []
    return list(out)


def fits_some_entry_type(value: str) -> bool:
    return any(value_fits(kind, value) for kind in VAULT_ENTRY_TYPES)


def vault_value_problem(value: str, caption: str, texts: Sequence[str], entry_type: str | None = None) -> str | None:
    """Why a model's vault value cannot be stored, or None. Shown to the model for its correction.
    With `entry_type`, the value must also have that type's shape (the vault rules' `value_fits`):
    a word from the chat stored as a "password" would otherwise be redacted from every memory."""
    value = value.strip()
    if not value:
        return "secret_value is empty"
    if value.startswith("[vault:"):
        return "that value is already stored in the vault (a [vault:...] placeholder): leave it alone"
    if not secret_shaped(value):
        return ("secret_value is plain words, a date, a time or an amount: the vault keeps values "
                "such as passwords, keys, numbers and addresses; call nothing_to_record")
    if not any(value in text for text in texts):
        return ("secret_value does not occur in this batch: store only values copied exactly "
                "from the messages, or call nothing_to_record")
    if value in caption:
        return "the caption contains the secret value: describe what it is for without it"
    if entry_type is not None and not value_fits(entry_type, value):
        fitting = [k for k in VAULT_ENTRY_TYPES if value_fits(k, value)]
        return (f"secret_value does not look like a {entry_type}"
                + (f" (it could be: {', '.join(fitting)})" if fitting else ": call nothing_to_record"))
    return None


STEP_LINE = re.compile(r"(?m)^\s*(?:\d{1,2}[.)]|[-*•]|\$)\s+\S")
STEP_WORDS = re.compile(r"\b(?:(?:steps?|how to|instructions?|recipes?|first[, ].{0,80}\bthen)\b|run `)",
                        re.IGNORECASE | re.S)
DOCUMENT_WORDS = 80  # a message this long may hold a document worth keeping whole


def can_feed_procedure(text: str) -> bool:
    """A numbered or bulleted list of two lines or more, shell commands, or words that name steps."""
    return len(STEP_LINE.findall(text)) >= 2 or bool(STEP_WORDS.search(text))


def can_feed_resource(text: str, kind: str = "text") -> bool:
    """A document, a screenshot's text or a long message: chat turns are kept as episodes already. Long
    as a reader's budget counts it (`word_count`: a Chinese letter, a Thai cluster a word)."""
    return kind in ("document", "screenshot") or word_count(text) >= DOCUMENT_WORDS


def offered_memory_types(texts: Sequence[str], kinds: Sequence[str] | None = None) -> list[MemoryType]:
    """The memory types whose managers can take anything from these texts, by their form: episodes
    only from two inputs or more or from a screen or document (a chat message is kept as its own
    episode already, and the episodic manager sums up an event told across several), the vault only
    when some value has a vault entry type's shape, procedures only for steps, resources only for
    documents, screens and long texts. A type no text can feed cannot be routed to (a weak router
    added `resource` to most chat batches, and a greeting routed to the vault invites an invented
    secret)."""
    kinds = list(kinds) if kinds is not None else ["text"] * len(texts)
    has_values = any(fits_some_entry_type(v) for v in vault_value_candidates(texts))
    feeds = {
        MemoryType.episodic: len(texts) >= 2 or any(k in ("document", "screenshot") for k in kinds),
        MemoryType.knowledge_vault: has_values,
        MemoryType.procedural: any(can_feed_procedure(t) for t in texts),
        MemoryType.resource: any(can_feed_resource(t, k) for t, k in zip(texts, kinds)),
    }
    return [t for t in MemoryType if feeds.get(t, True)]


# ---------------------------------------------------------------- memories' words

STOPWORDS = frozenset("""
about above after again against also among another anything around because been before being below
between both could does doing down during each even every from further have having here into itself
just more most much must only other over same should some such than that their theirs them then
there these they this those through under until very want were what when where which while will with
within without would your yours the and for are but not you all any can had her was one our out has
him his how its may new now old see two way who did get got let put say she too use
""".split())
GROUNDED_SHARE = 1 / 2  # of a memory's content words that must occur in what the model was shown
DUPLICATE_SHARE = 0.8  # of a new memory's content words already held by one existing memory
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


def content_words(text: str) -> list[str]:
    """Words that carry content: four letters or more, not a stopword, lower case."""
    return [w for w in (m.group(0).lower() for m in _WORD.finditer(text)) if len(w) >= 4 and w not in STOPWORDS]


def vocabulary(texts: Iterable[str]) -> set[str]:
    """What a grounded memory may use: every word of the texts, and its first five letters (so
    "attended" is grounded by "attend", "meetings" by "meeting")."""
    words = {w for text in texts for w in (m.group(0).lower() for m in _WORD.finditer(text))}
    return words | {w[:5] for w in words if len(w) > 5}


_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][a-z]{2,})\b")


def names(text: str) -> list[str]:
    """Capitalised words that do not open a sentence: the names a memory states."""
    return [m.group(1) for m in _NAME.finditer(text.strip())]


CALENDAR_WORDS = frozenset("""january february march april may june july august september october november december
monday tuesday wednesday thursday friday saturday sunday""".split())  # the batch shows ISO times


def unknown_names(texts: Sequence[str], shown: set[str]) -> list[str]:
    """Names in the texts that nothing the model was shown holds (calendar words aside)."""
    return list(dict.fromkeys(n for t in texts for n in names(t)
                              if n.lower() not in shown and n.lower() not in CALENDAR_WORDS))


def near_duplicate(text: str, existing: Sequence[tuple[str, str]]) -> str | None:
    """The id of the first existing (id, text) that already holds most of this text's content words,
    or None: a model writing a listed memory again, or copying a message the turns keep already."""
    words = set(content_words(text))
    if len(words) < 3:  # too few content words to judge by them: the same words, or nearly, are a repeat
        return same_words(text, existing)
    for memory_id, other in existing:
        held = words & set(content_words(other))
        if len(held) >= DUPLICATE_SHARE * len(words):
            return memory_id
    return None


def held_together(text: str, lines: Sequence[tuple[str, str]], name: str) -> str | None:
    """`name` when the lines together hold most of this text's content words (three or more), else
    None: several held facts joined into one line ("is a guard, likes cities") say nothing new."""
    words = set(content_words(text))
    if len(words) < 3:
        return None
    held = {w for _, line in lines for w in content_words(line)}
    return name if len(words & held) >= DUPLICATE_SHARE * len(words) else None


def same_name_repeat(name: str, text: str, existing: Sequence[tuple[str, str]]) -> str | None:
    """The id of an existing memory about `name` ("Tom: …") that holds every content word of this
    new text about it, or None: the same fact of the same one, however short."""
    words = set(content_words(text))
    prefix = name.strip().casefold() + ":"
    for memory_id, other in existing:
        if other.strip().casefold().startswith(prefix) and words <= set(content_words(other)):
            return memory_id
    return None


def same_words(text: str, existing: Sequence[tuple[str, str]]) -> str | None:
    """The id of the first existing text with nearly the same words as this short one, or None."""
    words = {m.group(0).lower() for m in _WORD.finditer(text)}
    if len(words) < 2:
        return None
    for memory_id, other in existing:
        theirs = {m.group(0).lower() for m in _WORD.finditer(other)}
        if len(words & theirs) >= SAME_WORDS_SHARE * len(words | theirs):
            return memory_id
    return None


def copied_description(texts: Sequence[str], descriptions: Sequence[str], shown: Sequence[str] = ()) -> str | None:
    """The tool description a text a model wrote copies instead of filling it in, or None: most of
    its words (three or more) are one description's ("Who did what, in the words of the messages."
    filed as an episode), and no message says it (`shown`)."""
    for text in texts:
        words = {m.group(0).lower() for m in _WORD.finditer(text)}
        if len(words) < 3:
            continue
        said = " ".join(text.lower().split()).strip(" .")
        if any(said in " ".join(s.lower().split()) for s in shown):
            continue
        for description in descriptions:
            theirs = {m.group(0).lower() for m in _WORD.finditer(description)}
            if len(words & theirs) >= DUPLICATE_SHARE * len(words):
                return description
    return None


def script_of(letter: str) -> str:
    """The script a letter is written in, by its Unicode name's first word: LATIN, CJK, CYRILLIC…"""
    return unicodedata.name(letter, "UNKNOWN").split(" ", 1)[0]


def ungrounded_problem(texts: Sequence[str], shown: set[str]) -> str | None:
    """Why a memory a model wrote is not drawn from the batch it was shown (`shown`: `vocabulary` of
    the batch as rendered, with the memories listed beside it), or None. A weak model copies the
    prompt's own examples ("Deploy the trail-map site") into memory; a paraphrase keeps enough of
    the batch's words to pass."""
    scripts = {script_of(c) for c in set("".join(shown)) if c.isalpha()}
    foreign = list(dict.fromkeys(c for text in texts for c in text if c.isalpha() and script_of(c) not in scripts))
    if foreign:  # a weak model's broken escape ("support\u3927s" for "support's")
        return (f"it writes in a script this batch and the listed memories do not use ({' '.join(foreign[:4])}): "
                "copy the messages' words as they are, or call nothing_to_record")
    strangers = unknown_names(texts, shown)
    if strangers:
        return (f"it names {', '.join(strangers[:4])}, which this batch and the listed memories do not: "
                "write only what the messages say, or call nothing_to_record")
    words = [w for text in texts for w in content_words(text)]
    if len(words) < 3:
        return None
    grounded = sum(w in shown or w[:5] in shown for w in words)
    if grounded >= GROUNDED_SHARE * len(words):
        return None
    missing = [w for w in dict.fromkeys(words) if w not in shown and w[:5] not in shown][:6]
    return (f"most of its words are not in this batch ({', '.join(missing)}): write only what the messages "
            "say, or call nothing_to_record")


# a sentence in which its speaker speaks of themself: its words say what the speaker did or has
FIRST_PERSON_SENTENCE = re.compile(r"\b(?:I|I'm|I've|I'd|I'll|my|me|mine|myself|we|we're|we've|our|ours|us)\b",
                                   re.IGNORECASE)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
# a memory's subject: its first word when that is a name followed by what they did ("Nate finished …"),
# not one of several people ("Nate and Joanna …") nor a possessive ("Nate's turtles …")
_LEAD_NAME = re.compile(r"^\s*([^\W\d_]+)\s+(?!(?:and|&|or|with)\b)[^\W\d_]", re.UNICODE)


def lead_name(text: str, people: Iterable[str]) -> str | None:
    """The one person of `people` a text opens with as its subject, or None."""
    match = _LEAD_NAME.match(text)
    if not match:
        return None
    wanted = match.group(1).casefold()
    return next((p for p in people if p.casefold() == wanted), None)


def misattributed(subject: str, text: str, turns: Sequence[tuple[str, str]]) -> tuple[str, list[str]] | None:
    """(who, words) when a text a model wrote about `subject` takes most of its content words (three
    or more, names aside) from what someone else said of themself, or None. `turns`: (speaker, text)
    of the batch. A weak model files one speaker's news under the other ("Nate finished his
    screenplay" where Joanna said "I finished my screenplay"); the ungrounded check passes it, since
    every word is in the batch. The subject's own sentences, and others' sentences not about
    themselves ("You dyed your hair!"), may say what the subject did."""
    people = {speaker.casefold(): speaker for speaker, _ in turns if speaker.strip()}
    if subject.casefold() not in people or len(people) < 2:
        return None
    theirs: list[str] = []
    others: dict[str, list[str]] = {}
    for speaker, said in turns:
        for sentence in _SENTENCE_END.split(said):
            if speaker.casefold() == subject.casefold() or not FIRST_PERSON_SENTENCE.search(sentence):
                theirs.append(sentence)
            else:
                others.setdefault(speaker, []).append(sentence)
    own = vocabulary(theirs)
    words = [w for w in content_words(text) if w not in people]
    if len(words) < 3:
        return None
    for speaker, sentences in others.items():
        said_by = vocabulary(sentences)
        taken = [w for w in words if w not in own and w[:5] not in own and (w in said_by or w[:5] in said_by)]
        if len(taken) >= GROUNDED_SHARE * len(words):
            return speaker, list(dict.fromkeys(taken))
    return None
