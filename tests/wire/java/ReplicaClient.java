import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * Drives the replica through MariaDB Connector/J and prints one line per check.
 *
 * <p>Usage: {@code java -cp .:mariadb-java-client.jar ReplicaClient <port>}
 */
public final class ReplicaClient {
    private ReplicaClient() {}

    public static void main(String[] args) throws SQLException {
        String url = "jdbc:mariadb://127.0.0.1:" + args[0] + "/";
        try (Connection conn = DriverManager.getConnection(url, "root", "root-secret");
                Statement stmt = conn.createStatement()) {
            DatabaseMetaData meta = conn.getMetaData();
            System.out.println("product " + meta.getDatabaseProductName() + " "
                    + meta.getDatabaseProductVersion());
            System.out.println("version " + meta.getDatabaseMajorVersion() + "."
                    + meta.getDatabaseMinorVersion());

            stmt.execute("CHANGE REPLICATION SOURCE TO SOURCE_HOST='jhost', SOURCE_AUTO_POSITION=1,"
                    + " REQUIRE_ROW_FORMAT=1, GTID_ONLY=1, APPLIER_VERSION=2 FOR CHANNEL 'j1'");
            System.out.println("crst update count " + stmt.getUpdateCount());

            try (ResultSet rs = stmt.executeQuery("SELECT CHANNEL_NAME, APPLIER_VERSION,"
                    + " APPLIER_WORKER_COUNT FROM performance_schema.replication_applier_configuration"
                    + " WHERE CHANNEL_NAME='j1'")) {
                System.out.println("columns " + rs.getMetaData().getColumnLabel(1) + " "
                        + rs.getMetaData().getColumnLabel(2) + " "
                        + rs.getMetaData().getColumnLabel(3));
                while (rs.next()) {
                    System.out.println("row " + rs.getString(1) + " " + rs.getInt(2) + " "
                            + rs.getInt(3));
                }
            }

            try (PreparedStatement ps = conn.prepareStatement("SELECT Channel_name, Applier_version"
                    + " FROM mysql.slave_relay_log_info WHERE Channel_name = ?")) {
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
                            + rs.getMetaData().getColumnCount());
                }
            }

            try {
                stmt.execute("STOP REPLICA FOR CHANNEL 'nope'");
                System.out.println("error none");
            } catch (SQLException e) {
                System.out.println("error " + e.getErrorCode() + " " + e.getSQLState());
            }

            try {
                stmt.execute("CHANGE REPLICATION SOURCE TO APPLIER_VERSION=3 FOR CHANNEL 'j1'");
                System.out.println("error none");
            } catch (SQLException e) {
                System.out.println("error " + e.getErrorCode() + " " + e.getSQLState());
            }
        }
    }
}
