"""The input log: every input is written (encrypted) before it is processed, and ends processed
or failed with its reason, so nothing acknowledged is lost and failed work can be retried."""

from __future__ import annotations

import json
from typing import Sequence

from sqlalchemy import select, update
from sqlalchemy.engine import Engine
from sqlmodel import Session

from mirix_py.records import InputKind, InputRecord, InputStatus, Message, utcnow
from mirix_py.store.crypto import Cipher
from mirix_py.store.tables import InputRow


class InputLog:
    def __init__(self, engine: Engine, cipher: Cipher) -> None:
        self.engine = engine
        self.cipher = cipher

    def _to_row(self, record: InputRecord) -> InputRow:
        payload = json.dumps({"messages": [m.model_dump(mode="json") for m in record.messages],
                              "metadata": record.metadata})
        return InputRow(
            id=record.id, user_id=record.user_id, kind=record.kind.value, payload=self.cipher.encrypt(payload),
            source_id=record.source_id, occurred_at=record.occurred_at, status=record.status.value,
            error=record.error, attempts=record.attempts, created_at=record.created_at,
            processed_at=record.processed_at,
        )

    def _to_record(self, row: InputRow) -> InputRecord:
        payload = json.loads(self.cipher.decrypt(row.payload))
        messages = [Message.model_validate(m) for m in payload["messages"]]
        return InputRecord(
            id=row.id, user_id=row.user_id, kind=InputKind(row.kind), messages=messages, source_id=row.source_id,
            metadata=payload.get("metadata") or {},
            occurred_at=row.occurred_at, status=InputStatus(row.status), error=row.error, attempts=row.attempts,
            created_at=row.created_at, processed_at=row.processed_at,
        )

    def append(self, records: Sequence[InputRecord]) -> None:
        with Session(self.engine) as session:
            session.add_all([self._to_row(r) for r in records])
            session.commit()

    def get(self, input_id: str) -> InputRecord | None:
        with Session(self.engine) as session:
            row = session.get(InputRow, input_id)
            return None if row is None else self._to_record(row)

    def mark(self, input_ids: Sequence[str], status: InputStatus, error: str | None = None) -> None:
        if not input_ids:
            return
        values: dict = {"status": status.value, "error": error}
        if status in (InputStatus.processed, InputStatus.failed):
            values["processed_at"] = utcnow()
        if status is InputStatus.processing:
            values["attempts"] = InputRow.attempts + 1
        with Session(self.engine) as session:
            session.execute(update(InputRow).where(InputRow.id.in_(list(input_ids))).values(**values))
            session.commit()

    def by_status(self, status: InputStatus, *, user_id: str | None = None, limit: int = 1000) -> list[InputRecord]:
        query = select(InputRow).where(InputRow.status == status.value)
        if user_id is not None:
            query = query.where(InputRow.user_id == user_id)
        with Session(self.engine) as session:
            rows = session.execute(query.order_by(InputRow.created_at).limit(limit)).scalars().all()
            return [self._to_record(r) for r in rows]
