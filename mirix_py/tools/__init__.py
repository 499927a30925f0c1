"""What a memory tool call is made of: the typed write operations managers emit (`ops`), the
parameters and closed sets a model is shown (`params`), and a refused edit's message (`field_errors`)."""
