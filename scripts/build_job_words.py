"""Write `mirix_py/agents/offline/rules/job_words.txt`: the nouns WordNet files under a worker or a professional.

The offline rules tell a job ("Priya is a barrister") from other things one is ("a mess", "a fan") by the
job's head word. A hand-kept list misses most jobs a new text names, so this script takes every one-word
noun WordNet 3.0 puts under worker.n.01 ("a person who works at a specific occupation") or
professional.n.01, from Debian's `wordnet-base` package:

    apt-get download wordnet-base && dpkg-deb -x wordnet-base_*.deb /tmp/wn
    python scripts/build_job_words.py /tmp/wn/usr/share/wordnet/data.noun

The output is committed; nothing reads WordNet at run time.
"""

from __future__ import annotations

import collections
import hashlib
import sys
from pathlib import Path

ROOTS = {"09632518": "worker", "10480253": "professional"}  # synset offsets in WordNet 3.0's data.noun
# nouns under those roots that say how someone is rather than what they do for a living
NOT_JOBS = frozenset("""
    worker professional reader provincial gipsy gypsy setter digger slave slavey drudge toiler peon serf thrall
    helot hack dogsbody plodder grind swot crammer beaver eager eager-beaver workhorse mover shaker pusher
    jobber temp trusty ringer skinner fence fixer ganger lumper picker heaver tripper finisher striker
    wrecker sitter layabout idler beginner novice amateur hand actor ace charmer help helper hire head man woman
    bunny cog coyote decoy fodder gob jack lovely major pawn pin-up poser poster rat scab second stroke tar sprog
    yuppie cookie cooky don elder earner hanger rocker topper waker voider trier router plier shill teaser rouser
    lister gutter accomplice companion confederate familiar gallant hangover holdover incumbent independent
    ordinary regular subordinate subsidiary supporter swagger striver temporary voluntary associate recruit
    employable breadwinner careerist settler vigilante unionist occupier preserver noticer arouser scratcher
    sponger stalker processor regulator accumulator remover searcher wheeler muzzler underling workmate flanker
    floater goldbrick hireling enforcer char mate master mistress checker breaker collector carrier recorder
    founder domestic official punter quack trooper private gentleman volunteer resident veteran
""".split())
DATA_NOUN_SHA256 = "fea17d2f9656611334eac790e5d69e47645fa180c4aa481fb4cd9b3520754ca2"
OUT = Path(__file__).resolve().parents[1] / "mirix_py" / "agents" / "offline" / "rules" / "job_words.txt"


def read_hyponyms(path: Path) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    words: dict[str, list[str]] = {}
    children: dict[str, list[str]] = collections.defaultdict(list)
    for line in path.read_text(encoding="latin-1").splitlines():
        if line.startswith("  "):
            continue  # the licence at the head of the file
        fields = line.split(" | ")[0].split()
        offset, count = fields[0], int(fields[3], 16)
        words[offset] = [fields[4 + 2 * i] for i in range(count)]
        at = 4 + 2 * count
        for i in range(int(fields[at])):
            symbol, target, pos = fields[at + 1 + 4 * i: at + 4 + 4 * i]
            if symbol == "@" and pos == "n":  # a hypernym: `offset` is a kind of `target`
                children[target].append(offset)
    return words, children


def job_words(path: Path) -> list[str]:
    words, children = read_hyponyms(path)
    found: set[str] = set()
    stack = list(ROOTS)
    while stack:
        offset = stack.pop()
        found.update(w.lower() for w in words[offset] if w.islower() and "_" not in w and "." not in w)
        stack += children[offset]
    return sorted(found - NOT_JOBS)


def main(argv: list[str]) -> int:
    path = Path(argv[1] if len(argv) > 1 else "/usr/share/wordnet/data.noun")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    if digest != DATA_NOUN_SHA256:
        print(f"{path}: sha256 {digest}, expected WordNet 3.0's {DATA_NOUN_SHA256}", file=sys.stderr)
        return 1
    found = job_words(path)
    licence = """Nouns that name a job, from WordNet 3.0: every one-word noun under worker.n.01 or professional.n.01.
Written by scripts/build_job_words.py; do not edit by hand.

WordNet 3.0 Copyright 2006 by Princeton University.  All rights reserved.
THIS SOFTWARE AND DATABASE IS PROVIDED "AS IS" AND PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR WARRANTIES,
EXPRESS OR IMPLIED.  BY WAY OF EXAMPLE, BUT NOT LIMITATION, PRINCETON UNIVERSITY MAKES NO REPRESENTATIONS OR
WARRANTIES OF MERCHANTABILITY OR FITNESS FOR ANY PARTICULAR PURPOSE OR THAT THE USE OF THE LICENSED SOFTWARE,
DATABASE OR DOCUMENTATION WILL NOT INFRINGE ANY THIRD PARTY PATENTS, COPYRIGHTS, TRADEMARKS OR OTHER RIGHTS."""
    header = "".join(f"# {line}".rstrip() + "\n" for line in licence.splitlines())
    OUT.write_text(header + "\n".join(_wrapped(found, 112)) + "\n", encoding="utf-8")
    print(f"{len(found)} words -> {OUT}")
    return 0


def _wrapped(words: list[str], width: int) -> list[str]:
    lines, line = [], ""
    for word in words:
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}".strip()
    return [*lines, line] if line else lines


if __name__ == "__main__":
    sys.exit(main(sys.argv))
