"""Which side a user's reads go to: the replica's searcher and chat flow, or the primary's while the
replica has not replayed that user's last write through this engine (`store.write_marks`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mirix_py.store.search import Searcher
from mirix_py.store.write_marks import WriteMarks

if TYPE_CHECKING:
    from mirix_py.agents.chat import ChatFlow


@dataclass(frozen=True)
class ReadSide:
    searcher: Searcher
    chat: ChatFlow  # chat and /context: retrieval, core blocks and the answer, read on this side


@dataclass(frozen=True)
class Readers:
    primary: ReadSide
    replica: ReadSide | None = None  # None: every read on the primary
    marks: WriteMarks | None = None  # None with a replica: every read there (read-your-writes off)

    def on_primary(self, user_id: str) -> bool:
        """Whether `user_id`'s reads go to the primary now."""
        return self.replica is None or (self.marks is not None and self.marks.pending(user_id))

    def side(self, user_id: str) -> ReadSide:
        if self.replica is None or self.on_primary(user_id):
            return self.primary
        return self.replica
