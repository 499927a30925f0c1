"""Secret detection: the rules that find secrets in free text.

Finds credentials, card and bank details, contact details and id numbers in free text (chat, screen
text, documents) so they can be stored in the vault (encrypted, masked) instead of leaking into
episodic or semantic memory. Precision first: every pattern is anchored on a strong shape (prefix,
checksum, separator layout) or an explicit cue word, because these rules run on every chat message.

What counts, by entry type:
- password: passwords, passcodes, passphrases, PINs and PUKs, door, gate, alarm, keypad and safe
  codes and combinations; "login: ada / pass: X"; `DB_PASSWORD=X`; `scheme://user:X@host`;
  `mysql -pX`; several in one sentence ("... is A and for prod it is B", "my personal one is B",
  "but I changed it to B");
- api_key: provider-prefixed keys, JWTs, `Bearer` tokens, private key blocks, `*_TOKEN=X`-style
  assignments and cued tokens ("client secret: X") that look machine-made;
- card_number (Luhn), card_cvv and card_expiry (only with a card nearby), bank_account (IBAN with its
  checksum, cued account numbers, ABA routing numbers with theirs, sort codes), recovery_code (2FA
  backup codes, recovery keys, seed phrases), id_number (US SSN), email, phone.

A value found once is also found wherever else it occurs in the same text, so redaction leaves no
copy behind. A token is found against letters of any script ("密钥是sk-live-…请记住") and through the
invisible format characters pasted inside it; the cue words are English. Measured on
`tests/fixtures/secrets_corpus.jsonl` by `benchmarks/secrets_corpus.py`.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_left
from dataclasses import dataclass, replace
from typing import Callable, Literal

Sensitivity = Literal["low", "medium", "high"]

__all__ = ["SecretMatch", "find_secrets", "prefixed_key_spans", "redact", "value_fits"]


@dataclass(frozen=True)
class SecretMatch:
    """One detected secret: its kind, the value, its span in the text and a safe caption. The value is
    the span's text without invisible format characters (a zero-width space pasted inside a key)."""

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
    "card_cvv": "card security code",
    "card_expiry": "card expiry date",
    "id_number": "ID number",
    "bank_account": "bank account number",
    "recovery_code": "recovery code",
}

_SENSITIVITY: dict[str, Sensitivity] = {
    "email": "low",
    "phone": "medium",
    "api_key": "high",
    "password": "high",
    "card_number": "high",
    "card_cvv": "high",
    "card_expiry": "medium",
    "id_number": "high",
    "bank_account": "high",
    "recovery_code": "high",
}

# Lower number wins when two candidates overlap: specific, high-sensitivity shapes first.
_PRIORITY = {
    "recovery_code": 0,
    "api_key": 1,
    "password": 2,
    "bank_account": 3,
    "card_number": 4,
    "card_cvv": 5,
    "card_expiry": 6,
    "id_number": 7,
    "email": 8,
    "phone": 9,
}

_CAPTION_MAX = 200

# ---------------------------------------------------------------- edges

# Where a token or a word ends. Python's \w and \b take every script's letters for word characters
# (是, は, 입, ل, й), so a key written straight after Chinese ("密钥是sk-live-…请记住") was no token and
# stayed in plain text. A token (a key, a code, a number) is ASCII: each pattern bounds it by ASCII
# letters, digits, "_" and its own punctuation, so "é" or "请" next to it ends it. A cue word or an
# address is a word of the Latin script: "Hôtel" holds no cue "tel", "müller@" no address "ller@".
_LATIN_WORD_CHAR = "[A-Za-z0-9_\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0300-\u036f\u1e00-\u1eff]"
# A cue word or an address starts with an ASCII letter or digit; testing that first keeps a text of
# Chinese, where every position follows a non-Latin letter, as quick to read as English.
_WORD_START = f"(?=[A-Za-z0-9])(?<!{_LATIN_WORD_CHAR})"
_WORD_END = f"(?!{_LATIN_WORD_CHAR})"

# ---------------------------------------------------------------- patterns: shapes

_EMAIL = re.compile(
    r"(?<![.%+-])" + _WORD_START + r"[A-Za-z0-9][A-Za-z0-9._%+-]{0,63}@[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?"
    r"(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,62}[A-Za-z0-9])?)*\.[A-Za-z]{2,24}" + _WORD_END + r"(?!@)"
)

# Well-known token prefixes; the body lengths follow the providers' formats, loosely.
_PREFIXED_KEYS = re.compile(
    r"(?<![A-Za-z0-9_-])(?:"
    r"sk-(?:proj-|ant-(?:api\d\d-)?|live_|test_)?[A-Za-z0-9_-]{20,}"
    r"|(?:sk|pk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"
    r"|whsec_[A-Za-z0-9_]{16,}"
    r"|gh[pousr]_[A-Za-z0-9]{30,}"
    r"|github_pat_[A-Za-z0-9_]{22,}"
    r"|xox[abprs]-[A-Za-z0-9-]{10,}"
    r"|xapp-[A-Za-z0-9-]{20,}"
    r"|(?:AKIA|ASIA)[0-9A-Z]{16}"
    r"|AIza[0-9A-Za-z_-]{35}"
    r"|glpat-[A-Za-z0-9_-]{20,}"
    r"|hf_[A-Za-z0-9]{30,}"
    r"|npm_[A-Za-z0-9]{36}"
    r"|pypi-[A-Za-z0-9_-]{50,}"
    r"|shp(?:at|ss|ca|pa)_[a-fA-F0-9]{32}"
    r"|dop_v1_[a-f0-9]{64}"
    r"|SG\.[A-Za-z0-9_-]{16,}\.[A-Za-z0-9_-]{16,}"
    r"|eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"  # a JSON Web Token
    r")(?![A-Za-z0-9_-])"
)

