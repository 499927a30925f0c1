"""Everything about secrets, in one place below the store and the flows.

- `detection`: the rules that find secrets in free text (`find_secrets`) and check a value's shape
  (`value_fits`);
- `guard`: the last line before a memory is written (`SecretGuard`): secrets become vault entries
  and placeholders;
- `redaction`: placeholders in every text that leaves through a side door (errors, logs);
- `masking`: which lines of a screen's OCR text hold a secret, so ingest can paint them out;
- `doctor`: the findings and the file scan of `mirix doctor --secrets` (the store's own rows are
  scanned and repaired by `store.secret_scan`).

The package imports nothing of mirix_py but `records`: the store, the flows and the engine import it.
"""
