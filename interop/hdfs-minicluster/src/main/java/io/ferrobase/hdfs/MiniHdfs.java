package io.ferrobase.hdfs;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hdfs.protocol.HdfsConstants;
import org.apache.hadoop.hdfs.MiniDFSCluster;

/**
 * A real HDFS in one JVM: Apache Hadoop's MiniDFSCluster with one NameNode
 * and three DataNodes (by default), every RPC, data-transfer and HTTP port
 * a free one on 127.0.0.1.
 *
 * <pre>
 *   java io.ferrobase.hdfs.MiniHdfs DIR [--datanodes N] [--control] [name=value ...]
 * </pre>
 *
 * Keeps its data under DIR/data, writes the NameNode's URL
 * (hdfs://127.0.0.1:PORT) to DIR/url once the cluster serves, and prints
 * "READY hdfs://127.0.0.1:PORT". SIGTERM ends it.
 *
 * With --control it also reads commands from standard input, one a line,
 * answering each with one line ("OK ..." or "ERR ..."), and shuts down when
 * standard input ends, removing DIR/data: a test that starts it through a
 * pipe cannot leak it, even when the test process is killed.
 *
 *   stop-datanode I      stops the I-th (0-based) running DataNode
 *   restart-datanodes    restarts every DataNode stop-datanode stopped
 *   datanodes            how many DataNodes run
 *   space-quota PATH N   sets the space quota of directory PATH to N bytes
 *                        (raw bytes: a file's length times its replication),
 *                        as hdfs dfsadmin -setSpaceQuota does; N = -1 clears it
 */
public final class MiniHdfs {
  private MiniHdfs() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      System.err.println("usage: MiniHdfs DIR [--datanodes N] [--control] [name=value ...]");
      System.exit(2);
    }
    File dir = new File(args[0]).getAbsoluteFile();
    int datanodes = 3;
    boolean control = false;
    Configuration conf = new Configuration();
    // Quick liveness and lease recovery: the DataNodes learn of a block
    // recovery at their next heartbeat, so a recoverLease completes within
    // about a second instead of HDFS's default 3 s heartbeat.
    conf.setInt("dfs.heartbeat.interval", 1);
    conf.setInt("dfs.namenode.heartbeat.recheck-interval", 3000);
    conf.setInt("dfs.namenode.safemode.extension", 0);
    // Small blocks would make the tests cross block boundaries cheaply;
    // the client sets its own block size per file, so this is only the
    // lower bound the NameNode accepts.
    conf.setLong("dfs.namenode.fs-limits.min-block-size", 1024);
    // Loopback only, and no web UIs beyond what MiniDFSCluster insists on.
    conf.set("dfs.namenode.http-address", "127.0.0.1:0");
    conf.set("dfs.datanode.http.address", "127.0.0.1:0");
    conf.set("dfs.datanode.address", "127.0.0.1:0");
    conf.set("dfs.datanode.ipc.address", "127.0.0.1:0");
    for (int i = 1; i < args.length; i++) {
      String a = args[i];
      if (a.equals("--datanodes") && i + 1 < args.length) {
        datanodes = Integer.parseInt(args[++i]);
      } else if (a.equals("--control")) {
        control = true;
      } else if (a.contains("=")) {
        int eq = a.indexOf('=');
        conf.set(a.substring(0, eq), a.substring(eq + 1));
      } else {
        System.err.println("unknown argument: " + a);
        System.exit(2);
      }
    }
    File data = new File(dir, "data");
    conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, data.getPath());
    MiniDFSCluster cluster =
        new MiniDFSCluster.Builder(conf, data)
            .numDataNodes(datanodes)
            .nameNodePort(0)
            .format(true)
            .build();
    cluster.waitActive();
    cluster.waitClusterUp();

    String url = "hdfs://127.0.0.1:" + cluster.getNameNodePort();
    // Written whole, then renamed: a reader polling for the file never
    // sees half a URL.
    File tmp = new File(dir, "url.tmp");
    Files.writeString(tmp.toPath(), url + "\n", StandardCharsets.UTF_8);
    Files.move(tmp.toPath(), new File(dir, "url").toPath(), StandardCopyOption.ATOMIC_MOVE);
    System.out.println("READY " + url);
    System.out.flush();

    if (!control) {
      Thread.currentThread().join();
      return;
    }
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    String line;
    while ((line = in.readLine()) != null) {
      System.out.println(command(cluster, line.trim()));
      System.out.flush();
    }
    // Standard input closed: whoever started us is gone or done (a test
    // process may end without dropping its cluster). Its blocks go with
    // it; the log stays for whoever wants to read it. Nothing needs a
    // clean shutdown.
    deleteTree(data);
    Runtime.getRuntime().halt(0);
  }

  private static void deleteTree(File f) {
    File[] children = f.listFiles();
    if (children != null) {
      for (File c : children) {
        deleteTree(c);
      }
    }
    f.delete();
  }

  /** DataNodes stopped by "stop-datanode", for "restart-datanodes". */
  private static final java.util.List<MiniDFSCluster.DataNodeProperties> stopped =
      new java.util.ArrayList<>();

  private static String command(MiniDFSCluster cluster, String line) {
    String[] words = line.split("\\s+");
    try {
      switch (words[0]) {
        case "stop-datanode":
          {
            int i = Integer.parseInt(words[1]);
            stopped.add(cluster.stopDataNode(i));
            return "OK " + cluster.getDataNodes().size() + " running";
          }
        case "restart-datanodes":
          {
            for (MiniDFSCluster.DataNodeProperties dn : stopped) {
              cluster.restartDataNode(dn, true);
            }
            stopped.clear();
            cluster.waitActive();
            return "OK " + cluster.getDataNodes().size() + " running";
          }
        case "datanodes":
          return "OK " + cluster.getDataNodes().size() + " running";
        case "space-quota":
          {
            long bytes = Long.parseLong(words[2]);
            // The namespace (file count) quota is left as it is.
            cluster
                .getFileSystem()
                .setQuota(
                    new Path(words[1]),
                    HdfsConstants.QUOTA_DONT_SET,
                    bytes < 0 ? HdfsConstants.QUOTA_RESET : bytes);
            return "OK " + cluster.getDataNodes().size() + " running";
          }
        default:
          return "ERR unknown command: " + line;
      }
    } catch (IOException | RuntimeException e) {
      return "ERR " + e;
    }
  }
}