_PRIVATE_KEY = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]{1,16000}?-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----"
)

_BEARER = re.compile(_WORD_START + r"[Bb]earer\s+(?P<secret>[A-Za-z0-9\-._~+/]{16,}=*)(?![A-Za-z0-9_\-.~+/=])")

# "api key: <token>", "client secret = <token>", "secret key <token>": the token must look machine-made.
_CUED_KEY = re.compile(
    r"(?i:" + _WORD_START
    + r"(?:api[ _-]?(?:key|token|secret)|access[ _-]?(?:token|key)|auth(?:orization)?[ _-]?token|bearer[ _-]?token"
    r"|refresh[ _-]?token|session[ _-]?token|bot[ _-]?token|id[ _-]?token|(?:personal[ _-]?)?access[ _-]?token"
    r"|secret(?:[ _-]?access)?[ _-]?key|client[ _-]?secret|webhook[ _-]?secret|signing[ _-]?(?:secret|key)"
    r"|app[ _-]?secret|encryption[ _-]?key|master[ _-]?key|private[ _-]?key|deploy[ _-]?key"
    r"|licen[cs]e[ _-]?key|product[ _-]?key|serial[ _-]?(?:key|number)|token|key|secret|pat)" + _WORD_END + r")"
    r"[\"']?(?:\s+(?i:for|to|of|on)\s+(?:the\s+|my\s+|our\s+)?[\w .-]{1,30}?)?"
    r"(?:(?:\s+(?i:is|was)" + _WORD_END + r"\s*:?|\s*(?::|=|->))\s*|(?P<weak>\s+))[\"'`“‘]?"
    r"(?P<secret>[A-Za-z0-9][A-Za-z0-9_\-.+/=:~]{15,})"
)

# Assignments in config files, shells and .env files: `DB_PASSWORD=x`, `aws_secret_access_key = x`.
_ASSIGN = re.compile(
    r"(?<![A-Za-z0-9_-])(?P<name>[A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)+)[\"']?\s*(?:=|:)\s*[\"']?"
    r"(?P<secret>[^\s\"'`,;]{4,200})"
)
_ASSIGN_PASSWORD = frozenset({"password", "passwd", "pwd", "pass", "passphrase", "passcode", "pin"})
_ASSIGN_KEY_LAST = frozenset({"token", "secret", "apikey", "credentials"})
_ASSIGN_KEY_BEFORE = frozenset({"api", "access", "secret", "private", "auth", "signing", "encryption", "master",
                                "client", "app", "deploy", "license", "licence"})

# scheme://user:secret@host
_URL_CREDENTIALS = re.compile(r"(?i:" + _WORD_START + r"[a-z][a-z0-9+.-]{1,20}://)[^\s:/@]*:(?P<secret>[^\s@/]{3,128})@")

# Command lines: `--password=x`, `--password x`, `mysql -u root -px`.
_CLI_PASSWORD = re.compile(
    r"(?<!\S)--pass(?:word)?(?:=|\s+)(?P<secret>[^\s-]\S{2,})"
    r"|" + _WORD_START + r"mysql(?:dump|admin)?" + _WORD_END + r"[^\n]*?\s-p(?P<secret2>[^\s-]\S{2,})"
)

# ---------------------------------------------------------------- patterns: cue words

# A qualifier between the cue and its value: "password for the staging db is", "password I use for X is".
_QUALIFIER = (
    r"(?:\s+(?i:for|to|of|on|at|in|from|with|that|which|i|we|you|he|she|they|used|here|there)" + _WORD_END
    + r"[^.!?\n:=;()]{0,40}?)?"
)
# "is", ":", "=", "->", " - ", or (weak) a space, a line break, "(" or a table bar before a token that
# holds a digit or a symbol ("Password  R0uter!Admin" on a screen, "garage code 5512").
_SEPARATOR = (
    r"(?:(?:\s+(?i:is|was|will\s+be|are)" + _WORD_END + r"(?:\s+(?i:now|still|currently|simply|just)" + _WORD_END
    + r")?\s*:?|\s*(?::|=|->|=>))\s*"
    r"|\s+[-–—]\s+"
    r"|(?P<weak>\s*\(\s*|[ \t]*\|[ \t]*|[ \t]*\n\s*|[ \t]+)(?=[#*]?\d|[^\s]*[0-9!@#$%^&*+=?~]))"
)
_VALUE = (
    r"(?:(?P<quote>[\"'`“‘])(?P<qvalue>[^\"'`“”‘’\n]{1,100})[\"'`”’]"
    r"|(?P<bare>[^\s\"'`“”‘’]{1,100}))"
)

