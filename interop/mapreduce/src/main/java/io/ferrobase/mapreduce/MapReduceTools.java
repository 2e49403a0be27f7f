package io.ferrobase.mapreduce;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.TreeMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.mapreduce.CopyTable;
import org.apache.hadoop.hbase.mapreduce.Export;
import org.apache.hadoop.hbase.mapreduce.Import;
import org.apache.hadoop.hbase.mapreduce.ImportTsv;
import org.apache.hadoop.hbase.mapreduce.RowCounter;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.mapreduce.Counter;
import org.apache.hadoop.mapreduce.Job;
import org.apache.hadoop.util.ToolRunner;

/**
 * Apache HBase's own MapReduce tools (hbase-mapreduce 2.6.4) against a running server, in Hadoop's
 * LocalJobRunner: loads a pre-split table through the HBase Java client, then
 *
 * <ol>
 *   <li>{@code RowCounter} (one map task per region, from TableInputFormat's splits) must count
 *       every row, and with {@code --range} only the rows of the range;
 *   <li>{@code CopyTable} (scans through TableInputFormat, puts through TableOutputFormat) must
 *       copy the newest cells, with {@code --versions} every cell, and with {@code
 *       --starttime}/{@code --endtime} only the older ones;
 *   <li>{@code Export} to sequence files, then {@code Import} into a new table, must give the
 *       source's cells back;
 *   <li>{@code ImportTsv} of a tab-separated file (HBase's own loader, through TableOutputFormat)
 *       must put every good line's cells and count the bad lines.
 * </ol>
 *
 * <p>Arguments: {@code ZK_HOST:ZK_PORT ROWS WORK_DIR}: the server's ZooKeeper registry endpoint
 * (what {@code hbase.zookeeper.quorum} names for any HBase client), the rows to load, and a
 * directory for the jobs' files. Prints one line per check; exits 1 at the first that fails.
 */
public final class MapReduceTools {
  private static final byte[] FAMILY = Bytes.toBytes("f");
  private static final byte[] VALUE = Bytes.toBytes("v");
  private static final byte[] NUMBER = Bytes.toBytes("n");
  private static final String SOURCE = "mr_source";
  private static final int REGIONS = 4;

  private MapReduceTools() {}

  public static void main(String[] args) throws Exception {
    if (args.length != 3) {
      System.err.println("usage: MapReduceTools ZK_HOST:ZK_PORT ROWS WORK_DIR");
      System.exit(2);
    }
    String[] zk = args[0].split(":");
    int rows = Integer.parseInt(args[1]);
    Path work = Paths.get(args[2]);
    Configuration conf = HBaseConfiguration.create();
    conf.set(HConstants.ZOOKEEPER_QUORUM, zk[0]);
    conf.set(HConstants.ZOOKEEPER_CLIENT_PORT, zk[1]);
    conf.set("mapreduce.framework.name", "local");
    conf.set("fs.defaultFS", "file:///");
    conf.set("hadoop.tmp.dir", work.resolve("hadoop-tmp").toString());
    conf.setInt("hbase.client.retries.number", 5);
    try (Connection conn = ConnectionFactory.createConnection(conf)) {
      // CopyTable and Import tag their mutations with the cluster's id as a UUID.
      String id = conn.getClusterId();
      check(
          id != null && java.util.UUID.fromString(id).toString().equals(id),
          "the cluster id " + id + " is a UUID");
      long oldTs = load(conn, rows);
      rowCounter(conf, rows);
      copyTable(conf, conn, rows, oldTs);
      exportImport(conf, conn, work, rows);
      importTsv(conf, conn, work, rows);
    }
    System.out.println("MapReduce tools: every check passed");
  }

  private static void check(boolean ok, String what) {
    if (!ok) {
      System.out.println("FAILED: " + what);
      System.exit(1);
    }
    System.out.println("ok: " + what);
  }

  private static String row(int i) {
    return String.format("row%06d", i);
  }

  private static void create(Admin admin, String name, byte[][] splits) throws IOException {
    TableName t = TableName.valueOf(name);
    if (admin.tableExists(t)) {
      admin.disableTable(t);
      admin.deleteTable(t);
    }
    admin.createTable(
        TableDescriptorBuilder.newBuilder(t)
            .setColumnFamily(
                ColumnFamilyDescriptorBuilder.newBuilder(FAMILY).setMaxVersions(3).build())
            .build(),
        splits);
  }

