"""A capital I that OCR read as a lowercase l, in a name.

In sans-serif screen fonts "I" and "l" are the same vertical stroke, and Tesseract's dictionary only
settles it for words it knows: a surname such as "Iyer" or "Ivanova" comes out "lyer", "lvanova", so
the memory, its search and the reader's context all spell the person wrong. The fix is narrow on
purpose: only a word right after a capitalised word (the second part of a name), only when its l is
followed by a consonant (no English word starts "lb", "lv", "ln"… and the few that start "ly" are
listed), so a lowercase word in running text or a shell command ("ls", "ln -s") is never touched."""

from __future__ import annotations

import re
from typing import Sequence

# An "l" followed by a letter no English word follows it with (y and l aside, see below).
_MISREAD = re.compile(r"^l[bcdfghjkmnpqrstvwxz][a-z]+$")
_MISREAD_Y = re.compile(r"^ly[a-z]+$")
# English words that begin "ly" (and their common forms): kept as read.
LY_WORDS = frozenset(
    """lycee lyceum lychee lychees lycra lye lying lyme lymph lymphatic lymphoma lynch lynched lynching
    lynx lynxes lyre lyres lyric lyrical lyrically lyricism lyricist lyricists lyrics lysine lysis
    lysol lyft lyon lyons""".split())
# Lowercase abbreviations and shell commands that start l + consonant ("Run lsof -i", "Weight lbs"):
# kept as read.
KEPT = frozenset(
    """lbs ltd lcd lpg lng lts lsd lvl lvm lvs lxc lxd lsof lsblk lspci lsusb lscpu lsmod lshw lsattr ldd
    ldap ldconfig lftp lpr lpq lprm lpstat lzma lzop""".split())
_NAME_PART = re.compile(r"^[A-Z][a-z]+[,.]?$")


def misread_capital_i(word: str) -> bool:
    """Whether `word` (as OCR read it, a comma or full stop after it aside) is a capital-I word whose
    I came out as l."""
    word = word.rstrip(",.;:")
    if word in KEPT:
        return False
    if _MISREAD.match(word):
        return True
    return bool(_MISREAD_Y.match(word)) and word not in LY_WORDS


def fix_capital_i(words: Sequence[str]) -> list[str]:
    """A line's words with "l" read for "I" put back where a capitalised word comes just before:
    ["From:", "Jonas", "lyer"] -> ["From:", "Jonas", "Iyer"]."""
    fixed = list(words)
    for i in range(1, len(fixed)):
        if _NAME_PART.match(fixed[i - 1]) and misread_capital_i(fixed[i]):
            fixed[i] = "I" + fixed[i][1:]
    return fixed
