package io.ferrobase.interop;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.apache.hadoop.hbase.TableExistsException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotDisabledException;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.SnapshotDescription;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.snapshot.SnapshotDoesNotExistException;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;

/**
 * Table snapshots through the Java Admin: snapshot, listSnapshots, cloneSnapshot, restoreSnapshot
 * of a disabled table, deleteSnapshot, and the errors of each; a snapshot TTL and the cleanup
 * switch.
 */
@org.junit.jupiter.api.Order(9)
class SnapshotTest extends InteropTestBase {
  private static final byte[] Q = Bytes.toBytes("q");

  /** Every row as "row=value" of f:q, in order. */
  private static List<String> rows(TableName t) throws IOException {
    List<String> out = new ArrayList<>();
    try (Table table = conn.getTable(t);
        ResultScanner rs = table.getScanner(new Scan())) {
      for (Result r : rs) {
        out.add(Bytes.toString(r.getRow()) + "=" + Bytes.toString(r.getValue(F, Q)));
      }
    }
    return out;
  }

  private static List<String> snapshotNames(Pattern p) throws IOException {
    List<SnapshotDescription> all = p == null ? admin.listSnapshots() : admin.listSnapshots(p);
    return all.stream().map(SnapshotDescription::getName).collect(Collectors.toList());
  }

  @Test
  void snapshotCloneRestoreDelete() throws Exception {
    TableName t = createTable("snap_src", new byte[][] {Bytes.toBytes("m")}, F);
    String snap = uniqueName("snap").getNameAsString();
    TableName clone = track(uniqueName("snap_clone"));
    try (Table table = conn.getTable(t)) {
      for (int i = 0; i < 20; i++) {
        table.put(
            new Put(Bytes.toBytes(String.format("%c%02d", 'a' + i, i)))
                .addColumn(F, Q, Bytes.toBytes("v" + i)));
      }
    }
    List<String> atSnapshot = rows(t);
    assertEquals(20, atSnapshot.size());

    admin.snapshot(snap, t);
    try {
      List<SnapshotDescription> listed =
          admin.listSnapshots(Pattern.compile(Pattern.quote(snap)));
      assertEquals(1, listed.size());
      assertEquals(snap, listed.get(0).getName());
      assertEquals(t, listed.get(0).getTableName());
      assertTrue(listed.get(0).getCreationTime() > 0);
      assertTrue(snapshotNames(null).contains(snap));
      assertFalse(snapshotNames(Pattern.compile("no_such_snapshot.*")).contains(snap));

      // Mutate: new values, a deleted row, a flush and a major compaction
      // (which HBase starts and answers at once: it may still run below).
      try (Table table = conn.getTable(t)) {
        table.put(new Put(Bytes.toBytes("a00")).addColumn(F, Q, Bytes.toBytes("changed")));
        table.put(new Put(Bytes.toBytes("zz")).addColumn(F, Q, Bytes.toBytes("new")));
        table.delete(new Delete(Bytes.toBytes("b01")));
      }
      admin.flush(t);
      admin.majorCompact(t);
      assertFalse(rows(t).equals(atSnapshot));

      // A clone reads the snapshot and is independent of its source.
      admin.cloneSnapshot(snap, clone);
      assertTrue(admin.tableExists(clone));
      assertTrue(admin.isTableEnabled(clone));
      assertEquals(atSnapshot, rows(clone));
      try (Table c = conn.getTable(clone)) {
        c.put(new Put(Bytes.toBytes("only-clone")).addColumn(F, Q, Bytes.toBytes("x")));
      }
      try (Table src = conn.getTable(t)) {
        assertTrue(src.get(new Get(Bytes.toBytes("only-clone"))).isEmpty());
      }
      assertThrows(TableExistsException.class, () -> admin.cloneSnapshot(snap, clone));

      // Restore needs the table disabled, and brings back the snapshot's rows.
      assertThrows(TableNotDisabledException.class, () -> admin.restoreSnapshot(snap));
      admin.disableTable(t);
      admin.restoreSnapshot(snap);
      admin.enableTable(t);
      assertEquals(atSnapshot, rows(t));
      try (Table table = conn.getTable(t)) {
        assertArrayEquals(
            Bytes.toBytes("v0"), table.get(new Get(Bytes.toBytes("a00"))).getValue(F, Q));
      }
    } finally {
      admin.deleteSnapshot(snap);
    }
    assertFalse(snapshotNames(null).contains(snap));
    assertThrows(SnapshotDoesNotExistException.class, () -> admin.deleteSnapshot(snap));
    // The clone does not need the snapshot.
    assertEquals(atSnapshot.size() + 1, rows(clone).size());
  }

  @Test
  void anExpiredSnapshotIsNotClonedAndTheCleanupSwitchAnswers() throws Exception {
    TableName t = createTable("snap_ttl", F);
    try (Table table = conn.getTable(t)) {
      table.put(new Put(Bytes.toBytes("r")).addColumn(F, Q, Bytes.toBytes("v")));
    }
    String snap = uniqueName("snap_ttl").getNameAsString();
    admin.snapshot(
        new SnapshotDescription(
            snap, t, org.apache.hadoop.hbase.client.SnapshotType.FLUSH, java.util.Map.of("TTL", 1L)));
    SnapshotDescription listed =
        admin.listSnapshots(Pattern.compile(Pattern.quote(snap))).get(0);
    assertEquals(1L, listed.getTtl());
    Thread.sleep(2_000);
    TableName clone = uniqueName("snap_ttl_clone");
    assertThrows(
        org.apache.hadoop.hbase.snapshot.SnapshotTTLExpiredException.class,
        () -> admin.cloneSnapshot(snap, clone));
    assertFalse(admin.tableExists(clone));
    // The switch answers its previous state, and is put back as it was.
    boolean was = admin.snapshotCleanupSwitch(false, true);
    assertFalse(admin.isSnapshotCleanupEnabled());
    assertFalse(admin.snapshotCleanupSwitch(was, true));
    assertEquals(was, admin.isSnapshotCleanupEnabled());
    admin.deleteSnapshot(snap);
  }

  @Test
  void snapshotOfAnUnknownTableFails() {
    TableName missing = uniqueName("snap_missing");
    String snap = uniqueName("snap_none").getNameAsString();
    IOException e = assertThrows(IOException.class, () -> admin.snapshot(snap, missing));
    assertTrue(
        String.valueOf(e.getMessage()).contains(missing.getNameAsString()), e.toString());
  }
}
