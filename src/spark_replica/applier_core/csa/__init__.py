"""The service layer of the Change Stream Applier (APPLIER_VERSION=2): see docs/csa.md.

Its transactions come from the transaction provider (``applier_core.provider``), which the
legacy applier shares.
"""
