import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.List;

import net.jpountz.lz4.LZ4BlockOutputStream;
import org.xerial.snappy.SnappyOutputStream;

/**
 * Compresses an event log as Spark's lz4 and snappy CompressionCodecs write it
 * (org.apache.spark.io.LZ4CompressionCodec / SnappyCompressionCodec: the same
 * stream classes, default block size 32k), one event line at a time.
 * Run with Java's source launcher: java -cp LZ4_AND_SNAPPY_JARS SparkCodecs.java IN OUT_LZ4 OUT_SNAPPY
 */
public class SparkCodecs {
    public static void main(String[] args) throws IOException {
        List<String> lines = Files.readAllLines(Paths.get(args[0]));
        try (OutputStream lz4 = new LZ4BlockOutputStream(new FileOutputStream(args[1]), 32 * 1024);
             OutputStream snappy = new SnappyOutputStream(new FileOutputStream(args[2]), 32 * 1024)) {
            for (String line : lines) {
                byte[] bytes = (line + "\n").getBytes("UTF-8");
                lz4.write(bytes);
                snappy.write(bytes);
            }
        }
    }
}
