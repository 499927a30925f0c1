"""The parts of the `Mirix` facade kept out of engine.py: its awaitable twin `AsyncMirix`
(`async_mirix`), the background processing of queued inputs (`background`), and `Mirix.maintenance`
(`maintenance`)."""
