"""A text longer than the inputs of the `limited_mx` engine (tests/integrations/conftest.py) take."""

LIMIT = 1000  # max_input_chars of `limited_mx`: short, so a test's messages run over it
DIARY = "\n\n".join(f"Day {n}. We walked the dog along the river in the morning. The water was calm and grey."
                    for n in range(1, 31)) + "\n\nOn the last day a zeppelin landed beside the lighthouse."
