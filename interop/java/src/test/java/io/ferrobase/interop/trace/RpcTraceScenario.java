package io.ferrobase.interop.trace;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import io.ferrobase.interop.TestTarget;

/**
 * The first calls of an ordinary HBase application, one phase at a time, for a wire capture
 * (scripts/hbase-wire-trace.sh): connect through the RPC registry, locate meta, create a table,
 * locate its region (a meta scan), put, get, scan, a multi-row put (Multi, cell blocks), a
 * scan one row per call (open, next, close), a delete, a get of a missing family (an exception
 * response), drop the table. Each phase's start time goes to
 * {@code OUT_DIR/phases.tsv} so that the decoder can label the captured frames.
 *
 * <p>Usage: {@code RpcTraceScenario OUT_DIR} with {@code HBASE_TARGET=peer} and {@code
 * HBASE_BOOTSTRAP} as for the tests.
 */
public final class RpcTraceScenario {
  private static final List<String> phases = new ArrayList<>();

  private RpcTraceScenario() {}

  private static void phase(String name) throws InterruptedException {
    // A quiet gap between phases keeps their frames apart in time.
    Thread.sleep(300);
    phases.add(System.currentTimeMillis() + "\t" + name);
    System.out.println("phase " + name);
  }

  public static void main(String[] args) throws Exception {
    Path out = Paths.get(args.length > 0 ? args[0] : ".");
    TableName name = TableName.valueOf("trace_t");
    byte[] f = Bytes.toBytes("f");
    byte[] row = Bytes.toBytes("row1");
    try {
      phase("connect");
      try (Connection conn = ConnectionFactory.createConnection(TestTarget.get().configuration())) {
        System.out.println("cluster id " + conn.getClusterId());
        phase("locate-meta");
        try (RegionLocator meta = conn.getRegionLocator(TableName.META_TABLE_NAME)) {
          System.out.println("meta at " + meta.getRegionLocation(HConstants.EMPTY_START_ROW));
        }
        try (Admin admin = conn.getAdmin()) {
          phase("list-tables");
          System.out.println("tables " + admin.listTableNames().length);
          if (admin.tableExists(name)) {
            admin.disableTable(name);
            admin.deleteTable(name);
          }
          phase("create-table");
          admin.createTable(
              TableDescriptorBuilder.newBuilder(name)
                  .setColumnFamily(ColumnFamilyDescriptorBuilder.of(f))
                  .build());
          phase("locate-region");
          try (RegionLocator locator = conn.getRegionLocator(name)) {
            System.out.println("region at " + locator.getRegionLocation(row, true));
          }
          try (Table table = conn.getTable(name)) {
            phase("put");
            table.put(new Put(row).addColumn(f, Bytes.toBytes("q"), Bytes.toBytes("value1")));
            phase("get");
            Result r = table.get(new Get(row));
            System.out.println("got " + Bytes.toString(r.getValue(f, Bytes.toBytes("q"))));
            phase("scan");
            try (ResultScanner rs = table.getScanner(new Scan())) {
              for (Result x : rs) {
                System.out.println("scanned " + Bytes.toString(x.getRow()));
              }
            }
            phase("multi-put");
            List<Put> puts = new ArrayList<>();
            for (String key : new String[] {"row2", "row3", "row4"}) {
              byte[] k = Bytes.toBytes(key);
              puts.add(new Put(k).addColumn(f, Bytes.toBytes("q"), k));
            }
            table.put(puts);
            phase("scan-caching-1");
            try (ResultScanner rs = table.getScanner(new Scan().setCaching(1))) {
              int n = 0;
              for (Result x : rs) {
                n++;
              }
              System.out.println("scanned " + n + " rows one at a time");
            }
            phase("delete");
            table.delete(new Delete(row));
            phase("error-no-such-family");
            try {
              table.get(new Get(row).addFamily(Bytes.toBytes("nope")));
            } catch (IOException e) {
              System.out.println("expected error: " + e.getClass().getName());
            }
          }
          phase("drop-table");
          admin.disableTable(name);
          admin.deleteTable(name);
        }
        phase("close");
      }
    } finally {
      Files.createDirectories(out);
      try (PrintWriter w = new PrintWriter(Files.newBufferedWriter(out.resolve("phases.tsv")))) {
        w.println("# epoch_ms\tphase");
        for (String p : phases) {
          w.println(p);
        }
      }
    }
  }
}