_LOCKISH = (
    r"(?:door|gate|garage|alarm|safe|lock|locker|building|apartment|flat|house|office|keypad|lockbox|padlock"
    r"|phone|laptop|ipad|tablet|shed|storage|intercom|buzzer|entrance)"
)
_CODE_CUES = (
    r"pin(?:\s?code|\s?number)?|puk"
    r"|(?:" + _LOCKISH + r"|key\s?box|key\s?safe|entry|unlock|access|security(?:\s+system)?|parental|master|"
    r"front\s+door|back\s+door|bike\s+lock)\s+(?:code|combo|combination|pin)"
    r"|(?:door|gate|garage|alarm|front\s+door|building)\s+keypad"
    r"|combination|combo"
    r"|code\s+(?:for|to|of|on)\s+[^.!?\n:=]{0,30}?" + _WORD_START + _LOCKISH + r"\w*"
)

# The cue classes: "word" (passwords), "code" (numeric PINs and codes), "phrase" (several words).
_PASSWORD = re.compile(
    r"(?<!-)" + _WORD_START + r"(?i:(?P<phrase>pass\s?phrase)"
    r"|(?P<word>password|passwd|passwort|pwd|passcode|pass\s?code|app\s+password|(?:wi-?fi|wpa[23]?|network|wireless)\s+key)"
    r"|(?P<code>" + _CODE_CUES + r"))" + _WORD_END + r"[\"']?"
    + _QUALIFIER + _SEPARATOR + _VALUE
)

# "login: ada / pass: X", "pw: X": short cues, so only a colon or "=" and a token that looks chosen.
_SHORT_CUE = re.compile(r"(?<!-)" + _WORD_START + r"(?i:pass|pw)\s*(?::|=|(?i:is)" + _WORD_END + r")\s*" + _VALUE)

# "I changed my email password to X", "set the PIN to X".
_CHANGED_TO = re.compile(
    r"(?i:" + _WORD_START + r"(?:changed|change|changing|set|setting|reset|updated|update|switched)\s+"
    r"(?:(?:my|the|our|his|her|their|your|its)\s+)?(?:[\w-]+\s+){0,2}?"
    r"(?:(?P<word>password|passcode|pass\s?phrase)|(?P<code>pin(?:\s?code)?|(?:door|gate|alarm|garage)\s+code))\s+to)\s+"
    + _VALUE
)

# After one password, a second in the same sentence: "... is A and for prod it is B",
# "... is A and my personal one is B", "... was A but I changed it to B", "... A, it's now B".
_CONTINUATION = re.compile(
    r"\s*(?:,\s*(?:and\s+|but\s+)?|;\s*|\s+(?:and|but|while|whereas)\s+)(?i:"
    r"(?:the\s+one\s+|the\s+)?(?:for|on|at|in|of|to)\s+[^.!?\n:=,;]{1,30}?(?:\s+(?:it['’]s|it\s+is|it\s+was|is|was)" + _WORD_END
    + r"|\s*[:=])"
    r"|(?:my|the|our|his|her|their|your)\s+(?:[\w-]+\s+){0,2}?one(?:['’]s|\s+is|\s+was)"
    r"|(?:i\s+|we\s+|they\s+|he\s+|she\s+)?(?:changed|updated|reset|set|switched)\s+it\s+to"
    r"|it(?:['’]s|\s+is)\s+now|now\s+it(?:['’]s|\s+is))\s*"
    + _VALUE
)

_SEED_PHRASE = re.compile(
    r"(?i:" + _WORD_START + r"(?:(?:secret\s+)?(?:seed|recovery|mnemonic|backup|wallet)\s+(?:phrase|words)|mnemonic))" + _WORD_END
    + r"(?:\s+(?i:for|of)\s+[^:\n.]{1,30}?)?(?:\s+(?i:is|are|was)" + _WORD_END + r"\s*:?|\s*[:=])\s*[\"'“]?"
    r"(?P<secret>[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23})" + _WORD_END
)

_RECOVERY = re.compile(
    r"(?i:" + _WORD_START + r"(?:(?:recovery|backup|2fa|two[- ]factor|mfa|emergency|scratch|one[- ]time)\s+(?:codes?|keys?)"
    r"|recovery\s+(?:code|key)s?))" + _WORD_END
    + r"(?:\s*\([^)\n]{0,30}\))?(?:\s+(?i:for|to|of|on)\s+[^:\n.,]{1,30}?(?=\s+(?i:are|is|were|was)" + _WORD_END + r"|\s*[:=]))?"
    r"(?:\s+(?i:are|is|were|was)" + _WORD_END + r"\s*:?|\s*[:=])?\s*"
)
_RECOVERY_ITEM = re.compile(r"[A-Za-z0-9]{3,12}(?:-[A-Za-z0-9]{2,12}){0,8}(?![A-Za-z0-9_-])")
_RECOVERY_GAP = re.compile(r"\s*[,;]\s*(?:(?i:and)\s+)?|\s+(?i:and)\s+|\s+")

