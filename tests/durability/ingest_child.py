"""Child process for the fault-injection test: logs inputs with wait=False and prints an ACK line
for each one as soon as `add` returns (the input is durable in the log at that point)."""

import sys
from datetime import datetime, timedelta, timezone

from mirix_py.engine import Mirix

NAMES = ["Tom", "Anna", "Priya", "Lena", "Omar", "Kenji"]


def message(i: int) -> str:
    name = NAMES[i % len(NAMES)]
    kinds = [
        f"My colleague {name} lives in Oslo and we talked about project {i}.",
        f"Reminder {i}: my backup code is Kx{i:03d}-Secret-{i * 7}",
        f"How I rotate logs, version {i}:\n1. stop the service\n2. gzip old logs\n3. start the service",
        f"I love hiking number {i} with {name} near the lake.",
        f"Went to the market on day {i} and bought {i} apples.",
    ]
    return kinds[i % len(kinds)]


def main() -> None:
    data_dir, count = sys.argv[1], int(sys.argv[2])
    t0 = datetime(2024, 1, 1, tzinfo=timezone.utc)
    mx = Mirix(data_dir)
    print("READY", flush=True)
    for i in range(count):
        result = mx.add(message(i), user_id="u", occurred_at=t0 + timedelta(hours=i), source_id=f"msg-{i}",
                        wait=False)
        print(f"ACK {i} {result.input_ids[0]}", flush=True)
    mx.flush()
    mx.close()
    print("DONE", flush=True)


if __name__ == "__main__":
    main()
