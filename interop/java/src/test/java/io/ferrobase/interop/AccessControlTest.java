package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.util.List;
import java.util.stream.Collectors;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.security.AccessDeniedException;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.security.access.AccessControlClient;
import org.apache.hadoop.hbase.security.access.Permission;
import org.apache.hadoop.hbase.security.access.UserPermission;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * HBase's AccessController model through the unmodified client: with {@code
 * hbase.security.authorization} on (scripts/hbase-client-tests.sh with {@code FERROBASE_AUTHZ=1}),
 * users alice and bob (simple authentication: the name in the connection header) are denied with
 * {@link AccessDeniedException} until {@link AccessControlClient#grant} lets them in, and again
 * after {@link AccessControlClient#revoke}. The suite's own user started the server, so it is a
 * superuser, as in HBase. Skipped when the target does not report AUTHORIZATION.
 */
@Order(10)
class AccessControlTest extends InteropTestBase {
  private static TableName table;
  private static Connection alice;
  private static Connection bob;

  private static Connection as(String user) throws Exception {
    User u = User.create(UserGroupInformation.createRemoteUser(user));
    return ConnectionFactory.createConnection(TestTarget.get().configuration(), u);
  }

  @BeforeAll
  static void setUp() throws Exception {
    Assumptions.assumeTrue(
        AccessControlClient.isAuthorizationEnabled(conn),
        "authorization is off on the target (FERROBASE_AUTHZ=1 turns it on)");
    table = createTable("acl", F, G);
    try (Table t = conn.getTable(table)) {
      t.put(new Put(b("r1")).addColumn(F, b("a"), b("1")).addColumn(G, b("b"), b("2")));
    }
    alice = as("alice");
    bob = as("bob");
  }

  @AfterAll
  static void closeUsers() throws Exception {
    for (Connection c : new Connection[] {alice, bob}) {
      if (c != null) {
        c.close();
      }
    }
  }

  /** The call fails with HBase's AccessDeniedException (possibly as the cause). */
  private static void assertDenied(Executable call, String user) {
    try {
      call.execute();
    } catch (Throwable t) {
      for (Throwable c = t; c != null; c = c.getCause()) {
        if (c instanceof AccessDeniedException) {
          assertTrue(c.getMessage().contains("'" + user + "'"), c.getMessage());
          return;
        }
      }
      fail("expected AccessDeniedException for " + user + ", got " + t, t);
    }
    fail("expected AccessDeniedException for " + user + ", the call succeeded");
  }

  private static Result get(Connection c, Get g) throws Exception {
    try (Table t = c.getTable(table)) {
      return t.get(g);
    }
  }

  private static void put(Connection c, String row) throws Exception {
    try (Table t = c.getTable(table)) {
      t.put(new Put(b(row)).addColumn(F, b("a"), b(row)));
    }
  }

  @Test
  @Order(1)
  void deniedUntilGrantedThenRevoked() throws Throwable {
    assertDenied(() -> get(alice, new Get(b("r1"))), "alice");
    assertDenied(() -> put(alice, "r2"), "alice");

    AccessControlClient.grant(
        conn, table, "alice", null, null, Permission.Action.READ, Permission.Action.WRITE);
    put(alice, "r2");
    assertArrayEquals(b("r2"), get(alice, new Get(b("r2"))).getValue(F, b("a")));
    assertEquals(2, get(alice, new Get(b("r1"))).size());
    // WRITE and READ are not CREATE or ADMIN.
    try (Admin a = alice.getAdmin()) {
      assertDenied(() -> a.disableTable(table), "alice");
      assertDenied(() -> a.flush(table), "alice");
    }
    assertDenied(() -> get(bob, new Get(b("r1"))), "bob");

    List<UserPermission> perms =
        AccessControlClient.getUserPermissions(conn, table.getNameAsString());
    List<String> alices =
        perms.stream()
            .filter(p -> p.getUser().equals("alice"))
            .map(p -> new Permission(p.getPermission().getActions()).toString())
            .collect(Collectors.toList());
    // As the HBase shell's user_permission prints it.
    assertEquals(List.of("[Permission: actions=READ,WRITE]"), alices);

    AccessControlClient.revoke(conn, table, "alice", null, null);
    assertDenied(() -> get(alice, new Get(b("r1"))), "alice");
  }

  @Test
  @Order(2)
  void familyGrantFiltersAndUsersCannotGrantThemselves() throws Throwable {
    AccessControlClient.grant(conn, table, "bob", F, null, Permission.Action.READ);
    Result r = get(bob, new Get(b("r1")).addFamily(F).addFamily(G));
    assertArrayEquals(b("1"), r.getValue(F, b("a")));
    assertFalse(r.containsColumn(G, b("b")), "family g is filtered out");
    assertDenied(() -> put(bob, "r3"), "bob");
    assertDenied(
        () -> AccessControlClient.grant(bob, table, "bob", null, null, Permission.Action.ADMIN),
        "bob");
    assertTrue(
        AccessControlClient.hasPermission(bob, table.getNameAsString(), F, null, "bob",
            Permission.Action.READ));
  }
}
