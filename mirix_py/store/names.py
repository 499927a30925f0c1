"""Who a question asks about, and what it asks. In a memory of people talking, "Which cities has Jon
visited?" names Jon, and every turn Jon said carries his name ("Jon: Thanks!"): the name matches
short, empty turns better than it matches the one about Paris, so a question that names someone is
also searched without the name, and the named people's own turns are preferred among the results.

The names are the user's actors (who said an episode, `MemoryStore.actors`) found in the question as
whole words: nothing here knows what a name looks like. Pure functions; `Searcher.search` fuses the legs
(see NAME_FREE_WEIGHT)."""

from __future__ import annotations

import re
from typing import Mapping, Sequence


def named_actors(query: str, actors: Sequence[str]) -> list[str]:
    """The actors the query names as a whole word (case aside), longest first, each once."""
    found = []
    for actor in sorted({a.strip() for a in actors if a and a.strip()}, key=lambda a: (-len(a), a)):
        if re.search(rf"(?<!\w){re.escape(actor)}(?!\w)", query, re.IGNORECASE):
            found.append(actor)
    return found


def without_names(query: str, names: Sequence[str]) -> str:
    """The query with the names (and a possessive 's after them) taken out, spaces tidied; "" when
    only punctuation is left."""
    for name in names:
        query = re.sub(rf"(?<!\w){re.escape(name)}(?:['’]s)?(?!\w)", " ", query, flags=re.IGNORECASE)
    rest = " ".join(query.split())
    return rest if re.search(r"\w", rest) else ""


def actor_leg(ranked: Sequence[str], actor_of: Mapping[str, str | None], named: Sequence[str]) -> list[str]:
    """The memories of `ranked` said by one of the `named` actors, in `ranked`'s order."""
    wanted = {n.lower() for n in named}
    return [i for i in ranked if (actor_of.get(i) or "").lower() in wanted]
