"""Dots and commas inside names, kept from being read as the end of a sentence or clause.

"Ursula K. Le Guin", "Dr. Rivera", "J.R.R. Tolkien", "Washington, D.C.", "Crosby, Stills, Nash &
Young": the rules cut what they capture at "." and ",", which cut these names short. `shield`
swaps such dots and commas for look-alike characters no rule stops at (one character for one, so
offsets stay valid) and `unshield` puts them back in whatever the rules captured.
"""

from __future__ import annotations

import re

__all__ = ["shield", "unshield"]

DOT = "\u2024"  # one dot leader
COMMA = "\u201a"  # single low-9 quotation mark

_TITLES = r"(?:Mr|Mrs|Ms|Mx|Dr|Prof|St|Mt|Jr|Sr|Co|Inc|Ltd|Corp|Bros|Ft|Gen|Capt|Rev|Hon|No|vs|etc)"
# a dot after a title or an initial ("K.", "J.R.R.", "D.C") when a name goes on after it, or at the
# very end of a name that ends the text ("Washington, D.C.")
_DOTS = re.compile(rf"(?:(?<![\w.]){_TITLES}|(?<![\w'’])[A-Z](?:\.[A-Z])*)\.(?=\s*[A-Z&(]|[A-Z])")
_INNER_INITIALS = re.compile(r"(?<![\w'’])[A-Z](?:\.[A-Z])+\.?")
# a sentence never goes on in lowercase: the last dot of "D.C." before "are" belongs to the name
_LOWER_NEXT = re.compile(r"\s+[a-z]")
# a comma between capitalised words of one name: "Paris, France", "Crosby, Stills, Nash & Young",
# "Crouching Tiger, Hidden Dragon". The words after the comma must be capitalised up to the end
# of the sentence, the clause or a preposition ("Smith, Jones & Co. in Leeds"), not a verb
# ("Jon, Bob works at Meta" keeps its comma).
_CAP = rf"(?:[A-Z][\w'’{DOT}-]*|&|[A-Z]{DOT}?)"
_COMMAS = re.compile(
    rf"(?<=[A-Za-z{DOT}]),(?=\s+{_CAP}(?:\s+{_CAP})*(?:[{DOT}.]?\s*(?:[,.!?;:)\n]|$)|\s+(?:in|by|of|from|at|on)\b))"
)
_FIRST_CAP = re.compile(r"(?:^|\s)([A-Za-z'’]+)[\w'’-]*\s*$")


# words that open a sentence or address someone, never half of a name ("Hi, I'm Carlos", "Thanks, Mel")
_NOT_NAMES = frozenset("I I'm I've I'd I'll I’m Hi Hello Hey Thanks Thank Yes No Yeah Well Oh So Wow Sorry Okay "
                       "Ok OK Sure Congrats Also And But Or Then".split())


def _dot(m: re.Match[str]) -> str:
    return m.group().replace(".", DOT)


def shield(text: str) -> str:
    """`text` with the dots and commas that belong to names swapped for look-alikes."""
    text = _INNER_INITIALS.sub(lambda m: m.group()[:-1].replace(".", DOT) + m.group()[-1]
                               if m.group().endswith(".") and not _LOWER_NEXT.match(m.string, m.end())
                               else m.group().replace(".", DOT), text)
    text = _DOTS.sub(_dot, text)
    out = []
    last = 0
    for m in _COMMAS.finditer(text):
        before = text[:m.start()].rstrip()
        word = re.search(r"([\w'’" + DOT + r"-]+)$", before)
        after = text[m.end():].split(None, 1)[:1]
        if not word or not word.group(1)[:1].isupper() or word.group(1) in _NOT_NAMES \
                or (after and after[0].rstrip(",.!") in _NOT_NAMES):
            continue  # "I love painting, Bob", "Hi, I'm Carlos": not one name across the comma
        out.append(text[last:m.start()])
        out.append(COMMA)
        last = m.end()
    out.append(text[last:])
    return "".join(out)


def unshield(text: str) -> str:
    return text.replace(DOT, ".").replace(COMMA, ",")
