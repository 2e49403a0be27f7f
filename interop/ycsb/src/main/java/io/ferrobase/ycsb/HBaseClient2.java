package io.ferrobase.ycsb;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.ConcurrentHashMap;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.util.Bytes;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.measurements.Measurements;
import site.ycsb.workloads.CoreWorkload;

/**
 * A YCSB binding for HBase 2 clients, on the unmodified Apache HBase client.
 *
 * <p>YCSB 0.17.0 does not publish its database bindings to Maven Central, so this is ours. It
 * makes the calls YCSB's own HBase 2 binding makes, with the same properties:
 *
 * <ul>
 *   <li>one {@link Connection} shared by every client thread, a {@link Table} per thread; the
 *       run stops at start-up when the table does not exist;
 *   <li>read: one {@link Get} of the whole family ({@code columnfamily}) or of the requested
 *       columns;
 *   <li>scan: a {@link Scan} from the start key with caching = the record count and a {@link
 *       PageFilter} of it ({@code hbase.usepagefilter=false} drops the filter), closed after
 *       that many rows;
 *   <li>update and insert: one {@link Put} per call, durability {@code durability} (default
 *       {@code USE_DEFAULT}); with {@code clientbuffering=true} through a {@link
 *       BufferedMutator} of {@code writebuffersize} bytes (default 12 MiB) instead;
 *   <li>delete: one {@link Delete} of the row.
 * </ul>
 *
 * <p>Unlike YCSB's binding, every YCSB property whose name starts with {@code hbase.} is also set
 * on the client's configuration (after any {@code hbase-site.xml} on the classpath), so {@code -p
 * hbase.client.bootstrap.servers=HOST:PORT} works, and the first failure of each operation kind
 * is printed to stderr as one line, {@code ycsb-hbase: first READ error: ...}, where YCSB's
 * binding counts it silently.
 */
public final class HBaseClient2 extends DB {
  private static final Object LOCK = new Object();
  private static Connection connection;
  private static int openClients;
  /** The first client thread's start-up failure: the others fail at once with it. */
  private static Exception initFailure;
  private static final Set<String> REPORTED = ConcurrentHashMap.newKeySet();

  private byte[] family;
  private boolean usePageFilter = true;
  private boolean clientBuffering;
  private long writeBufferSize = 12L * 1024 * 1024;
  private Durability durability = Durability.USE_DEFAULT;
  private String tableName;
  private Table table;
  private BufferedMutator mutator;

  @Override
  public void init() throws DBException {
    Properties props = getProperties();
    String cf = props.getProperty("columnfamily");
    if (cf == null) {
      throw new DBException("no column family: set -p columnfamily=NAME");
    }
    family = Bytes.toBytes(cf);
    clientBuffering = Boolean.parseBoolean(props.getProperty("clientbuffering", "false"));
    if (props.containsKey("writebuffersize")) {
      writeBufferSize = Long.parseLong(props.getProperty("writebuffersize"));
    }
    if (props.getProperty("durability") != null) {
      durability = Durability.valueOf(props.getProperty("durability"));
    }
    usePageFilter = !"false".equals(props.getProperty("hbase.usepagefilter", "true"));
    String name =
        props.getProperty(CoreWorkload.TABLENAME_PROPERTY, CoreWorkload.TABLENAME_PROPERTY_DEFAULT);
    synchronized (LOCK) {
      if (initFailure != null) {
        throw new DBException("the client could not start: " + firstLine(initFailure), initFailure);
      }
      if (connection == null) {
        Configuration conf = configuration(props);
        Connection c = null;
        try {
          c = ConnectionFactory.createConnection(conf);
          try (Admin admin = c.getAdmin()) {
            if (!admin.tableExists(TableName.valueOf(name))) {
              throw new DBException("table " + name + " does not exist");
            }
          }
        } catch (IOException | RuntimeException e) {
          closeQuietly(c);
          initFailure = e;
          report("INIT", e);
          throw new DBException(e);
        } catch (DBException e) {
          closeQuietly(c);
          initFailure = e;
          report("INIT", e);
          throw e;
        }
        connection = c;
      }
      openClients++;
    }
  }

  /** HBase's configuration: hbase-site.xml from the classpath, then every hbase.* property. */
  static Configuration configuration(Properties props) {
    Configuration conf = HBaseConfiguration.create();
    for (String key : props.stringPropertyNames()) {
      if (key.startsWith("hbase.")) {
        conf.set(key, props.getProperty(key));
      }
    }
    return conf;
  }

