package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.File;
import java.util.Arrays;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.security.AccessDeniedException;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.security.access.AccessControlClient;
import org.apache.hadoop.hbase.security.access.Permission;
import org.apache.hadoop.hbase.security.token.AuthenticationTokenIdentifier;
import org.apache.hadoop.hbase.security.token.ClientTokenUtil;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.apache.hadoop.security.token.TokenIdentifier;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Token authentication (SASL DIGEST-MD5) through the unmodified client, with {@code
 * hbase.security.authentication=kerberos} on both sides and no Kerberos anywhere: tokens minted by
 * {@code ferrobase token create} as Hadoop token files (scripts/hbase-client-tests.sh with {@code
 * FERROBASE_TOKEN=1}). The suite's own connection authenticates with {@code
 * HADOOP_TOKEN_FILE_LOCATION}; alice with her token file read by Hadoop's {@link Credentials}; the
 * user permissions are checked for is the token's. Expired and forged tokens and SIMPLE clients
 * are refused, naming why. Skipped unless the target requires tokens and enforces permissions
 * ({@code FERROBASE_TOKEN=1 FERROBASE_AUTHZ=1}).
 */
@Order(11)
class TokenAuthTest extends InteropTestBase {
  private static TableName table;
  private static Connection alice;

  private static File tokenFile(String name) {
    return new File(TestTarget.tokenDir(), name + ".token");
  }

  /** A connection as a user holding the tokens of one token file. */
  private static Connection withTokens(String user, Credentials credentials) throws Exception {
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser(user);
    ugi.addCredentials(credentials);
    return ConnectionFactory.createConnection(refusable(), User.create(ugi));
  }

  /**
   * The target's configuration, where a refused connection is retried against the server rather
   * than answered from the client's failed-servers list: the last attempt's exception then carries
   * the server's reason.
   */
  private static Configuration refusable() {
    Configuration conf = TestTarget.get().configuration();
    conf.setInt("hbase.ipc.client.failed.servers.expiry", 0);
    return conf;
  }

  private static Credentials read(String name) throws Exception {
    return Credentials.readTokenStorageFile(tokenFile(name), new Configuration());
  }

  @BeforeAll
  static void setUp() throws Exception {
    Assumptions.assumeTrue(
        TestTarget.tokenDir() != null && TestTarget.authorization(),
        "needs a target requiring tokens and enforcing permissions"
            + " (FERROBASE_TOKEN=1 FERROBASE_AUTHZ=1)");
    table = createTable("token", F);
    alice = withTokens("alice", read("alice"));
  }

  @AfterAll
  static void closeAlice() throws Exception {
    if (alice != null) {
      alice.close();
    }
  }

  /** The call fails and some exception of its chain says {@code text}. */
  private static Throwable assertFailsWith(Executable call, String text) {
    try {
      call.execute();
    } catch (Throwable t) {
      StringBuilder seen = new StringBuilder();
      for (Throwable c = t; c != null; c = c.getCause()) {
        seen.append(c.getClass().getName()).append(": ").append(c.getMessage()).append('\n');
        if (String.valueOf(c.getMessage()).contains(text)) {
          return c;
        }
      }
      fail("expected a failure saying '" + text + "', got:\n" + seen, t);
    }
    fail("expected a failure saying '" + text + "', the call succeeded");
    return null;
  }

  private static void put(Connection c, String row) throws Exception {
    try (Table t = c.getTable(table)) {
      t.put(new Put(b(row)).addColumn(F, b("q"), b(row)));
    }
  }

  private static byte[] get(Connection c, String row) throws Exception {
    try (Table t = c.getTable(table)) {
      return t.get(new Get(b(row))).getValue(F, b("q"));
    }
  }

  @Test
  @Order(1)
  void theTokenUserIsTheCallerPermissionsAreCheckedFor() throws Throwable {
    // The suite's connection authenticated with HADOOP_TOKEN_FILE_LOCATION's token.
    put(conn, "r1");
    Throwable denied = assertFailsWith(() -> get(alice, "r1"), "'alice'");
    assertTrue(
        denied instanceof AccessDeniedException
            || denied.getClass().getName().contains("AccessDenied"),
        denied.toString());
    AccessControlClient.grant(
        conn, table, "alice", null, null, Permission.Action.READ, Permission.Action.WRITE);
    put(alice, "r2");
    assertArrayEquals(b("r2"), get(alice, "r2"));
    assertArrayEquals(b("r1"), get(alice, "r1"));
  }

  @Test
  @Order(2)
  void anAuthenticatedClientObtainsTokensThatAuthenticate() throws Throwable {
    Token<AuthenticationTokenIdentifier> token = ClientTokenUtil.obtainToken(alice);
    assertEquals("HBASE_AUTH_TOKEN", token.getKind().toString());
    assertEquals("alice", token.decodeIdentifier().getUsername());
    Credentials credentials = new Credentials();
    credentials.addToken(token.getService(), token);
    try (Connection again = withTokens("alice", credentials)) {
      assertArrayEquals(b("r1"), get(again, "r1"));
    }
  }

  @Test
  @Order(3)
  void theZooKeeperRegistryFindsTheClusterForTokenClientsToo() throws Throwable {
    UserGroupInformation ugi = UserGroupInformation.createRemoteUser("alice");
    ugi.addCredentials(read("alice"));
    try (Connection c =
        ConnectionFactory.createConnection(
            TestTarget.get().zookeeperConfiguration(), User.create(ugi))) {
      assertArrayEquals(b("r1"), get(c, "r1"));
    }
  }

  @Test
  @Order(4)
  void expiredTokensAreRefused() throws Throwable {
    try (Connection expired = withTokens("alice", read("expired"))) {
      assertFailsWith(() -> get(expired, "r1"), "Token has expired");
    }
  }

  @Test
  @Order(5)
  void forgedTokensAreRefused() throws Throwable {
    Credentials real = read("alice");
    Credentials forged = new Credentials();
    for (Token<? extends TokenIdentifier> t : real.getAllTokens()) {
      byte[] password = Arrays.copyOf(t.getPassword(), t.getPassword().length);
      password[0] ^= 1;
      forged.addToken(
          t.getService(),
          new Token<TokenIdentifier>(t.getIdentifier(), password, t.getKind(), t.getService()));
    }
    try (Connection c = withTokens("alice", forged)) {
      assertFailsWith(() -> get(c, "r1"), "does not match");
    }
  }

  @Test
  @Order(6)
  void simpleClientsAreRefused() throws Throwable {
    Configuration conf = refusable();
    conf.set("hbase.security.authentication", "simple");
    User admin = User.create(UserGroupInformation.createRemoteUser(System.getProperty("user.name")));
    try (Connection c = ConnectionFactory.createConnection(conf, admin)) {
      assertFailsWith(() -> get(c, "r1"), "Authentication is required");
    }
  }
}