_CVV = re.compile(
    r"(?i:" + _WORD_START
    + r"(?P<cue>cvv2?|cvc2?|cvn|csc|cid|card\s+(?:verification|security)\s+(?:code|value|number)|security\s+code))" + _WORD_END
    + r"(?:\s+(?i:code|number|on\s+the\s+back|on\s+the\s+card|printed\s+on\s+the\s+back))?"
    r"\s*(?:(?i:is|was)\s*:?|[:=#-])?\s*(?P<secret>\d{3,4})(?![A-Za-z0-9_/]|[.,:-]\d)"
)
_EXPIRY = re.compile(
    r"(?i:" + _WORD_START
    + r"(?:exp(?:iry|iration|ires?)?\.?(?:\s+date)?|valid\s+(?:thru|through|until|to)|good\s+(?:thru|through)))"
    r"\s*(?:(?i:is|was|on)\s*:?|[:=-])?\s*(?P<secret>(?:0[1-9]|1[0-2])\s?/\s?(?:20\d{2}|\d{2}))(?![\d/])"
)
_CARD_WORDS = re.compile(
    r"(?i)" + _WORD_START + r"(?:cards?|visa|master\s?card|amex|american\s+express|discover|jcb|diners|maestro|credit|debit"
    r"|cvv2?|cvc2?)" + _WORD_END
)

_ACCOUNT = re.compile(
    r"(?i:" + _WORD_START + r"(?:(?:bank|checking|savings|current|chequing|deposit)\s+)?(?:account|acct|a/c)" + _WORD_END + r"\.?"
    r"(?:\s*(?:number|no\.?|num|nr\.?|#))?)"
    r"(?:\s+(?i:at|with|for)\s+[^\d:\n.,]{1,25}?)?"
    r"\s*(?:(?i:is|was)\s*:?|[:#=])?\s*(?P<secret>\d(?:[ -]?\d){5,16})(?![A-Za-z0-9_-]|[.,/:]\d)"
)
_ROUTING = re.compile(
    r"(?i:" + _WORD_START + r"(?:routing|aba|transit)(?:\s*(?:number|no\.?|#))?)\s*(?:(?i:is|was)\s*:?|[:#=])?\s*"
    r"(?P<secret>\d{9})(?![A-Za-z0-9_-]|[.,/:]\d)"
)
_SORT_CODE = re.compile(
    r"(?i:" + _WORD_START + r"sort\s*code)\s*(?:(?i:is|was)\s*:?|[:#=])?\s*"
    r"(?P<secret>\d{2}-\d{2}-\d{2}|\d{2} \d{2} \d{2}|\d{6})(?![A-Za-z0-9_-])"
)

_CARD = re.compile(r"(?<![\w+])(?<!\d[ -])(?:\d[ -]?){12,18}\d(?![\w])(?![ -]\d{4})")  # not inside an id or word

_SSN = re.compile(r"(?<![\d-])(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}(?![\d-])")

_IBAN = re.compile(r"(?<![A-Za-z0-9])[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?(?![A-Za-z0-9])")

# Phone numbers: "+" international, or the US 3-3-4 layout with separators. An unseparated run of
# digits only counts after a phone cue word, since it is otherwise indistinguishable from a count.
_PHONE_INTL = re.compile(r"(?<![A-Za-z0-9_+])\+\d{1,3}(?:[ .-]?\(?\d{1,5}\)?){2,6}(?![\d])")
_PHONE_US = re.compile(
    r"(?<![A-Za-z0-9_.+-])(?:1[ .-])?(?:\(\d{3}\)\s?|\d{3}[ .-])\d{3}[ .-]\d{4}(?![\d]|[.-]\d)"
)
_PHONE_BARE = re.compile(
    r"(?i:" + _WORD_START + r"(?:phone|cell|mobile|tel|telephone|call\s+me\s+at|text\s+me\s+at|reach\s+me\s+at|whatsapp)"
    r"(?:\s+(?:number|no\.?|#))?" + _WORD_END + r")[^\d\n]{0,12}(?P<secret>(?<![\d])\d{9,15})(?![\d])"
)
_DATE_LIKE = re.compile(r"^\d{4}[ .-]\d{2}[ .-]\d{2}$|^\d{2}[ .-]\d{2}[ .-]\d{4}$")

# Words that follow "password is" in prose rather than being the password.
_COMMON_WORDS = frozenset(
    """
    a an the is was be been being to too so very really quite just still also now not never no
    yes my your his her our their its this that these those it one same different new old
    hard easy simple strong weak long short secure safe secret private correct wrong right
    incorrect invalid expired changed reset required needed missing saved stored written
    forgotten lost stolen compromised and or but of for in on at by with from about into
    something nothing anything everything what which how where when why who please here there
    fine good bad great awesome terrible horrible okay ok complicated complex unique random
    sensitive temporary default generated encrypted hashed protected optional visible hidden blank
    empty unknown unchanged updated case-sensitive set up down off out over under below above
    somewhere same-ish identical similar obvious ridiculous impossible annoying updated locked
    unlocked needed shared known public leaked working broken
    """.split()
)

# Passphrase words that mark prose ("the passphrase is long and hard to remember").
_PROSE_WORDS = frozenset(
    """
    a an the is was be been are to of and or but for in on at by with from about into it this that
    these those my your his her our their its not no so too very really just also then than as if
    when while because which who what how where there here i you he she we they me him us them do
    does did have has had can could will would should may might must long hard easy short secure
    strong weak different same written saved stored somewhere stronger longer shorter remember
    """.split()
)

