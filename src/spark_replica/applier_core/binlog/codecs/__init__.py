"""Event codecs: one module per family of events, and the registry that dispatches on the
type code (``registry``). A family module knows its own events only; none imports the
registry."""
