"""Who each user's recent search results were said by. Hybrid search with the name-free legs learns
whom a question names only from its first full-text results (`store.names`), so the legs of the
question without the names would wait for them; with the actors of that user's earlier results it
can guess the names from the question alone and start those legs at once. A guess only decides
what runs first: the search checks it against the results and never ranks by it."""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Iterable

USERS = 1024  # users remembered (least recently searched dropped first)
ACTORS_PER_USER = 256  # actors remembered per user (least recently seen dropped first)


class SeenActors:
    """Per user, the actors of recent search results, bounded in users and actors per user."""

    def __init__(self, users: int = USERS, per_user: int = ACTORS_PER_USER) -> None:
        self._users: OrderedDict[str, OrderedDict[str, None]] = OrderedDict()
        self._max_users = users
        self._per_user = per_user
        self._lock = threading.Lock()

    def add(self, user_id: str, actors: Iterable[str | None]) -> None:
        given = [a.strip() for a in actors if a and a.strip()]
        if not given:
            return
        with self._lock:
            seen = self._users.setdefault(user_id, OrderedDict())
            self._users.move_to_end(user_id)
            for actor in given:
                seen[actor] = None
                seen.move_to_end(actor)
            while len(seen) > self._per_user:
                seen.popitem(last=False)
            while len(self._users) > self._max_users:
                self._users.popitem(last=False)

    def in_text(self, user_id: str, text: str) -> list[str]:
        """The user's seen actors whose name occurs in `text` (case aside), even inside a word: a
        cheap first cut that `names.named_actors` then narrows to whole words."""
        lowered = text.lower()
        with self._lock:
            seen = list(self._users.get(user_id, ()))
        return [a for a in seen if a.lower() in lowered]