  /**
   * Table {@code mr_source}, split in {@link #REGIONS}: every row has {@code f:v} (two versions:
   * an old one at timestamp 1000 and a new one) and, for even rows only, {@code f:n}. Returns the
   * old version's timestamp.
   */
  private static long load(Connection conn, int rows) throws IOException {
    byte[][] splits = new byte[REGIONS - 1][];
    for (int r = 1; r < REGIONS; r++) {
      splits[r - 1] = Bytes.toBytes(row(rows * r / REGIONS));
    }
    try (Admin admin = conn.getAdmin()) {
      create(admin, SOURCE, splits);
    }
    long oldTs = 1000L;
    try (Table t = conn.getTable(TableName.valueOf(SOURCE))) {
      List<Put> puts = new ArrayList<>();
      for (int i = 0; i < rows; i++) {
        Put p = new Put(Bytes.toBytes(row(i)));
        p.addColumn(FAMILY, VALUE, oldTs, Bytes.toBytes("old-" + i));
        p.addColumn(FAMILY, VALUE, Bytes.toBytes("value-" + i));
        if (i % 2 == 0) {
          p.addColumn(FAMILY, NUMBER, Bytes.toBytes((long) i));
        }
        puts.add(p);
        if (puts.size() == 500) {
          t.put(puts);
          puts.clear();
        }
      }
      t.put(puts);
    }
    check(regions(conn, SOURCE) == REGIONS, "loaded " + rows + " rows into " + REGIONS + " regions");
    return oldTs;
  }

  private static int regions(Connection conn, String table) throws IOException {
    try (var locator = conn.getRegionLocator(TableName.valueOf(table))) {
      return locator.getStartKeys().length;
    }
  }

  private static long counter(Job job, String group, String name) throws IOException {
    Counter c = job.getCounters().findCounter(group, name);
    return c == null ? -1 : c.getValue();
  }

  private static void rowCounter(Configuration conf, int rows) throws Exception {
    String group = "org.apache.hadoop.hbase.mapreduce.RowCounter$RowCounterMapper$Counters";
    Job all = RowCounter.createSubmittableJob(new Configuration(conf), new String[] {SOURCE});
    check(all.waitForCompletion(false), "RowCounter " + SOURCE + " completed");
    // TableInputFormat's splits: one scan a region.
    long scanned = counter(all, "HBaseCounters", "REGIONS_SCANNED");
    check(scanned == REGIONS, "RowCounter scanned the " + scanned + " regions");
    long counted = counter(all, group, "ROWS");
    check(counted == rows, "RowCounter counted " + counted + " of " + rows + " rows");

    int from = rows / 10;
    int to = rows / 2;
    Job range =
        RowCounter.createSubmittableJob(
            new Configuration(conf),
            new String[] {SOURCE, "--range=" + row(from) + "," + row(to)});
    check(range.waitForCompletion(false), "RowCounter --range completed");
    long inRange = counter(range, group, "ROWS");
    check(inRange == to - from, "RowCounter --range counted " + inRange + " of " + (to - from));

    Job column =
        RowCounter.createSubmittableJob(new Configuration(conf), new String[] {SOURCE, "f:n"});
    check(column.waitForCompletion(false), "RowCounter " + SOURCE + " f:n completed");
    long withN = counter(column, group, "ROWS");
    check(withN == (rows + 1) / 2, "RowCounter f:n counted " + withN + " rows with the column");
  }

  /** Every cell of {@code table}: row/qualifier/timestamp to value. */
  private static TreeMap<String, String> cells(Connection conn, String table) throws IOException {
    TreeMap<String, String> out = new TreeMap<>();
    Scan scan = new Scan().readAllVersions();
    try (Table t = conn.getTable(TableName.valueOf(table));
        ResultScanner s = t.getScanner(scan)) {
      for (Result r : s) {
        for (var c : r.rawCells()) {
          out.put(
              Bytes.toString(c.getRowArray(), c.getRowOffset(), c.getRowLength())
                  + "/"
                  + Bytes.toString(
                      c.getQualifierArray(), c.getQualifierOffset(), c.getQualifierLength())
                  + "/"
                  + c.getTimestamp(),
              Bytes.toString(c.getValueArray(), c.getValueOffset(), c.getValueLength()));
        }
      }
    }
    return out;
  }

