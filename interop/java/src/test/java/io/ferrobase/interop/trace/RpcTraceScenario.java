package io.ferrobase.interop.trace;

import io.ferrobase.interop.TestTarget;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.NamespaceDescriptor;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.QualifierFilter;
import org.apache.hadoop.hbase.io.encoding.DataBlockEncoding;
import org.apache.hadoop.hbase.regionserver.BloomType;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * The first calls of an ordinary HBase application, one phase at a time, for a wire capture
 * (scripts/hbase-wire-trace.sh): connect through the RPC registry, locate meta, create a table,
 * locate its region (a meta scan), put, get, scan, a multi-row put (Multi, cell blocks), a
 * scan one row per call (open, next, close), a delete, a get of a missing family (an exception
 * response), drop the table; then a pre-split table for the rest: describe, all region
 * locations, a batch across regions, increment, append, checkAndMutate (a put, row mutations),
 * exists, a get with a filter list, a reversed scan with a limit, alter, namespaces, cluster
 * metrics, truncate, drop. Each phase's start time goes to
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
          more(conn, admin);
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

  /** The rest of what issue-level clients use, one call kind per phase. */
  private static void more(Connection conn, Admin admin) throws Exception {
    TableName name = TableName.valueOf("trace_s");
    byte[] f = Bytes.toBytes("f");
    byte[] g = Bytes.toBytes("g");
    byte[] q = Bytes.toBytes("q");
    if (admin.tableExists(name)) {
      admin.disableTable(name);
      admin.deleteTable(name);
    }
    phase("create-table-split-keys");
    admin.createTable(
        TableDescriptorBuilder.newBuilder(name)
            .setColumnFamily(
                ColumnFamilyDescriptorBuilder.newBuilder(f)
                    .setMaxVersions(3)
                    .setTimeToLive(86_400)
                    .setBloomFilterType(BloomType.ROWCOL)
                    .setDataBlockEncoding(DataBlockEncoding.FAST_DIFF)
                    .build())
            .setColumnFamily(ColumnFamilyDescriptorBuilder.of(g))
            .build(),
        new byte[][] {Bytes.toBytes("m")});
    phase("describe-table");
    System.out.println("descriptor " + admin.getDescriptor(name));
    phase("all-region-locations");
    try (RegionLocator locator = conn.getRegionLocator(name)) {
      System.out.println("regions " + locator.getAllRegionLocations().size());
    }
    try (Table t = conn.getTable(name)) {
      phase("batch-across-regions");
      List<Row> actions = new ArrayList<>();
      actions.add(new Put(Bytes.toBytes("a")).addColumn(f, q, Bytes.toBytes("va")));
      actions.add(new Put(Bytes.toBytes("z")).addColumn(f, q, 5L, Bytes.toBytes("vz")));
      actions.add(new Get(Bytes.toBytes("a")));
      actions.add(new Delete(Bytes.toBytes("y")).addColumns(f, q));
      Object[] results = new Object[actions.size()];
      t.batch(actions, results);
      phase("increment");
      t.increment(new Increment(Bytes.toBytes("counter")).addColumn(f, Bytes.toBytes("n"), 5));
      phase("append");
      t.append(new Append(Bytes.toBytes("a")).addColumn(f, q, Bytes.toBytes("-more")));
      phase("check-and-put");
      t.checkAndMutate(
          CheckAndMutate.newBuilder(Bytes.toBytes("a"))
              .ifEquals(f, q, Bytes.toBytes("va-more"))
              .build(new Put(Bytes.toBytes("a")).addColumn(g, q, Bytes.toBytes("checked"))));
      phase("check-and-row-mutations");
      t.checkAndMutate(
          CheckAndMutate.newBuilder(Bytes.toBytes("a"))
              .ifNotExists(f, Bytes.toBytes("lock"))
              .build(
                  RowMutations.of(
                      List.of(
                          new Put(Bytes.toBytes("a")).addColumn(f, Bytes.toBytes("lock"), q),
                          new Delete(Bytes.toBytes("a")).addColumns(g, q)))));
      phase("exists");
      t.exists(new Get(Bytes.toBytes("a")));
      phase("get-filter-versions-timerange");
      t.get(
          new Get(Bytes.toBytes("a"))
              .readVersions(2)
              .setTimeRange(0, Long.MAX_VALUE - 1)
              .setFilter(
                  new FilterList(
                      FilterList.Operator.MUST_PASS_ALL,
                      new PrefixFilter(Bytes.toBytes("a")),
                      new QualifierFilter(CompareOperator.EQUAL, new BinaryComparator(q)))));
      phase("scan-reversed-limit-filter");
      try (ResultScanner rs =
          t.getScanner(
              new Scan()
                  .setReversed(true)
                  .setLimit(2)
                  .addFamily(f)
                  .setFilter(new KeyOnlyFilter()))) {
        for (Result r : rs) {
          System.out.println("reversed " + Bytes.toString(r.getRow()));
        }
      }
    }
    phase("add-column-family");
    admin.addColumnFamily(name, ColumnFamilyDescriptorBuilder.of(Bytes.toBytes("h")));
    phase("modify-column-family");
    admin.modifyColumnFamily(
        name, ColumnFamilyDescriptorBuilder.newBuilder(g).setMaxVersions(4).build());
    phase("namespaces");
    admin.createNamespace(NamespaceDescriptor.create("trace_ns").build());
    admin.listNamespaceDescriptors();
    admin.getNamespaceDescriptor("trace_ns");
    admin.deleteNamespace("trace_ns");
    phase("cluster-metrics");
    System.out.println("live servers " + admin.getClusterMetrics().getLiveServerMetrics().size());
    phase("truncate-table");
    admin.disableTable(name);
    admin.truncateTable(name, true);
    phase("drop-table-2");
    admin.disableTable(name);
    admin.deleteTable(name);
  }
}