_PLACEHOLDER = re.compile(
    r"^(?:\[(?:vault:|redacted|secret|hidden|removed)|<|\$\{|\$[A-Z_]|\{\{|%\(|\*+$|•+$|x{3,}$|X{3,}$|\.{3,}$|#{3,}$)"
    r"|your[_ -]|[_ -]here$|^(?:password|passwd|secret|token|none|null|true|false|redacted|hidden|example|changeit)$",
    re.IGNORECASE,
)
_NOT_A_PASSWORD = re.compile(
    r"^(?:[$€£¥]\d[\d.,]*|\d{1,2}:\d{2}(?::\d{2})?(?:am|pm)?|\d+(?:[.,]\d+)*%|\d{1,3}(?:,\d{3})+(?:\.\d+)?"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}/\d{2,4}|v?\d+\.\d+(?:\.\d+)+)$",
    re.IGNORECASE,
)


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


def _aba_ok(digits: str) -> bool:
    d = [ord(ch) - 48 for ch in digits]
    return len(d) == 9 and (3 * (d[0] + d[3] + d[6]) + 7 * (d[1] + d[4] + d[7]) + d[2] + d[5] + d[8]) % 10 == 0


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


def _is_plain_word(token: str) -> bool:
    """Letters only (an apostrophe or inner hyphens allowed): English rather than a chosen token."""
    return bool(re.fullmatch(r"[^\W\d_]+(?:['’-][^\W\d_]+)*", token))


def _looks_like_password(secret: str, quoted: bool, next_char: str) -> bool:
    """A cue like "password is" is only trusted when the token looks chosen rather than English.

    Tokens with digits or symbols count; a plain word must be quoted or end the clause
    ("my password is swordfish." counts, "my password is hard to remember" does not).
    """
    if len(secret) < 4 or secret.lower() in _COMMON_WORDS or _PLACEHOLDER.search(secret):
        return False
    if _NOT_A_PASSWORD.match(secret):
        return False
    if quoted:
        return True
    if not _is_plain_word(secret) or _case_inside(secret):
        return True
    ends_clause = next_char == "" or next_char in ".!?,;)\n"
    return ends_clause and len(secret) >= 6 and "-" not in secret


def _case_inside(token: str) -> bool:
    """A capital after a small letter twice or more ("xvhfauPEzD-PxWy"): a generated password, which
    a plain word ("Swordfish", "well-known", "iPhone") is not."""
    return len(re.findall(r"[^\W\d_A-Z][A-Z]", token)) >= 2


def _strong(secret: str) -> bool:
    """Chosen beyond doubt: letters with digits or symbols, or a long run of digits."""
    if _PLACEHOLDER.search(secret) or _NOT_A_PASSWORD.match(secret) or len(secret) < 4:
        return False
    has_alpha = any(ch.isalpha() for ch in secret)
    has_other = any(not ch.isalpha() for ch in secret)
    return (has_alpha and has_other) or (secret.isdigit() and len(secret) >= 6)


def _code_ok(secret: str) -> bool:
    """PINs, door codes and combinations: digits, perhaps with "-", " ", "#" or "*"."""
    if not re.fullmatch(r"[#*]?\d(?:[\d#*]|[- ](?=\d))*[#*]?", secret):
        return False
    digits = sum(ch.isdigit() for ch in secret)
    return 3 <= digits <= 12


def _token_ok(token: str) -> bool:
    """Machine-made tokens mix letters and digits; plain words and numbers are not keys."""
    return any(ch.isdigit() for ch in token) and any(ch.isalpha() for ch in token)


def _value(m: re.Match[str]) -> tuple[str, int, int, bool]:
    """The value a cue pattern captured: (text, start, end, quoted), trailing punctuation trimmed."""
    if m.group("quote") is not None:
        return m.group("qvalue"), m.start("qvalue"), m.end("qvalue"), True
    raw = m.group("bare")
    # "Summer2023!": a trailing "!" is kept (over-redacting is the safe side); a full stop is not.
    value = raw.rstrip(".,;:?)]}")
    return value, m.start("bare"), m.start("bare") + len(value), False


def _phrase(text: str, start: int, colon: bool) -> tuple[int, int] | None:
    """A passphrase of several words from `start` to the end of the clause, if it does not read as prose."""
    m = re.compile(r"[^\s.,;!?\n\"“”]+(?:[ \t]+[^\s.,;!?\n\"“”]+){1,11}").match(text, start)
    if m is None:
        return None
    words = m.group().split()
    if any(w.lower().strip("'’") in _PROSE_WORDS for w in words):
        return None
    if not colon and len(words) < 3:
        return None
    end = m.end()
    if end < len(text) and text[end] not in ".,;!?\n\"”":
        return None
    return m.start(), end


# ---------------------------------------------------------------- candidates


def _card_context(text: str) -> bool:
    return _CARD_WORDS.search(text) is not None or any(_card_ok(m.group().rstrip(" -")) for m in _CARD.finditer(text))


