"""An embedder for tests that notes every text the engine asks it to embed."""


class RecordingEmbedder:
    """The engine's embedder, noting each text it embeds (`texts`)."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.dim = inner, inner.name, inner.dim
        self.texts: list[str] = []

    def embed(self, texts):
        self.texts += list(texts)
        return self.inner.embed(texts)
