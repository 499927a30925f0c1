"""Where callers meet the engine: what they hand to `add`, checked (`inputs`), and times shown
in their own zone (`timezones`). Both raise InvalidInput, so they sit above the errors."""