def _password_candidates(text: str, card_context: bool) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []

    def accept(kind: str, m: re.Match[str], weak: bool) -> tuple[int, int] | None:
        value, start, end, quoted = _value(m)
        if kind == "code":
            ok = _code_ok(value)
        elif weak:
            ok = _strong(value)
        else:
            ok = _looks_like_password(value, quoted, text[end:end + 1])
        return (start, end) if ok else None

    def continuations(kind: str, end: int) -> None:
        while (c := _CONTINUATION.match(text, end)) is not None:
            span = accept(kind, c, weak=False)
            if span is None:
                return
            found.append(("password", *span))
            end = span[1]

    for m in _PASSWORD.finditer(text):
        kind = "phrase" if m.group("phrase") else "code" if m.group("code") else "word"
        if kind == "code" and card_context and re.match(r"(?i)security\s+code", m.group("code")):
            continue  # the card's security code: a card_cvv
        weak = m.group("weak") is not None
        if kind == "phrase" and m.group("quote") is None and not weak:
            lead = text[m.end(kind):m.start("bare")]  # qualifier and separator
            phrase = _phrase(text, m.start("bare"), colon=":" in lead or "=" in lead)
            if phrase is not None:
                found.append(("password", *phrase))
                continuations("word", phrase[1])
                continue
        span = accept("word" if kind == "phrase" else kind, m, weak)
        if span is not None:
            found.append(("password", *span))
            continuations(kind if kind == "code" else "word", span[1])
    for m in _SHORT_CUE.finditer(text):
        value, start, end, quoted = _value(m)
        if (_strong(value) or (quoted and _looks_like_password(value, True, ""))):
            found.append(("password", start, end))
    for m in _CHANGED_TO.finditer(text):
        value, start, end, quoted = _value(m)
        ok = _code_ok(value) if m.group("code") else _looks_like_password(value, quoted, text[end:end + 1])
        if ok:
            found.append(("password", start, end))
            continuations("code" if m.group("code") else "word", end)
    for m in _URL_CREDENTIALS.finditer(text):
        if not _PLACEHOLDER.search(m.group("secret")):
            found.append(("password", m.start("secret"), m.end("secret")))
    for m in _CLI_PASSWORD.finditer(text):
        group = "secret" if m.group("secret") is not None else "secret2"
        value = m.group(group).rstrip(".,;")
        if not _PLACEHOLDER.search(value):
            found.append(("password", m.start(group), m.start(group) + len(value)))
    return found



def _assignment(m: re.Match[str]) -> str | None:
    """The entry type an assignment's name implies (None when it names no secret)."""
    parts = re.split(r"[_-]", m.group("name").lower())
    value = m.group("secret").rstrip(".,;")
    if _PLACEHOLDER.search(value):
        return None
    last, before = parts[-1], parts[-2] if len(parts) > 1 else ""
    if last in _ASSIGN_PASSWORD:
        return "password" if len(value) >= 4 and value.lower() not in {"true", "false", "none", "null"} else None
    if last in _ASSIGN_KEY_LAST or (last == "key" and before in _ASSIGN_KEY_BEFORE) or (last == "key" and before == "api"):
        return "api_key" if len(value) >= 8 and _token_ok(value) else None
    return None


def _candidates(text: str) -> list[tuple[str, int, int]]:
    found: list[tuple[str, int, int]] = []
    card_context = _card_context(text)
    for m in _PRIVATE_KEY.finditer(text):
        found.append(("api_key", m.start(), m.end()))
    for m in _PREFIXED_KEYS.finditer(text):
        found.append(("api_key", m.start(), m.end()))
    for m in _BEARER.finditer(text):
        if _token_ok(m.group("secret")):
            found.append(("api_key", m.start("secret"), m.end("secret")))
    for m in _CUED_KEY.finditer(text):
        token = m.group("secret").rstrip(".:")
        if _token_ok(token) and not _PLACEHOLDER.search(token) and (m.group("weak") is None or len(token) >= 20):
            found.append(("api_key", m.start("secret"), m.start("secret") + len(token)))
    for m in _ASSIGN.finditer(text):
        kind = _assignment(m)
        if kind is not None:
            value = m.group("secret").rstrip(".,;")
            found.append((kind, m.start("secret"), m.start("secret") + len(value)))
    for m in _SEED_PHRASE.finditer(text):
        if len(m.group("secret").split()) in (12, 15, 18, 21, 24):
            found.append(("recovery_code", m.start("secret"), m.end("secret")))
    for m in _RECOVERY.finditer(text):
        pos = m.end()
        while (item := _RECOVERY_ITEM.match(text, pos)) is not None:
            code = item.group()
            alnum = code.replace("-", "")
            if not (any(ch.isdigit() for ch in code) and len(alnum) >= 6 and len(set(alnum)) > 2):
                break
            found.append(("recovery_code", item.start(), item.end()))
            gap = _RECOVERY_GAP.match(text, item.end())
            if gap is None:
                break
            pos = gap.end()
    found.extend(_password_candidates(text, card_context))
    for m in _IBAN.finditer(text):
        if _iban_ok(m.group()):
            found.append(("bank_account", m.start(), m.end()))
    for m in _ACCOUNT.finditer(text):
        digits = re.sub(r"\D", "", m.group("secret"))
        if 6 <= len(digits) <= 17 and len(set(digits)) > 1 and not _DATE_LIKE.match(m.group("secret")):
            found.append(("bank_account", m.start("secret"), m.end("secret")))
    for m in _ROUTING.finditer(text):
        if _aba_ok(m.group("secret")):
            found.append(("bank_account", m.start("secret"), m.end("secret")))
    for m in _SORT_CODE.finditer(text):
        found.append(("bank_account", m.start("secret"), m.end("secret")))
    for m in _CARD.finditer(text):
        raw = m.group().rstrip(" -")
        if _card_ok(raw):
            found.append(("card_number", m.start(), m.start() + len(raw)))
    for m in _CVV.finditer(text):
        cue = m.group("cue").lower()
        if cue.startswith(("cvv", "cvc", "card")) or card_context:
            found.append(("card_cvv", m.start("secret"), m.end("secret")))
    if card_context:
        for m in _EXPIRY.finditer(text):
            found.append(("card_expiry", m.start("secret"), m.end("secret")))
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


