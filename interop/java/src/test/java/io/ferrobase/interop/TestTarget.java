package io.ferrobase.interop;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;

/**
 * The server every interop test talks to, shared by all test classes of one JVM.
 *
 * <p>By default ({@code HBASE_TARGET} unset or {@code ferrobase}) it starts a real {@code ferrobase
 * standalone} on a fresh data directory and a free port, waits for its "listening on" banner and
 * stops it (SIGTERM) when the JVM exits. The binary is {@code $FERROBASE_BIN}, else {@code
 * target/release/ferrobase}, else {@code target/debug/ferrobase} (under {@code $CARGO_TARGET_DIR}
 * when set, else the repository's {@code target/}).
 *
 * <p>With {@code HBASE_TARGET=peer} nothing is started: the tests talk to an already running
 * server at {@code $HBASE_BOOTSTRAP} (default {@code 127.0.0.1:16020}), normally the real Apache
 * HBase of {@code scripts/hbase-peer.sh}, which shows that the tests assert HBase's own behaviour.
 *
 * <p>Either way the client finds the cluster through the RPC connection registry, with few retries
 * and short timeouts so that a missing feature fails in seconds, not minutes; {@link
 * #zookeeperConfiguration} finds it through ferrobase's ZooKeeper registry endpoint instead.
 */
public final class TestTarget {
  private static final Pattern BANNER =
      Pattern.compile("ferrobase standalone listening on (\\S+):(\\d+)");
  private static final Pattern ZK_BANNER =
      Pattern.compile("ZooKeeper registry \\(hbase.zookeeper.quorum\\): (\\S+):(\\d+)");
  private static final Duration START_TIMEOUT = Duration.ofSeconds(60);

  private static TestTarget instance;

  private final String bootstrap;
  private final String zookeeper;
  private final String description;
  private final Process process;
  private final Path dataDir;

  private TestTarget(
      String bootstrap, String zookeeper, String description, Process process, Path dataDir) {
    this.bootstrap = bootstrap;
    this.zookeeper = zookeeper;
    this.description = description;
    this.process = process;
    this.dataDir = dataDir;
  }

  /** The shared target, started on first use. */
  public static synchronized TestTarget get() {
    if (instance == null) {
      try {
        instance = start();
      } catch (IOException | InterruptedException e) {
        throw new IllegalStateException("cannot start the test target: " + e.getMessage(), e);
      }
      Runtime.getRuntime().addShutdownHook(new Thread(instance::stop, "stop-test-target"));
      if (tokenDir() != null) {
        // HBase 2.6's client keeps one SASL provider selector per JVM, configured by the first
        // connection. With RpcConnectionRegistry that is the cluster-id fetch, which runs with
        // authentication forced to simple, and the selector then never picks DIGEST. Configure
        // it with the secure settings first (the ZooKeeper registry needs no such step).
        org.apache.hadoop.hbase.security.provider.SaslClientAuthenticationProviders.getInstance(
            instance.configuration());
      }
      System.err.println("interop tests against " + instance.description);
    }
    return instance;
  }

  /**
   * True when the tests run against an already running server (a real Apache HBase, or a
   * distributed ferrobase cluster) rather than a ferrobase standalone they start.
   */
  public static boolean isPeer() {
    return "peer".equalsIgnoreCase(System.getenv().getOrDefault("HBASE_TARGET", "ferrobase"));
  }

  /** How many region servers the target has: {@code HBASE_SERVERS}, 1 unless set. */
  public static int expectedServers() {
    return Integer.parseInt(System.getenv().getOrDefault("HBASE_SERVERS", "1"));
  }

  /**
   * The directory of test certificates ({@code FERROBASE_TLS_DIR}: ca.pem, server.pem,
   * client.pem, made by scripts/hbase-client-tests.sh with {@code FERROBASE_TLS=1}); when set,
   * the server is TLS-only and the client connects with HBase's own TLS settings.
   */
  public static String tlsDir() {
    String dir = System.getenv("FERROBASE_TLS_DIR");
    return dir == null || dir.isEmpty() ? null : dir;
  }

  /**
   * True with {@code FERROBASE_AUTHZ=1}: the server enforces permissions ({@code
   * hbase.security.authorization}); the suite's user is its superuser, other users start with no
   * permission (AccessControlTest).
   */
  public static boolean authorization() {
    return !System.getenv().getOrDefault("FERROBASE_AUTHZ", "").isEmpty();
  }

