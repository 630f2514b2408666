import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.SQLWarning;
import java.sql.Statement;

/**
 * Drives the replica through MariaDB Connector/J and prints one line per observation.
 *
 * <p>Usage: {@code java -cp <classes>:mariadb-java-client.jar ReplicaClient <port>}
 */
public final class ReplicaClient {
    private static final String CONFIGURATION =
            "SELECT CHANNEL_NAME, APPLIER_VERSION, APPLIER_WORKER_COUNT"
                    + " FROM performance_schema.replication_applier_configuration"
                    + " WHERE CHANNEL_NAME='j1'";

    private ReplicaClient() {}

    public static void main(String[] args) throws SQLException {
        String url = "jdbc:mariadb://127.0.0.1:" + args[0] + "/";
        try (Connection conn = DriverManager.getConnection(url, "root", "root-secret");
                Statement stmt = conn.createStatement()) {
            DatabaseMetaData meta = conn.getMetaData();
            System.out.println(meta.getDatabaseProductName() + " "
                    + meta.getDatabaseProductVersion());
            System.out.println("major.minor " + meta.getDatabaseMajorVersion() + "."
                    + meta.getDatabaseMinorVersion());

            boolean results = stmt.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='jhost',"
                    + " SOURCE_AUTO_POSITION=1, REQUIRE_ROW_FORMAT=1, GTID_ONLY=1,"
                    + " APPLIER_VERSION=2 FOR CHANNEL 'j1'");
            System.out.println("crst " + results + " " + stmt.getUpdateCount());

            try (ResultSet rs = stmt.executeQuery(CONFIGURATION)) {
                ResultSetMetaData columns = rs.getMetaData();
                StringBuilder labels = new StringBuilder("columns");
                for (int i = 1; i <= columns.getColumnCount(); i++) {
                    labels.append(' ').append(columns.getColumnLabel(i));
                }
                System.out.println(labels);
                while (rs.next()) {
                    System.out.println(rs.getString("CHANNEL_NAME") + " "
                            + rs.getInt("APPLIER_VERSION") + " "
                            + rs.getInt("APPLIER_WORKER_COUNT"));
                }
            }

            try (PreparedStatement ps = conn.prepareStatement("SELECT Channel_name,"
                    + " Applier_version FROM mysql.slave_relay_log_info WHERE Channel_name = ?")) {
                ps.setString(1, "j1");
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        System.out.println("prepared " + rs.getString(1) + " " + rs.getInt(2));
                    }
                }
            }

            try (ResultSet rs = stmt.executeQuery("SHOW REPLICA STATUS FOR CHANNEL 'j1'")) {
                while (rs.next()) {
                    System.out.println("status " + rs.getString("Source_Host") + " "
                            + rs.getString("Replica_SQL_Running") + " "
                            + rs.getInt("Auto_Position") + " "
                            + rs.getMetaData().getColumnCount());
                }
            }

            try {
                stmt.execute("STOP REPLICA FOR CHANNEL 'nope'");
                System.out.println("no error");
            } catch (SQLException e) {
                System.out.println(e.getErrorCode() + " " + e.getSQLState());
                System.out.println("message " + e.getMessage());
            }

            try {
                stmt.execute("CHANGE REPLICATION SOURCE TO APPLIER_VERSION=3 FOR CHANNEL 'j1'");
                System.out.println("no error");
            } catch (SQLException e) {
                System.out.println(e.getErrorCode() + " " + e.getSQLState());
            }

            try {
                stmt.execute("SELEC 1");
                System.out.println("no error");
            } catch (SQLException e) {
                System.out.println(e.getClass().getSimpleName() + " " + e.getErrorCode() + " "
                        + e.getSQLState());
            }

            stmt.execute("CHANGE MASTER TO MASTER_HOST='jhost' FOR CHANNEL 'j1'");
            for (SQLWarning w = stmt.getWarnings(); w != null; w = w.getNextWarning()) {
                System.out.println("warning " + w.getErrorCode() + " " + w.getMessage());
            }
        }

        // Server-side prepared statements (COM_STMT_PREPARE / COM_STMT_EXECUTE).
        try (Connection conn = DriverManager.getConnection(
                        url + "?useServerPrepStmts=true", "root", "root-secret");
                PreparedStatement ps = conn.prepareStatement("SELECT CHANNEL_NAME,"
                        + " APPLIER_VERSION FROM performance_schema.replication_applier_configuration"
                        + " WHERE CHANNEL_NAME = ?")) {
            for (String channel : new String[] {"j1", "nope"}) {
                ps.setString(1, channel);
                int rows = 0;
                try (ResultSet rs = ps.executeQuery()) {
                    while (rs.next()) {
                        rows++;
                        System.out.println("server-prepared " + rs.getString(1) + " "
                                + rs.getInt(2));
                    }
                }
                System.out.println("server-prepared rows " + rows);
            }
        }
    }
}
