"""The result set of SHOW REPLICA STATUS, and the old names SHOW SLAVE STATUS uses.

Columns follow ``show_slave_status_metadata()`` in MySQL's ``sql/rpl_replica.cc``
(8.0.22+ names). String columns are sent as VAR_STRING with the character length MySQL
declares (``FN_REFLEN`` = 512, ``HOSTNAME_LENGTH + 1`` = 256, ``USERNAME_LENGTH + 1`` = 97,
``NAME_LEN + 1`` = 193); ``L`` columns are LONG (``INT``) and ``LL`` columns LONGLONG
(``BIGINT``). MySQL sizes ``Retrieved_Gtid_Set`` and ``Executed_Gtid_Set`` per statement to
the longest set text; a fixed 65535 stands in for that here.

``SLAVE_STATUS_NAMES`` is MySQL's ``deprecated_field_map`` (``sql/rpl_utility.cc``)
restricted to these columns: SHOW SLAVE STATUS renames each listed column and keeps the
others (``Connect_Retry``, ``Relay_Log_File``, ``Channel_Name``, ...) unchanged.
"""

from __future__ import annotations

from .columns import Column, ValueKind


def _s(name: str, length: int) -> Column:
    return Column(name, f"VARCHAR({length})", False, ValueKind.STRING)


def _l(name: str, *, null: bool = False) -> Column:
    return Column(name, "INT", null, ValueKind.INTEGER)


def _ll(name: str, *, null: bool = False) -> Column:
    return Column(name, "BIGINT", null, ValueKind.INTEGER)


_FN_REFLEN = 512
_HOST = 256
_USER = 97
_GTID_SET = 65535

SHOW_REPLICA_STATUS: tuple[Column, ...] = (
    _s("Replica_IO_State", 14),
    _s("Source_Host", _HOST),
    _s("Source_User", _USER),
    _l("Source_Port"),
    _l("Connect_Retry"),
    _s("Source_Log_File", _FN_REFLEN),
    _ll("Read_Source_Log_Pos"),
    _s("Relay_Log_File", _FN_REFLEN),
    _ll("Relay_Log_Pos"),
    _s("Relay_Source_Log_File", _FN_REFLEN),
    _s("Replica_IO_Running", 3),
    _s("Replica_SQL_Running", 3),
    _s("Replicate_Do_DB", 20),
    _s("Replicate_Ignore_DB", 20),
    _s("Replicate_Do_Table", 20),
    _s("Replicate_Ignore_Table", 23),
    _s("Replicate_Wild_Do_Table", 24),
    _s("Replicate_Wild_Ignore_Table", 28),
    _l("Last_Errno"),
    _s("Last_Error", 20),
    _l("Skip_Counter"),
    _ll("Exec_Source_Log_Pos"),
    _ll("Relay_Log_Space"),
    _s("Until_Condition", 6),
    _s("Until_Log_File", _FN_REFLEN),
    _ll("Until_Log_Pos"),
    _s("Source_SSL_Allowed", 7),
    _s("Source_SSL_CA_File", _FN_REFLEN),
    _s("Source_SSL_CA_Path", _FN_REFLEN),
    _s("Source_SSL_Cert", _FN_REFLEN),
    _s("Source_SSL_Cipher", _FN_REFLEN),
    _s("Source_SSL_Key", _FN_REFLEN),
    _ll("Seconds_Behind_Source", null=True),
    _s("Source_SSL_Verify_Server_Cert", 3),
    _l("Last_IO_Errno"),
    _s("Last_IO_Error", 20),
    _l("Last_SQL_Errno"),
    _s("Last_SQL_Error", 20),
    _s("Replicate_Ignore_Server_Ids", _FN_REFLEN),
    _l("Source_Server_Id"),
    _s("Source_UUID", 36),
    _s("Source_Info_File", 2 * _FN_REFLEN),
    _l("SQL_Delay"),
    _l("SQL_Remaining_Delay", null=True),
    _s("Replica_SQL_Running_State", 20),
    _ll("Source_Retry_Count"),
    _s("Source_Bind", _HOST),
    _s("Last_IO_Error_Timestamp", 20),
    _s("Last_SQL_Error_Timestamp", 20),
    _s("Source_SSL_Crl", _FN_REFLEN),
    _s("Source_SSL_Crlpath", _FN_REFLEN),
    _s("Retrieved_Gtid_Set", _GTID_SET),
    _s("Executed_Gtid_Set", _GTID_SET),
    _l("Auto_Position"),
    _s("Replicate_Rewrite_DB", 24),
    _s("Channel_Name", 64),
    _s("Source_TLS_Version", _FN_REFLEN),
    _s("Source_public_key_path", _FN_REFLEN),
    _l("Get_Source_public_key"),
    _s("Network_Namespace", 193),
)

SLAVE_STATUS_NAMES: dict[str, str] = {
    "Replica_IO_State": "Slave_IO_State",
    "Source_Host": "Master_Host",
    "Source_User": "Master_User",
    "Source_Port": "Master_Port",
    "Source_Log_File": "Master_Log_File",
    "Read_Source_Log_Pos": "Read_Master_Log_Pos",
    "Relay_Source_Log_File": "Relay_Master_Log_File",
    "Replica_IO_Running": "Slave_IO_Running",
    "Replica_SQL_Running": "Slave_SQL_Running",
    "Exec_Source_Log_Pos": "Exec_Master_Log_Pos",
    "Source_SSL_Allowed": "Master_SSL_Allowed",
    "Source_SSL_CA_File": "Master_SSL_CA_File",
    "Source_SSL_CA_Path": "Master_SSL_CA_Path",
    "Source_SSL_Cert": "Master_SSL_Cert",
    "Source_SSL_Cipher": "Master_SSL_Cipher",
    "Source_SSL_Key": "Master_SSL_Key",
    "Seconds_Behind_Source": "Seconds_Behind_Master",
    "Source_SSL_Verify_Server_Cert": "Master_SSL_Verify_Server_Cert",
    "Source_Server_Id": "Master_Server_Id",
    "Source_UUID": "Master_UUID",
    "Source_Info_File": "Master_Info_File",
    "Replica_SQL_Running_State": "Slave_SQL_Running_State",
    "Source_Retry_Count": "Master_Retry_Count",
    "Source_Bind": "Master_Bind",
    "Source_SSL_Crl": "Master_SSL_Crl",
    "Source_SSL_Crlpath": "Master_SSL_Crlpath",
    "Source_TLS_Version": "Master_TLS_Version",
    "Source_public_key_path": "Master_public_key_path",
    "Get_Source_public_key": "Get_master_public_key",
}


def show_slave_status_columns() -> tuple[Column, ...]:
    """SHOW_REPLICA_STATUS with the column names SHOW SLAVE STATUS sends."""
    return tuple(
        Column(SLAVE_STATUS_NAMES.get(c.name, c.name), c.sql_type, c.nullable, c.kind)
        for c in SHOW_REPLICA_STATUS
    )
