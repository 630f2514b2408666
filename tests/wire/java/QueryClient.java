import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.Statement;

/** Runs one query through MariaDB Connector/J: prints the column types, then the rows. */
public class QueryClient {
    public static void main(String[] args) throws Exception {
        String url = "jdbc:mariadb://127.0.0.1:" + args[0] + "/?user=root&password=" + args[1];
        try (Connection connection = DriverManager.getConnection(url);
             Statement statement = connection.createStatement();
             ResultSet rows = statement.executeQuery(args[2])) {
            ResultSetMetaData meta = rows.getMetaData();
            StringBuilder header = new StringBuilder("types");
            for (int i = 1; i <= meta.getColumnCount(); i++) {
                header.append(' ').append(meta.getColumnName(i)).append(':')
                      .append(meta.getColumnTypeName(i));
            }
            System.out.println(header);
            while (rows.next()) {
                StringBuilder line = new StringBuilder("row");
                for (int i = 1; i <= meta.getColumnCount(); i++) {
                    line.append(' ').append(rows.getString(i));
                }
                System.out.println(line);
            }
        }
    }
}
