// Rewrites a stopped DynamoDB Local's SQLite database so that what was deleted from its tables is
// gone from disk too: the write-ahead log is folded into the file and emptied, VACUUM rebuilds the
// file from its live rows only, and secure_delete zeroes what is freed on the way. It runs on
// DynamoDB Local's own SQLite (sqlite4java, in DynamoDBLocal_lib), the engine that wrote the file.
// Run in source-file mode: java -Djava.library.path=<lib> -cp <lib>/sqlite4java.jar Compact.java <db>
import com.almworks.sqlite4java.SQLite;
import com.almworks.sqlite4java.SQLiteConnection;
import java.io.File;
import java.util.logging.Level;
import java.util.logging.Logger;

public class Compact {
  public static void main(String[] args) throws Exception {
    // sqlite4java logs every open at INFO on stderr: the caller reads stderr for failures only.
    Logger.getLogger("com.almworks.sqlite4java").setLevel(Level.WARNING);
    SQLite.loadLibrary();
    SQLiteConnection db = new SQLiteConnection(new File(args[0]));
    db.open(false);
    try {
      db.exec("PRAGMA secure_delete = ON");
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
      db.exec("VACUUM");
      db.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    } finally {
      db.dispose();
    }
  }
}
