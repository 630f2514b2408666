"""Replicated accounts: users, roles and privileges as the source's account statements made
them, kept by the storage engine with its catalog (see ``model``)."""

from __future__ import annotations

from spark_replica.applier_core.storage.accounts.grants_text import show_grants as show_grants
from spark_replica.applier_core.storage.accounts.model import CACHING_SHA2 as CACHING_SHA2
from spark_replica.applier_core.storage.accounts.model import NATIVE as NATIVE
from spark_replica.applier_core.storage.accounts.model import Account as Account
from spark_replica.applier_core.storage.accounts.model import AccountName as AccountName
from spark_replica.applier_core.storage.accounts.model import Accounts as Accounts
from spark_replica.applier_core.storage.accounts.model import GrantLevel as GrantLevel
from spark_replica.applier_core.storage.accounts.model import account_from_json as account_from_json
from spark_replica.applier_core.storage.accounts.model import account_to_json as account_to_json
from spark_replica.applier_core.storage.accounts.model import no_accounts as no_accounts
from spark_replica.applier_core.storage.accounts.operations import (
    AccountOperation as AccountOperation,
)
from spark_replica.applier_core.storage.accounts.operations import apply_account as apply_account
from spark_replica.applier_core.storage.accounts.parser import (
    is_account_statement as is_account_statement,
)
from spark_replica.applier_core.storage.accounts.parser import (
    parse_account_statement as parse_account_statement,
)
from spark_replica.applier_core.storage.accounts.passwords import native_hash as native_hash
from spark_replica.applier_core.storage.accounts.passwords import sha2_matches as sha2_matches
from spark_replica.applier_core.storage.accounts.privileges import Grants as Grants
from spark_replica.applier_core.storage.accounts.privileges import match_account as match_account
from spark_replica.applier_core.storage.accounts.tokens import redacted as redacted

__all__ = [
    "CACHING_SHA2",
    "NATIVE",
    "Account",
    "AccountName",
    "AccountOperation",
    "Accounts",
    "GrantLevel",
    "Grants",
    "account_from_json",
    "account_to_json",
    "apply_account",
    "is_account_statement",
    "match_account",
    "native_hash",
    "no_accounts",
    "parse_account_statement",
    "redacted",
    "sha2_matches",
    "show_grants",
]