  private static void copyTable(Configuration conf, Connection conn, int rows, long oldTs)
      throws Exception {
    try (Admin admin = conn.getAdmin()) {
      create(admin, "mr_copy", null);
      create(admin, "mr_copy_old", null);
    }
    try (Admin admin = conn.getAdmin()) {
      create(admin, "mr_copy_newest", null);
    }
    // Without --versions, the newest version of each column (the scan's default).
    int rc =
        ToolRunner.run(
            new Configuration(conf),
            new CopyTable(),
            new String[] {"--new.name=mr_copy_newest", SOURCE});
    check(rc == 0, "CopyTable " + SOURCE + " to mr_copy_newest exited 0");
    TreeMap<String, String> newest = cells(conn, "mr_copy_newest");
    boolean onlyNewest =
        newest.size() == rows + (rows + 1) / 2
            && newest.values().stream().noneMatch(v -> v.startsWith("old-"));
    check(onlyNewest, "CopyTable copied the " + newest.size() + " newest cells");

    rc =
        ToolRunner.run(
            new Configuration(conf),
            new CopyTable(),
            new String[] {"--new.name=mr_copy", "--versions=3", SOURCE});
    check(rc == 0, "CopyTable --versions=3 " + SOURCE + " to mr_copy exited 0");
    TreeMap<String, String> source = cells(conn, SOURCE);
    check(source.size() == rows * 2 + (rows + 1) / 2, "the source has " + source.size() + " cells");
    TreeMap<String, String> copy = cells(conn, "mr_copy");
    check(copy.equals(source), "CopyTable --versions=3 copied every cell (" + copy.size() + ")");

    rc =
        ToolRunner.run(
            new Configuration(conf),
            new CopyTable(),
            new String[] {
              "--new.name=mr_copy_old",
              "--versions=3",
              "--starttime=0",
              "--endtime=" + (oldTs + 1),
              SOURCE
            });
    check(rc == 0, "CopyTable --starttime/--endtime exited 0");
    TreeMap<String, String> old = cells(conn, "mr_copy_old");
    boolean onlyOld =
        old.size() == rows && old.values().stream().allMatch(v -> v.startsWith("old-"));
    check(onlyOld, "CopyTable --endtime copied only the " + old.size() + " old versions");
  }

  /** ImportTsv's job, as its {@code run} makes it (the factory is protected). */
  private static final class TsvJob extends ImportTsv {
    static Job create(Configuration c, String[] args) throws IOException, ClassNotFoundException {
      return createSubmittableJob(c, args);
    }
  }

  private static void importTsv(Configuration conf, Connection conn, Path work, int rows)
      throws Exception {
    Path input = work.resolve("tsv");
    Files.createDirectories(input);
    StringBuilder text = new StringBuilder();
    for (int i = 0; i < rows; i++) {
      text.append(row(i)).append('\t').append("plate-").append(i).append('\t').append(i % 7);
      text.append('\n');
    }
    // A line with too few fields: counted as bad and skipped (importtsv.skip.bad.lines).
    text.append("lonely\n");
    Files.writeString(input.resolve("part-0.tsv"), text.toString());
    try (Admin admin = conn.getAdmin()) {
      create(admin, "mr_tsv", null);
    }
    Configuration c = new Configuration(conf);
    c.set(ImportTsv.COLUMNS_CONF_KEY, "HBASE_ROW_KEY,f:plate,f:lane");
    c.setBoolean(ImportTsv.SKIP_LINES_CONF_KEY, true);
    Job job = TsvJob.create(c, new String[] {"mr_tsv", input.toString()});
    check(job.waitForCompletion(false), "ImportTsv into mr_tsv completed");
    long bad = counter(job, "ImportTsv", "Bad Lines");
    check(bad == 1, "ImportTsv counted " + bad + " bad line");
    TreeMap<String, String> cells = cells(conn, "mr_tsv");
    boolean all = cells.size() == rows * 2;
    for (int i = 0; all && i < rows; i += Math.max(1, rows / 50)) {
      String plate = null;
      for (var e : cells.subMap(row(i) + "/plate/", row(i) + "/plate/~").entrySet()) {
        plate = e.getValue();
      }
      all = ("plate-" + i).equals(plate);
    }
    check(all, "ImportTsv put both columns of every good line (" + cells.size() + " cells)");
  }

  private static void exportImport(Configuration conf, Connection conn, Path work, int rows)
      throws Exception {
    Path dir = work.resolve("export");
    if (Files.exists(dir)) {
      try (var paths = Files.walk(dir)) {
        paths.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      }
    }
    int rc =
        ToolRunner.run(
            new Configuration(conf), new Export(), new String[] {SOURCE, dir.toString(), "3"});
    check(rc == 0, "Export " + SOURCE + " (3 versions) to " + dir + " exited 0");
    try (Admin admin = conn.getAdmin()) {
      create(admin, "mr_import", null);
    }
    rc =
        ToolRunner.run(
            new Configuration(conf), new Import(), new String[] {"mr_import", dir.toString()});
    check(rc == 0, "Import into mr_import exited 0");
    TreeMap<String, String> source = cells(conn, SOURCE);
    TreeMap<String, String> imported = cells(conn, "mr_import");
    check(imported.equals(source), "Import gave back every exported cell (" + imported.size() + ")");
  }
}
