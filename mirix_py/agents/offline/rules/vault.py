"""Secret detection for the knowledge vault in offline mode.

Finds credentials, contact details and account numbers in free text so they can be stored in the
vault (encrypted, masked) instead of leaking into episodic or semantic memory. Precision first:
every pattern is anchored on a strong shape (prefix, checksum, separator layout) or an explicit
cue word, because these rules run on every chat message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable, Literal

Sensitivity = Literal["low", "medium", "high"]

__all__ = ["SecretMatch", "find_secrets", "redact"]


@dataclass(frozen=True)
class SecretMatch:
    """One detected secret: its kind, the exact value, its span in the text and a safe caption."""

    entry_type: str
    value: str
    start: int
    end: int
    sensitivity: Sensitivity
    caption: str


_DESCRIPTIONS = {
    "email": "email address",
    "phone": "phone number",
    "api_key": "API key",
    "password": "password",
    "card_number": "payment card number",
    "id_number": "ID number",
    "bank_account": "bank account number",
}

_SENSITIVITY: dict[str, Sensitivity] = {
    "email": "low",
    "phone": "medium",
    "api_key": "high",
    "password": "high",
    "card_number": "high",
    "id_number": "high",
    "bank_account": "high",
}

# Lower number wins when two candidates overlap: specific, high-sensitivity shapes first.
_PRIORITY = {
    "api_key": 0,
    "password": 1,
    "bank_account": 2,
    "card_number": 3,
    "id_number": 4,
    "email": 5,
    "phone": 6,
}

_CAPTION_MAX = 200

# ---------------------------------------------------------------- patterns

_EMAIL = re.compile(
    r"(?<![\w.%+-])[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}(?![\w@])"
)

# Well-known token prefixes; the body lengths follow the providers' formats, loosely.
_PREFIXED_KEYS = re.compile(
    r"(?<![\w-])(?:"
    r"sk-(?:proj-|ant-(?:api\d\d-)?|live_|test_)?[A-Za-z0-9_-]{20,}"
    r"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|hf_[A-Za-z0-9]{30,}"
    r")(?![\w-])"
)

# "api key: <token>", "access token = <token>": the token must look machine-made (long, has a digit).
_CUED_KEY = re.compile(
    r"(?i:\b(?:api[ _-]?key|api[ _-]?token|access[ _-]?token|auth[ _-]?token|bearer[ _-]?token"
    r"|secret[ _-]?key|client[ _-]?secret|token)\b)"
    r"(?:\s+(?i:for|to)\s+[\w .-]{1,30}?)?"
    r"\s*(?:(?i:is|was)\s*:?|:|=|->)\s*[\"'`“‘]?"
    r"(?P<secret>[A-Za-z0-9][A-Za-z0-9_\-.+/=]{15,})"
)

# "password: X", "pwd=X", "my password is X", "passcode is X"; group "secret" is the token only.
_PASSWORD = re.compile(
    r"(?i:\b(?P<cue>password|passwd|passwort|pwd|passcode|pass\s?code|passphrase|pin(?:\s?code)?)\b)"
    r"(?:\s+(?i:for|to|of|on)\s+(?:my\s+|the\s+|our\s+)?[\w .@-]{1,30}?)?"
    r"\s*(?:(?i:is|was|will\s+be)\s*:?|=|:|->)\s*"
    r"(?P<quote>[\"'`“‘])?(?P<secret>[^\s\"'`“”‘’]{3,64})"
)

_COMMON_WORDS = frozenset(
    """
    a an the is was be been being to too so very really quite just still also now not never no
    yes my your his her our their its this that these those it one same different new old
    hard easy simple strong weak long short secure safe secret private correct wrong right
    incorrect invalid expired changed reset required needed missing saved stored written
    forgotten lost stolen compromised and or but of for in on at by with from about into
    something nothing anything everything what which how where when why who please here there
    """.split()
)

_CARD = re.compile(r"(?<![\d+])(?:\d[ -]?){12,18}\d(?![\d])")

_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")

_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])")

# Phone numbers: "+" international, or the US 3-3-4 layout with separators. An unseparated run of
# digits only counts after a phone cue word, since it is otherwise indistinguishable from a count.
_PHONE_INTL = re.compile(r"(?<![\w+])\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,6}(?![\d])")
_PHONE_US = re.compile(
    r"(?<![\w.+-])(?:1[ .-])?(?:\(\d{3}\)\s?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\d]|[.-]\d)"
)
_PHONE_BARE = re.compile(
    r"(?i:\b(?:phone|cell|mobile|tel|telephone|call\s+me\s+at|text\s+me\s+at|reach\s+me\s+at|whatsapp)"
    r"(?:\s+(?:number|no\.?|#))?\b)[^\d\n]{0,12}(?P<secret>(?<![\d])\d{9,15})(?![\d])"
)
_DATE_LIKE = re.compile(r"^\d{4}[ .-]\d{2}[ .-]\d{2}$|^\d{2}[ .-]\d{2}[ .-]\d{4}$")


# ---------------------------------------------------------------- checks


def _luhn_ok(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = ord(ch) - 48
        if i % 2 == 1:
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return total % 10 == 0


def _iban_ok(raw: str) -> bool:
    iban = raw.replace(" ", "")
    if not 15 <= len(iban) <= 34:
        return False
    rearranged = iban[4:] + iban[:4]
    numeric = "".join(str(int(ch, 36)) for ch in rearranged)
    return int(numeric) % 97 == 1


def _card_ok(raw: str) -> bool:
    digits = re.sub(r"\D", "", raw)
    if not 13 <= len(digits) <= 19 or len(set(digits)) == 1:
        return False
    # Separators, when present, must be one kind and split the number into groups of >= 4 (as
    # printed on cards); this rejects runs of small numbers such as "1 2 3 4 ...".
    seps = set(re.findall(r"[ -]", raw))
    if len(seps) > 1:
        return False
    if seps:
        groups = re.split(r"[ -]", raw)
        if any(len(g) < 4 for g in groups):
            return False
    return _luhn_ok(digits)


def _phone_ok(raw: str) -> bool:
    digits = re.sub(r"\D", "", raw)
    if not 9 <= len(digits) <= 15:
        return False
    if _DATE_LIKE.match(raw.strip("+")):
        return False
    return len(set(digits)) > 1


def _looks_like_password(secret: str, quoted: bool, next_char: str) -> bool:
    """A cue like "password is" is only trusted when the token looks chosen rather than English.

    Tokens with digits or symbols count; a plain word must be quoted or end the clause
    ("my password is swordfish." counts, "my password is hard to remember" does not).
    """
    if len(secret) < 4 or secret.lower() in _COMMON_WORDS:
        return False
    if quoted or any(not ch.isalpha() for ch in secret):
        return True
    ends_clause = next_char == "" or next_char in ".!?,;\n"
    return ends_clause and len(secret) >= 6


def _token_ok(token: str) -> bool:
    """Machine-made tokens mix letters and digits; plain words and numbers are not keys."""
    return any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)


# ---------------------------------------------------------------- main


def _candidates(text: str) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    for m in _PREFIXED_KEYS.finditer(text):
        found.append(("api_key", m.start(), m.end()))
    for m in _CUED_KEY.finditer(text):
        token = m.group("secret").rstrip(".")
        if _token_ok(token):
            found.append(("api_key", m.start("secret"), m.start("secret") + len(token)))
    for m in _PASSWORD.finditer(text):
        quoted = m.group("quote") is not None
        secret = m.group("secret") if quoted else m.group("secret").rstrip(".,;!?)")
        end = m.start("secret") + len(secret)
        if m.group("cue").lower().startswith("pin") and not re.fullmatch(r"\d{4,8}", secret):
            continue
        if _looks_like_password(secret, quoted, text[end:end + 1]):
            found.append(("password", m.start("secret"), end))
    for m in _IBAN.finditer(text):
        if _iban_ok(m.group()):
            found.append(("bank_account", m.start(), m.end()))
    for m in _CARD.finditer(text):
        raw = m.group().rstrip(" -")
        if _card_ok(raw):
            found.append(("card_number", m.start(), m.start() + len(raw)))
    for m in _SSN.finditer(text):
        found.append(("id_number", m.start(), m.end()))
    for m in _EMAIL.finditer(text):
        found.append(("email", m.start(), m.end()))
    for pattern in (_PHONE_INTL, _PHONE_US):
        for m in pattern.finditer(text):
            if _phone_ok(m.group()):
                found.append(("phone", m.start(), m.end()))
    for m in _PHONE_BARE.finditer(text):
        if _phone_ok(m.group("secret")):
            found.append(("phone", m.start("secret"), m.end("secret")))
    return found


def _caption(text: str, kind: str, spans: list[tuple[int, int]], own: tuple[int, int]) -> str:
    """Describe the secret with its context, every detected secret replaced by "[secret]"."""
    parts: list[str] = []
    cursor = 0
    own_at = 0
    for start, end in spans:
        parts.append(text[cursor:start])
        if (start, end) == own:
            own_at = sum(len(p) for p in parts)
        parts.append("[secret]")
        cursor = end
    parts.append(text[cursor:])
    context = "".join(parts)
    # A secret repeated later in the text (outside any match) must not leak either.
    for value in sorted({text[s:e] for s, e in spans}, key=len, reverse=True):
        context = context.replace(value, "[secret]")
    context = " ".join(context.split())
    # Whitespace collapsing can shift the position slightly; re-find the nearest placeholder.
    own_at = _nearest_placeholder(context, own_at)
    prefix = f"{_DESCRIPTIONS[kind]} mentioned: '"
    budget = _CAPTION_MAX - len(prefix) - 1
    if len(context) > budget:
        half = (budget - 2) // 2
        lo = max(0, min(own_at - half, len(context) - (budget - 2)))
        hi = lo + budget - 2
        snippet = context[lo:hi]
        context = ("…" if lo > 0 else "") + snippet + ("…" if hi < len(context) else "")
        context = context[: budget]
    return f"{prefix}{context}'"


def _nearest_placeholder(context: str, approx: int) -> int:
    positions = [m.start() for m in re.finditer(re.escape("[secret]"), context)]
    if not positions:
        return 0
    return min(positions, key=lambda p: abs(p - approx))


def find_secrets(text: str) -> list[SecretMatch]:
    """Return the non-overlapping secrets in `text`, in text order.

    When candidates overlap, the more specific / more sensitive kind wins (an API key beats a
    phone number hiding inside it), then the longer span.
    """
    if not text:
        return []
    candidates = _candidates(text)
    candidates.sort(key=lambda c: (_PRIORITY[c[0]], -(c[2] - c[1]), c[1]))
    chosen: list[tuple[str, int, int]] = []
    for kind, start, end in candidates:
        if start >= end:
            continue
        if any(start < e and s < end for _, s, e in chosen):
            continue
        chosen.append((kind, start, end))
    chosen.sort(key=lambda c: c[1])
    spans = [(s, e) for _, s, e in chosen]
    return [
        SecretMatch(
            entry_type=kind,
            value=text[start:end],
            start=start,
            end=end,
            sensitivity=_SENSITIVITY[kind],
            caption=_caption(text, kind, spans, (start, end)),
        )
        for kind, start, end in chosen
    ]


def redact(
    text: str,
    matches: list[SecretMatch],
    placeholder: Callable[[SecretMatch], str] | str = "[redacted]",
) -> str:
    """Replace each match's span with a placeholder so text can be stored or logged safely.

    Overlapping matches (which `find_secrets` never returns) are resolved by keeping the first.
    """
    out: list[str] = []
    cursor = 0
    for match in sorted(matches, key=lambda m: (m.start, -m.end)):
        if match.start < cursor or match.end > len(text):
            continue
        out.append(text[cursor:match.start])
        out.append(placeholder(match) if callable(placeholder) else placeholder)
        cursor = match.end
    out.append(text[cursor:])
    return "".join(out)
