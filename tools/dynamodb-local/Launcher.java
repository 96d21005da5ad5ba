// DynamoDB Local has no bind-address option and listens on all interfaces; an emulator that accepts
// any request must not be reachable from the network. This launcher builds the server as
// ServerRunner.main does (minus its telemetry setup) and binds every Jetty connector to 127.0.0.1
// before starting. Run in source-file mode: java -cp DynamoDBLocal.jar Launcher.java <args>.
// With -Dlauncher.exitWithParent=true it exits when stdin closes, so a parent that dies without
// cleaning up (SIGKILL, crash) never leaves the JVM behind.
import java.lang.reflect.Field;
import org.eclipse.jetty.server.AbstractNetworkConnector;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.server.Server;
import software.amazon.dynamodb.services.local.main.ServerRunner;
import software.amazon.dynamodb.services.local.server.DynamoDBProxyServer;

public class Launcher {
  public static void main(String[] args) throws Exception {
    if (Boolean.getBoolean("launcher.exitWithParent")) {
      Thread watchdog = new Thread(() -> {
        try {
          System.in.transferTo(java.io.OutputStream.nullOutputStream());
        } catch (java.io.IOException ignored) {
        }
        System.exit(0);
      });
      watchdog.setDaemon(true);
      watchdog.start();
    }
    DynamoDBProxyServer proxy = ServerRunner.createServerFromCommandLineArgs(args);
    Field field = DynamoDBProxyServer.class.getDeclaredField("server");
    field.setAccessible(true);
    Server server = (Server) field.get(proxy);
    for (Connector connector : server.getConnectors()) {
      ((AbstractNetworkConnector) connector).setHost("127.0.0.1");
    }
    proxy.start();
  }
}