  /**
   * The directory of token files ({@code FERROBASE_TOKEN_DIR}, made by
   * scripts/hbase-client-tests.sh with {@code FERROBASE_TOKEN=1}): the server then requires
   * authentication ({@code hbase.security.authentication=kerberos}: tokens over SASL DIGEST-MD5),
   * on the data directory the tokens were minted for ({@code FERROBASE_DATA_DIR}), and every
   * client authenticates with the token in {@code HADOOP_TOKEN_FILE_LOCATION}.
   */
  public static String tokenDir() {
    String dir = System.getenv("FERROBASE_TOKEN_DIR");
    return dir == null || dir.isEmpty() ? null : dir;
  }

  /** {@code host:port} the client bootstraps from. */
  public String bootstrap() {
    return bootstrap;
  }

  /**
   * {@code host:port} of the target's ZooKeeper registry endpoint ({@code --zookeeper-port}), or
   * null when it has none (a peer given without {@code HBASE_ZOOKEEPER}).
   */
  public String zookeeper() {
    return zookeeper;
  }

  /** A client configuration for this target (RPC connection registry, quick failures). */
  public Configuration configuration() {
    Configuration conf = baseConfiguration();
    conf.set(
        "hbase.client.registry.impl", "org.apache.hadoop.hbase.client.RpcConnectionRegistry");
    conf.set("hbase.client.bootstrap.servers", bootstrap);
    return conf;
  }

  /**
   * A client configuration that finds the cluster the way HBase 2.x does by default: through
   * ZooKeeper ({@code hbase.zookeeper.quorum}), with no registry class named.
   */
  public Configuration zookeeperConfiguration() {
    Configuration conf = baseConfiguration();
    int colon = zookeeper.lastIndexOf(':');
    conf.set("hbase.zookeeper.quorum", zookeeper.substring(0, colon));
    conf.set("hbase.zookeeper.property.clientPort", zookeeper.substring(colon + 1));
    return conf;
  }

  private Configuration baseConfiguration() {
    Configuration conf = HBaseConfiguration.create();
    // Fail fast: a missing server feature should be a test failure in seconds.
    conf.setInt("hbase.client.retries.number", 3);
    conf.setLong("hbase.client.pause", 100);
    conf.setInt("hbase.rpc.timeout", 10_000);
    conf.setInt("hbase.rpc.read.timeout", 10_000);
    conf.setInt("hbase.rpc.write.timeout", 10_000);
    conf.setInt("hbase.client.operation.timeout", 30_000);
    conf.setInt("hbase.client.meta.operation.timeout", 30_000);
    conf.setInt("hbase.client.scanner.timeout.period", 30_000);
    conf.setInt("hbase.client.sync.wait.timeout.msec", 60_000);
    conf.setInt("hbase.client.start.log.errors.counter", 1);
    if (tokenDir() != null) {
      // HBase's client picks DIGEST when security is on and its user holds a token for the
      // cluster (HADOOP_TOKEN_FILE_LOCATION fills the login user's).
      conf.set("hbase.security.authentication", "kerberos");
    }
    String tls = tlsDir();
    if (tls != null) {
      // HBase 2.6's own TLS client: PEM trust store and key store.
      conf.setBoolean("hbase.client.netty.tls.enabled", true);
      conf.set("hbase.rpc.tls.truststore.location", tls + "/ca.pem");
      conf.set("hbase.rpc.tls.truststore.type", "PEM");
      conf.set("hbase.rpc.tls.keystore.location", tls + "/client.pem");
      conf.set("hbase.rpc.tls.keystore.type", "PEM");
    }
    return conf;
  }

  /** A new connection; the caller closes it. */
  public Connection connect() throws IOException {
    return ConnectionFactory.createConnection(configuration());
  }

