package io.ferrobase.ycsb;

import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * Creates YCSB's table the way YCSB's HBase instructions do in the shell,
 *
 * <pre>
 * n_splits = 10 * region servers
 * create 'usertable', 'family', {SPLITS => (1..n_splits).map {|i| "user#{1000+i*(9999-1000)/n_splits}"}}
 * </pre>
 *
 * but through {@link Admin#createTable(org.apache.hadoop.hbase.client.TableDescriptor, byte[][])}
 * so that both servers get the same schema from the same client: the family with every attribute
 * at HBase's default, and n_splits split keys (n_splits + 1 regions).
 *
 * <pre>
 * java io.ferrobase.ycsb.CreateUserTable [--table usertable] [--family family] [--splits 10]
 *     [-p hbase.NAME=VALUE ...]
 * </pre>
 *
 * Exits 0 when the table was created (or already exists), 1 with the error's first line on
 * stderr otherwise.
 */
public final class CreateUserTable {
  private CreateUserTable() {}

  public static void main(String[] args) {
    String table = "usertable";
    String family = "family";
    int splits = 10;
    Properties props = new Properties();
    try {
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--table" -> table = args[++i];
          case "--family" -> family = args[++i];
          case "--splits" -> splits = Integer.parseInt(args[++i]);
          case "-p" -> {
            String kv = args[++i];
            int eq = kv.indexOf('=');
            if (eq <= 0) {
              throw new IllegalArgumentException("-p wants NAME=VALUE, got " + kv);
            }
            props.setProperty(kv.substring(0, eq), kv.substring(eq + 1));
          }
          default -> throw new IllegalArgumentException("unknown argument " + args[i]);
        }
      }
    } catch (RuntimeException e) {
      System.err.println("CreateUserTable: " + e.getMessage());
      System.err.println(
          "usage: CreateUserTable [--table T] [--family F] [--splits N] [-p hbase.NAME=VALUE ...]");
      System.exit(2);
    }
    System.exit(create(table, family, splits, props));
  }

  /** YCSB's split keys: user(1000 + i * 8999 / n) for i in 1..n. */
  static byte[][] splitKeys(int n) {
    List<byte[]> keys = new ArrayList<>();
    for (int i = 1; i <= n; i++) {
      keys.add(Bytes.toBytes("user" + (1000 + i * (9999 - 1000) / n)));
    }
    return keys.toArray(new byte[0][]);
  }

  private static int create(String table, String family, int splits, Properties props) {
    Configuration conf = HBaseClient2.configuration(props);
    TableName name = TableName.valueOf(table);
    try (Connection c = ConnectionFactory.createConnection(conf); Admin admin = c.getAdmin()) {
      if (admin.tableExists(name)) {
        System.out.println("table " + table + " exists");
        return 0;
      }
      var desc =
          TableDescriptorBuilder.newBuilder(name)
              .setColumnFamily(ColumnFamilyDescriptorBuilder.of(family))
              .build();
      if (splits > 0) {
        admin.createTable(desc, splitKeys(splits));
      } else {
        admin.createTable(desc);
      }
      System.out.println(
          "created " + table + " (family " + family + ", " + (splits + 1) + " regions)");
      return 0;
    } catch (Exception e) {
      System.err.println("CreateUserTable: " + HBaseClient2.firstLine(e));
      return 1;
    }
  }
}
