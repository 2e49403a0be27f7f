package io.ferrobase.interop;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Shared plumbing of the interop tests: one connection and one {@link Admin} per test class,
 * table names unique to the run, and the tables a class created dropped when it ends.
 */
public abstract class InteropTestBase {
  private static final AtomicInteger SEQUENCE = new AtomicInteger();
  /** Distinguishes this JVM's tables from leftovers of another run against the same peer. */
  private static final String RUN = Long.toString(System.currentTimeMillis() % 1_000_000_000L, 36);

  protected static final byte[] F = Bytes.toBytes("f");
  protected static final byte[] G = Bytes.toBytes("g");

  protected static Connection conn;
  protected static Admin admin;
  private static final List<TableName> created = new ArrayList<>();

  @BeforeAll
  static void openConnection() throws IOException {
    conn = TestTarget.get().connect();
    admin = conn.getAdmin();
  }

  @AfterAll
  static void dropTablesAndClose() throws IOException {
    try {
      for (TableName t : created) {
        try {
          if (admin.tableExists(t)) {
            if (admin.isTableEnabled(t)) {
              admin.disableTable(t);
            }
            admin.deleteTable(t);
          }
        } catch (IOException e) {
          System.err.println("could not drop " + t + ": " + e);
        }
      }
      created.clear();
    } finally {
      if (admin != null) {
        admin.close();
      }
      if (conn != null) {
        conn.close();
      }
    }
  }

  /** A table name not used before in this run, e.g. {@code it_ab12_scan_7}. */
  protected static TableName uniqueName(String hint) {
    return TableName.valueOf(
        "it_" + RUN + "_" + hint.toLowerCase(Locale.ROOT) + "_" + SEQUENCE.incrementAndGet());
  }

  /** Records a table this class created so that it is dropped when the class ends. */
  protected static TableName track(TableName t) {
    created.add(t);
    return t;
  }

  /** A descriptor of table {@code t} with the given families, all with default attributes. */
  protected static TableDescriptor descriptor(TableName t, byte[]... families) {
    TableDescriptorBuilder b = TableDescriptorBuilder.newBuilder(t);
    for (byte[] f : families) {
      b.setColumnFamily(ColumnFamilyDescriptorBuilder.of(f));
    }
    return b.build();
  }

  /** Creates a table with the given families (default attributes) and optional split keys. */
  protected static TableName createTable(String hint, byte[][] splits, byte[]... families)
      throws IOException {
    TableName t = track(uniqueName(hint));
    if (splits == null) {
      admin.createTable(descriptor(t, families));
    } else {
      admin.createTable(descriptor(t, families), splits);
    }
    return t;
  }

  /** Creates a one-region table with the given families. */
  protected static TableName createTable(String hint, byte[]... families) throws IOException {
    return createTable(hint, null, families);
  }

  /** Number of rows a full scan of the table returns. */
  protected static long countRows(Table table) throws IOException {
    Scan scan = new Scan().setFilter(new FirstKeyOnlyFilter()).setCaching(1000);
    long n = 0;
    try (ResultScanner rs = table.getScanner(scan)) {
      for (Result r : rs) {
        if (!r.isEmpty()) {
          n++;
        }
      }
    }
    return n;
  }

  protected static byte[] b(String s) {
    return Bytes.toBytes(s);
  }

  protected static String s(byte[] bytes) {
    return bytes == null ? null : Bytes.toString(bytes);
  }
}