def _is_ascii_alnum(ch: str) -> bool:
    return ch.isascii() and ch.isalnum()


def _repeats(text: str, chosen: list[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """Other occurrences of a detected value (whole tokens only), so that no copy stays in plain text."""
    extra: list[tuple[str, int, int]] = []
    covered = bytearray(len(text))
    for _, start, end in chosen:
        covered[start:end] = b"\x01" * (end - start)
    seen: set[str] = set()
    for kind, start, end in chosen:
        value = text[start:end]
        if len(value) < 4 or value in seen:
            continue
        seen.add(value)
        at = text.find(value)  # str.find, not a regex: one pass per distinct value stays cheap
        while at != -1:
            after = at + len(value)
            whole = (at == 0 or not _is_ascii_alnum(text[at - 1])) and (
                after == len(text) or not _is_ascii_alnum(text[after]))
            if whole and not any(covered[at:after]):
                extra.append((kind, at, after))
                covered[at:after] = b"\x01" * len(value)
            at = text.find(value, at + 1)
    return extra


# ---------------------------------------------------------------- main


_WINDOW = 2 * _CAPTION_MAX
_GUARD_ALL_VALUES = 64  # texts with more distinct secrets guard the values near each one only


CAPTION_QUOTES = " mentioned: '"  # a caption's kind, then the words around the value, quoted


def _caption(text: str, kind: str, spans: list[tuple[int, int]], index: int, values: list[str]) -> str:
    """Describe the secret with its context, every detected secret replaced by "[secret]".

    `spans` are all matches in text order, `index` this one's, `values` the distinct secret values
    to guard (longest first). Only a window around the match is looked at, so a text with many
    secrets costs linear time per caption.
    """
    own = spans[index]
    lo_text, hi_text = max(0, own[0] - _WINDOW), min(len(text), own[1] + _WINDOW)
    # spans never overlap, so the ones ending after lo_text start after the one before them
    first = max(0, bisect_left(spans, (lo_text, 0)) - 1)
    last = bisect_left(spans, (hi_text, 0))
    near = [(s, e) for s, e in spans[first:last] if e > lo_text]
    lo_text = min([lo_text, *(s for s, _ in near)])
    hi_text = max([hi_text, *(e for _, e in near)])
    parts: list[str] = []
    cursor = lo_text
    own_at = 0
    for start, end in near:
        parts.append(text[cursor:start])
        if (start, end) == own:
            own_at = sum(len(p) for p in parts)
        parts.append("[secret]")
        cursor = end
    parts.append(text[cursor:hi_text])
    context = "".join(parts)
    guard = values if len(values) <= _GUARD_ALL_VALUES else sorted(
        {text[s:e] for s, e in near}, key=len, reverse=True)
    # A secret repeated in the text inside another word (outside any match) must not leak either.
    for value in guard:
        if value in context:
            context = context.replace(value, "[secret]")
    context = " ".join(context.split())
    # Whitespace collapsing can shift the position slightly; re-find the nearest placeholder.
    own_at = _nearest_placeholder(context, own_at)
    prefix = f"{_DESCRIPTIONS[kind]}{CAPTION_QUOTES}"
    budget = _CAPTION_MAX - len(prefix) - 1
    clipped_left, clipped_right = lo_text > 0, hi_text < len(text)
    if len(context) > budget or clipped_left or clipped_right:
        half = (budget - 2) // 2
        lo = max(0, min(own_at - half, len(context) - (budget - 2)))
        hi = lo + budget - 2
        snippet = context[lo:hi]
        context = ("…" if lo > 0 or clipped_left else "") + snippet + ("…" if hi < len(context) or clipped_right else "")
        context = context[: budget]
    caption = f"{prefix}{context}'"
    # Last guard: a value collapsed across whitespace, or one that happens to spell part of the
    # description ("password"), must not survive either.
    for value in [text[own[0]:own[1]], *guard]:
        for form in {value, " ".join(value.split())}:
            if form and form in caption:
                caption = caption.replace(form, "[secret]")
    return caption


def _nearest_placeholder(context: str, approx: int) -> int:
    positions = [m.start() for m in re.finditer(re.escape("[secret]"), context)]
    if not positions:
        return 0
    return min(positions, key=lambda p: abs(p - approx))


_EMAIL_VALUE = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)*\.[A-Za-z]{2,}")
_SSN_VALUE = re.compile(r"\d{3}-\d{2}-\d{4}")


def prefixed_key_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds a token of a well-known provider's shape ("sk-proj-…", "ghp_…", "AKIA…")."""
    return [m.span() for m in _PREFIXED_KEYS.finditer(text)]


def value_fits(entry_type: str, value: str) -> bool:
    """Whether a value offered for the vault (by a model) has the shape its entry type says: a card
    number passes Luhn, a phone has 9-15 digits, a password looks chosen, an address holds a number
    and words. A plain word from the chat fits no type. Unknown entry types fit nothing."""
    value = value.strip()
    if not value or _PLACEHOLDER.search(value):
        return False
    digits = re.sub(r"\D", "", value)
    checks: dict[str, Callable[[], bool]] = {
        "password": lambda: _code_ok(value) or (" " not in value and len(value) >= 6 and (
            (any(ch.isdigit() for ch in value) and any(ch.isalpha() for ch in value))
            or bool(re.search(r"[!@#$%^&*=?~<>{}\[\]|\\]", value)))),
        "api_key": lambda: len(value) >= 16 and " " not in value and _token_ok(value),
        "card_number": lambda: _card_ok(value),
        "card_cvv": lambda: bool(re.fullmatch(r"\d{3,4}", value)),
        "card_expiry": lambda: bool(re.fullmatch(r"(?:0[1-9]|1[0-2])\s*/\s*(?:\d{2}|\d{4})", value)),
        "bank_account": lambda: (bool(re.fullmatch(r"[A-Z]{2}\d{2}[A-Za-z0-9 ]+", value)) and _iban_ok(value)) or (value.replace(" ", "").replace("-", "").isdigit()
                                                    and 6 <= len(digits) <= 18),
        "recovery_code": lambda: len(value) >= 6 and (_token_ok(value) or len(value.split()) >= 12),
        "id_number": lambda: bool(_SSN_VALUE.fullmatch(value)) or (6 <= len(digits) and _token_ok(value)),
        "phone": lambda: _phone_ok(value),
        "email": lambda: bool(_EMAIL_VALUE.fullmatch(value)),
        "address": lambda: bool(re.search(r"\d", value)) and len(re.findall(r"[^\W\d_]{3,}", value)) >= 2,
        "booking": lambda: len(value) >= 5 and " " not in value and _token_ok(value),
    }
    check = checks.get(entry_type)
    return bool(check and check())


def find_secrets(text: str) -> list[SecretMatch]:
    """Return the non-overlapping secrets in `text`, in text order.

    When candidates overlap, the more specific / more sensitive kind wins (an API key beats a
    phone number hiding inside it), then the longer span. A detected value that occurs again
    elsewhere in the text is returned there too (same entry type and value). The rules read the
    text without its invisible format characters (`_without_format_chars`): a span covers those
    inside a secret, and the value is the secret without them.
    """
    if not text:
        return []
    view, origins = _without_format_chars(text)
    if origins is None:
        return _find(text)
    return [_placed(match, origins) for match in _find(view)]


def _without_format_chars(text: str) -> tuple[str, list[int] | None]:
    """`text` without its format characters (Unicode category Cf: zero-width spaces and joiners,
    soft hyphens, direction marks) and, for each character kept, its index in `text` (None when
    nothing was dropped). Why: chat apps and web pages paste them inside keys, and a key cut by a
    zero-width space was vaulted only up to it, the rest stored in plain text."""
    if text.isascii():
        return text, None
    kept = [i for i, ch in enumerate(text) if unicodedata.category(ch) != "Cf"]
    if len(kept) == len(text):
        return text, None
    return "".join(text[i] for i in kept), kept


def _placed(match: SecretMatch, origins: list[int]) -> SecretMatch:
    """A match in the text without format characters, placed on the text itself (`origins`: each
    kept character's index there): its span runs from its first to its last character."""
    return replace(match, start=origins[match.start], end=origins[match.end - 1] + 1)


def _find(text: str) -> list[SecretMatch]:
    """`find_secrets` on a text the rules read as it is."""
    candidates = _candidates(text)
    candidates.sort(key=lambda c: (_PRIORITY[c[0]], -(c[2] - c[1]), c[1]))
    chosen: list[tuple[str, int, int]] = []
    taken = bytearray(len(text))
    for kind, start, end in candidates:
        if start >= end or any(taken[start:end]):
            continue
        chosen.append((kind, start, end))
        taken[start:end] = b"\x01" * (end - start)
    chosen.extend(_repeats(text, chosen))
    chosen.sort(key=lambda c: c[1])
    spans = [(s, e) for _, s, e in chosen]
    values = sorted({text[s:e] for s, e in spans}, key=len, reverse=True)
    return [
        SecretMatch(
            entry_type=kind,
            value=text[start:end],
            start=start,
            end=end,
            sensitivity=_SENSITIVITY[kind],
            caption=_caption(text, kind, spans, i, values),
        )
        for i, (kind, start, end) in enumerate(chosen)
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
