"""The guard rewrites a core line holding a secret everywhere the block keys it by its text: its value,
`said` and `said_offsets`, so the line keeps its day and the clock it was said by."""

from __future__ import annotations

from datetime import datetime, timezone

from mirix_py.records import CoreMemory
from mirix_py.secrets.detection import find_secrets
from mirix_py.secrets.guard import Known, SecretGuard

WIFI = "CorrectHorse!42"


def test_a_cleaned_line_keeps_the_clock_it_was_said_by():
    line = f"wifi password is {WIFI}"
    block = CoreMemory(id="core_1", user_id="u", label="human", value=f"likes tea\n{line}",
                       said={line: datetime(2026, 1, 2, 7, 30, tzinfo=timezone.utc)}, said_offsets={line: -480})
    cleaned, vault = SecretGuard(find_secrets).clean(block, Known())
    assert [v.secret_value for v in vault] == [WIFI]
    cleaned_line = cleaned.value.splitlines()[1]
    assert WIFI not in cleaned_line and cleaned.said_offsets == {cleaned_line: -480}
    assert cleaned.dated_lines() == [f"{cleaned_line} (said 1 January 2026)", "likes tea"]