  @Override
  public void cleanup() throws DBException {
    Measurements measurements = Measurements.getMeasurements();
    try {
      long start = System.nanoTime();
      if (mutator != null) {
        mutator.close();
      }
      if (table != null) {
        table.close();
      }
      long end = System.nanoTime();
      // As YCSB's binding: a buffered run's last flush counts as an update.
      measurements.measure(clientBuffering ? "UPDATE" : "CLEANUP", (int) ((end - start) / 1000));
    } catch (IOException e) {
      throw new DBException(e);
    } finally {
      synchronized (LOCK) {
        openClients--;
        if (openClients <= 0 && connection != null) {
          closeQuietly(connection);
          connection = null;
        }
      }
    }
  }

  private void open(String name) throws IOException {
    if (name.equals(tableName)) {
      return;
    }
    TableName tn = TableName.valueOf(name);
    table = connection.getTable(tn);
    if (clientBuffering) {
      mutator = connection.getBufferedMutator(new BufferedMutatorParams(tn).writeBufferSize(writeBufferSize));
    }
    tableName = name;
  }

  @Override
  public Status read(String name, String key, Set<String> fields, Map<String, ByteIterator> result) {
    try {
      open(name);
      Get get = new Get(Bytes.toBytes(key));
      if (fields == null) {
        get.addFamily(family);
      } else {
        for (String field : fields) {
          get.addColumn(family, Bytes.toBytes(field));
        }
      }
      Result r = table.get(get);
      if (r.isEmpty()) {
        return Status.NOT_FOUND;
      }
      for (Cell cell : r.rawCells()) {
        result.put(Bytes.toString(CellUtil.cloneQualifier(cell)), new ByteArrayByteIterator(CellUtil.cloneValue(cell)));
      }
      return Status.OK;
    } catch (IOException | RuntimeException e) {
      return fail("READ", e);
    }
  }

  @Override
  public Status scan(String name, String startKey, int count, Set<String> fields,
      Vector<HashMap<String, ByteIterator>> result) {
    try {
      open(name);
      Scan scan = new Scan().withStartRow(Bytes.toBytes(startKey));
      scan.setCaching(count);
      if (usePageFilter) {
        scan.setFilter(new PageFilter(count));
      }
      if (fields == null) {
        scan.addFamily(family);
      } else {
        for (String field : fields) {
          scan.addColumn(family, Bytes.toBytes(field));
        }
      }
      try (ResultScanner scanner = table.getScanner(scan)) {
        int rows = 0;
        for (Result r = scanner.next(); r != null; r = scanner.next()) {
          HashMap<String, ByteIterator> row = new HashMap<>();
          for (Cell cell : r.rawCells()) {
            row.put(Bytes.toString(CellUtil.cloneQualifier(cell)), new ByteArrayByteIterator(CellUtil.cloneValue(cell)));
          }
          result.add(row);
          rows++;
          // A PageFilter is applied per region: stop after `count` rows ourselves.
          if (rows >= count) {
            break;
          }
        }
      }
      return Status.OK;
    } catch (IOException | RuntimeException e) {
      return fail("SCAN", e);
    }
  }

  @Override
  public Status update(String name, String key, Map<String, ByteIterator> values) {
    return put("UPDATE", name, key, values);
  }

  @Override
  public Status insert(String name, String key, Map<String, ByteIterator> values) {
    return put("INSERT", name, key, values);
  }

  private Status put(String op, String name, String key, Map<String, ByteIterator> values) {
    try {
      open(name);
      Put put = new Put(Bytes.toBytes(key));
      put.setDurability(durability);
      for (Map.Entry<String, ByteIterator> e : values.entrySet()) {
        put.addColumn(family, Bytes.toBytes(e.getKey()), e.getValue().toArray());
      }
      write(put);
      return Status.OK;
    } catch (IOException | RuntimeException e) {
      return fail(op, e);
    }
  }

  @Override
  public Status delete(String name, String key) {
    try {
      open(name);
      Delete delete = new Delete(Bytes.toBytes(key));
      delete.setDurability(durability);
      write(delete);
      return Status.OK;
    } catch (IOException | RuntimeException e) {
      return fail("DELETE", e);
    }
  }

  private void write(Mutation m) throws IOException {
    if (clientBuffering) {
      mutator.mutate(m);
    } else if (m instanceof Put) {
      table.put((Put) m);
    } else {
      table.delete((Delete) m);
    }
  }

  private static Status fail(String op, Exception e) {
    report(op, e);
    return Status.ERROR;
  }

  /** The first failure of each kind, as one line on stderr (scripts/bench-peer.sh reads it). */
  private static void report(String op, Exception e) {
    if (REPORTED.add(op)) {
      System.err.println("ycsb-hbase: first " + op + " error: " + firstLine(e));
    }
  }

  static String firstLine(Throwable e) {
    String s = e.toString();
    int nl = s.indexOf('\n');
    return nl < 0 ? s : s.substring(0, nl);
  }

  private static void closeQuietly(Connection c) {
    if (c == null) {
      return;
    }
    try {
      c.close();
    } catch (IOException | RuntimeException ignored) {
      // closing after a failure: the first error is the one reported
    }
  }
}
