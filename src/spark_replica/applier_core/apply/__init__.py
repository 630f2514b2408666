"""What every applier shares: applying a transaction's events to an engine session, the error
texts of a failed transaction, and the serial applier (the reference the parallel appliers
are checked and measured against)."""
