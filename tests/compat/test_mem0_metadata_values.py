"""mirix_py.compat.mem0: `metadata` takes JSON values and gives them back as given. A value JSON cannot
hold is refused naming its key, nothing written: it was kept as its Python text (a set as "{'a', 'b'}",
bytes as "b'...'", an object as its repr), NaN and Infinity were kept (and read back over REST as
null), an int key became "1" and a tuple key raised a TypeError. A date-time is kept as ISO 8601 text."""

from __future__ import annotations

import decimal
import uuid
from datetime import date, datetime, timezone

import pytest

from mirix_py.compat.mem0 import Memory
from mirix_py.errors import InvalidInput
from mirix_py.records import InputStatus


class Secretive:
    def __repr__(self) -> str:
        return "<Secretive secret=hunter2>"


REFUSED = [
    ({"tags": {"a", "b"}}, "metadata.tags is of type set"),
    ({"blob": b"\x00\x01abc"}, "metadata.blob is of type bytes"),
    ({"o": Secretive()}, "metadata.o is of type Secretive"),
    ({"price": decimal.Decimal("1.10")}, "metadata.price is of type Decimal"),
    ({"id": uuid.UUID(int=5)}, "metadata.id is of type UUID"),
    ({"pair": (1, 2)}, "metadata.pair is of type tuple"),
    ({"v": float("nan")}, "metadata.v is nan: JSON has no NaN or Infinity"),
    ({"v": float("-inf")}, "metadata.v is -inf"),
    ({1: "x"}, "metadata has a key of type int"),
    ({(1, 2): "x"}, "metadata has a key of type tuple"),
    ({"a": [{"b": {1, 2}}]}, r"metadata.a\[0\].b is of type set"),
    ({"a": {"when": datetime(2024, 1, 2).time()}}, "metadata.a.when is of type time"),
]


@pytest.fixture
def m(mx_sqlite):
    return Memory(mx=mx_sqlite)


@pytest.mark.parametrize("metadata,message", REFUSED, ids=[m for _, m in REFUSED])
def test_a_value_json_cannot_hold_is_refused_naming_its_key_and_nothing_is_written(m, metadata, message):
    for infer in (True, False):
        with pytest.raises(InvalidInput, match=message) as caught:
            m.add("I collect stamps.", user_id="ada", metadata=metadata, infer=infer)
        assert "hunter2" not in str(caught.value)  # an object's repr is not quoted
    assert m.get_all(user_id="ada") == {"results": []}
    assert m.mx.inputs.newest(user_id="ada", statuses=list(InputStatus), limit=10) == []


@pytest.mark.parametrize("metadata,message", REFUSED[:4], ids=[m for _, m in REFUSED[:4]])
def test_an_update_with_such_a_value_changes_nothing(m, metadata, message):
    added = m.add("I collect stamps.", user_id="ada", metadata={"topic": "stamps"}, infer=False)
    memory_id = added["results"][0]["id"]
    with pytest.raises(InvalidInput, match=message):
        m.update(memory_id, text="I collect coins.", metadata=metadata)
    kept = m.get(memory_id)
    assert kept["memory"] == "I collect stamps." and kept["metadata"] == {"topic": "stamps"}


def test_json_values_come_back_as_given(m):
    metadata = {"s": "x", "n": 3, "f": 1.5, "yes": True, "none": None, "list": [1, "a", [2]], "d": {"k": "v"}}
    added = m.add("I collect stamps.", user_id="ada", metadata=metadata, infer=False)["results"][0]
    assert added["metadata"] == metadata and m.get(added["id"])["metadata"] == metadata


def test_a_date_or_date_time_is_kept_as_its_iso_8601_text(m):
    when = datetime(2024, 1, 2, 3, 4, tzinfo=timezone.utc)
    added = m.add("I collect stamps.", user_id="ada", metadata={"when": when, "day": date(2024, 1, 2)},
                  infer=False)["results"][0]
    assert m.get(added["id"])["metadata"] == {"when": "2024-01-02T03:04:00+00:00", "day": "2024-01-02"}
    found = m.search("stamps", user_id="ada", filters={"when": "2024-01-02T03:04:00+00:00"})["results"]
    assert [r["id"] for r in found] == [added["id"]]
    m.update(added["id"], metadata={"when": datetime(2025, 5, 6, tzinfo=timezone.utc)})
    assert m.get(added["id"])["metadata"]["when"] == "2025-05-06T00:00:00+00:00"


def test_metadata_that_cannot_fit_is_refused_with_its_size_and_nothing_is_written(m):
    with pytest.raises(InvalidInput, match=r"metadata is at least [\d,]+ characters of JSON, over the 256"):
        m.add("I like dates.", user_id="ada", metadata={f"k{i}": i for i in range(100_000)})
    assert m.get_all(user_id="ada") == {"results": []}


def test_a_long_secret_still_goes_to_the_vault_and_fits(m):
    added = m.add("I rotated the key.", user_id="ada", metadata={"api": "sk-" + "a1" * 150}, infer=False)
    assert added["results"][-1]["metadata"]["api"].startswith("[vault:kv_")


def test_metadata_that_is_not_a_dict_is_refused(m):
    with pytest.raises(InvalidInput, match="metadata must be a dict, not list"):
        m.add("I collect stamps.", user_id="ada", metadata=["stamps"])
    assert m.get_all(user_id="ada") == {"results": []}
