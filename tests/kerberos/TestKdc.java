import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Properties;

import org.apache.hadoop.minikdc.MiniKdc;

/**
 * Hadoop's test KDC (MiniKdc) for yarn-advisor's Kerberos tests, with one
 * keytab per role rather than MiniKdc.main's single keytab.
 *
 * Run with Java's source launcher:
 *   java -cp MINIKDC_JARS TestKdc.java WORKDIR LIFETIME_S KEYTAB=PRINCIPAL[,PRINCIPAL...] ...
 *
 * Tickets live at most LIFETIME_S seconds. When the KDC listens, it writes
 * WORKDIR/krb5.conf and WORKDIR/kdc.properties (realm, port) and prints
 * "READY". It stops when its standard input closes, so it never outlives the
 * test session that started it.
 */
public class TestKdc {
  public static void main(String[] args) throws Exception {
    File work = new File(args[0]).getAbsoluteFile();
    Properties conf = MiniKdc.createConf();
    conf.setProperty(MiniKdc.KDC_BIND_ADDRESS, "127.0.0.1");
    conf.setProperty(MiniKdc.MAX_TICKET_LIFETIME, args[1]);   // Kerby reads seconds
    conf.setProperty(MiniKdc.MAX_RENEWABLE_LIFETIME, args[1]);
    conf.setProperty(MiniKdc.MIN_TICKET_LIFETIME, "1");
    MiniKdc kdc = new MiniKdc(conf, work);
    kdc.start();
    for (int i = 2; i < args.length; i++) {
      String[] spec = args[i].split("=", 2);
      kdc.createPrincipal(new File(spec[0]).getAbsoluteFile(), spec[1].split(","));
    }
    Files.copy(kdc.getKrb5conf().toPath(), new File(work, "krb5.conf").toPath(),
        StandardCopyOption.REPLACE_EXISTING);
    Properties out = new Properties();
    out.setProperty("realm", kdc.getRealm());
    out.setProperty("port", Integer.toString(kdc.getPort()));
    try (var w = Files.newBufferedWriter(new File(work, "kdc.properties").toPath(),
        StandardCharsets.UTF_8)) {
      out.store(w, "TestKdc");
    }
    System.out.println("READY");
    System.out.flush();
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    while (in.readLine() != null) {
      // stdin is kept open by the test session; EOF means stop
    }
    kdc.stop();
  }
}
