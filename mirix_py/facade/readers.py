"""Which side a user's reads go to: the replica's searcher and chat flow, or the primary's while the
replica has not replayed that user's last write through this engine (`store.write_marks`), or a
write position the caller brings from another process (`after`, a read's `read_after`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from mirix_py.errors import InvalidInput
from mirix_py.store.search import Searcher
from mirix_py.store.write_marks import WriteMarks, lsn_value, replayed_position

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

    def side(self, user_id: str, *, after: str | None = None) -> ReadSide:
        """`after`: a write position (`Mirix.write_position`, an add's `write_position`) the read must see;
        the primary's side until the replica has replayed past it."""
        wanted = parse_position(after)
        if self.replica is None:
            return self.primary
        if wanted is not None:
            replayed = replayed_position(self.replica.searcher.store.engine)
            if replayed is not None and replayed < wanted:
                if self.marks is not None:
                    self.marks.kept_on_primary += 1
                return self.primary
        if self.on_primary(user_id):
            return self.primary
        return self.replica


def parse_position(value: str | None) -> int | None:
    """A write position as a caller passes it ('16/B374D848'), or InvalidInput."""
    if value is None:
        return None
    try:
        if not isinstance(value, str):
            raise ValueError(value)
        return lsn_value(value.strip())
    except ValueError as exc:
        raise InvalidInput(f"read_after: {value!r} is not a write position (like '16/B374D848')") from exc