  private static TestTarget start() throws IOException, InterruptedException {
    if (isPeer()) {
      String bootstrap = System.getenv().getOrDefault("HBASE_BOOTSTRAP", "127.0.0.1:16020");
      String zk = System.getenv("HBASE_ZOOKEEPER");
      return new TestTarget(
          bootstrap, zk == null || zk.isEmpty() ? null : zk, "a running HBase at " + bootstrap,
          null, null);
    }
    Path binary = findBinary();
    String givenDir = System.getenv("FERROBASE_DATA_DIR");
    Path dataDir =
        givenDir == null || givenDir.isEmpty()
            ? Files.createTempDirectory("ferrobase-interop-")
            : Paths.get(givenDir);
    Path log = dataDir.resolveSibling(dataDir.getFileName() + ".log");
    int port = freePort();
    List<String> command = new ArrayList<>();
    command.add(binary.toString());
    command.add("standalone");
    command.add("--data-dir");
    command.add(dataDir.toString());
    command.add("--port");
    command.add(Integer.toString(port));
    command.add("--zookeeper-port");
    command.add(Integer.toString(freePort()));
    String tls = tlsDir();
    if (tls != null) {
      // TLS only, client certificates required: every test goes over TLS.
      for (String set :
          new String[] {
            "hbase.server.netty.tls.enabled=true",
            "hbase.server.netty.tls.supportplaintext=false",
            "hbase.server.netty.tls.client.auth.mode=NEED",
            "hbase.rpc.tls.keystore.location=" + tls + "/server.pem",
            "hbase.rpc.tls.truststore.location=" + tls + "/ca.pem",
            "hbase.client.netty.tls.enabled=true"
          }) {
        command.add("--set");
        command.add(set);
      }
    }
    if (tokenDir() != null) {
      command.add("--set");
      command.add("hbase.security.authentication=kerberos");
    }
    if (authorization()) {
      // HBase's AccessController on: this JVM's user started the server, so it is a superuser.
      command.add("--set");
      command.add("hbase.security.authorization=true");
    }
    ProcessBuilder pb = new ProcessBuilder(command);
    pb.redirectErrorStream(true);
    pb.redirectOutput(log.toFile());
    Process process = pb.start();
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (System.nanoTime() < deadline) {
      String out = Files.readString(log, StandardCharsets.UTF_8);
      Matcher m = BANNER.matcher(out);
      Matcher zk = ZK_BANNER.matcher(out);
      if (m.find() && zk.find()) {
        String bootstrap = m.group(1) + ":" + m.group(2);
        return new TestTarget(
            bootstrap,
            zk.group(1) + ":" + zk.group(2),
            "ferrobase " + binary + " at " + bootstrap + " (log " + log + ")",
            process,
            dataDir);
      }
      if (!process.isAlive()) {
        throw new IOException(
            "ferrobase exited with " + process.exitValue() + " before listening:\n" + out);
      }
      Thread.sleep(50);
    }
    process.destroyForcibly();
    throw new IOException("ferrobase did not print its banner within " + START_TIMEOUT);
  }

  private void stop() {
    if (process == null) {
      return;
    }
    process.destroy(); // SIGTERM: ferrobase shuts down cleanly
    try {
      if (!process.waitFor(30, TimeUnit.SECONDS)) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      process.destroyForcibly();
      Thread.currentThread().interrupt();
    }
    deleteTree(dataDir);
  }

  private static Path findBinary() throws IOException {
    String explicit = System.getenv("FERROBASE_BIN");
    if (explicit != null && !explicit.isEmpty()) {
      Path p = Paths.get(explicit);
      if (!Files.isExecutable(p)) {
        throw new IOException("FERROBASE_BIN=" + explicit + " is not an executable file");
      }
      return p;
    }
    String interopDir = System.getenv().getOrDefault("FERROBASE_INTEROP_DIR", ".");
    Path repo = Paths.get(interopDir).toAbsolutePath().getParent().getParent();
    String cargoTarget = System.getenv("CARGO_TARGET_DIR");
    Path target =
        cargoTarget != null && !cargoTarget.isEmpty()
            ? Paths.get(cargoTarget)
            : repo.resolve("target");
    for (String profile : new String[] {"release", "debug"}) {
      Path p = target.resolve(profile).resolve("ferrobase");
      if (Files.isExecutable(p)) {
        return p;
      }
    }
    throw new IOException(
        "no ferrobase binary: set FERROBASE_BIN or build one (cargo build --release -p ferrobase);"
            + " looked in "
            + target);
  }

  private static int freePort() throws IOException {
    try (ServerSocket s = new ServerSocket(0)) {
      s.setReuseAddress(true);
      return s.getLocalPort();
    }
  }

  private static void deleteTree(Path root) {
    if (root == null || !Files.exists(root)) {
      return;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      walk.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      System.err.println("could not delete " + root + ": " + e.getMessage());
    }
  }
}
