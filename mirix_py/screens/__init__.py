"""Screenshots at the engine: screenshot inputs grouped into stretches of work (`activity`),
and the screenshot methods of `Mirix` with the engine side of the pipeline (`engine_methods`)."""
