package dev.krecords.interop;

import org.apache.kafka.common.record.internal.MemoryRecords;
import org.apache.kafka.common.record.internal.MutableRecordBatch;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.utils.internals.BufferSupplier;
import org.apache.kafka.common.utils.internals.CloseableIterator;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Locale;

/**
 * Decode throughput of Apache Kafka's own record reader on a file of log entries, for the Rust
 * comparison harness ({@code benches/compare}), which writes the file and parses the output.
 *
 * <p>One pass is what a consumer does with fetched bytes when {@code check.crcs} is on (the default):
 * {@code MemoryRecords.readableRecords(buf).batches()}, {@code batch.ensureValid()} (size and CRC-32C),
 * then {@code batch.streamingIterator(bufferSupplier)} over every record (decompressing compressed
 * batches through Kafka's codec streams, with a {@link BufferSupplier} reused across batches as the
 * consumer's fetcher does), touching offset, timestamp, key, value and headers. The wrapping sum it
 * prints is the same digest the Rust harness computes, so the two can check that Java read the same
 * records: per record offset + timestamp + header count + touch(key) + touch(value), where touch is
 * 0 for null and otherwise 1 + length + the first byte (unsigned).
 *
 * <p>Method: passes for {@code warmup} seconds to let the JIT compile the path, then {@code runs}
 * timed runs, each of as many passes as fit in at least {@code min} seconds; the median seconds per
 * pass is reported.
 *
 * <pre>
 * java -cp 'interop/java/target/lib/*:interop/java/target/classes' dev.krecords.interop.JavaBench \
 *     FILE RUNS [MIN_SECONDS_PER_RUN=1.0] [WARMUP_SECONDS=5.0]
 * </pre>
 *
 * Output (stdout), one line per run then one result line, all {@code key=value}:
 * <pre>
 * run index=0 passes=12 secs_per_pass=0.0841
 * result bytes=67108864 records=600000 checksum=1234 secs_per_pass=0.0840 min=0.0835 max=0.0850 mb_s=798.9 records_s=7142857
 * </pre>
 */
public final class JavaBench {
    private JavaBench() {}

    private static long records;
    private static long checksum;

    private static long touch(ByteBuffer b) {
        if (b == null) return 0;
        int n = b.remaining();
        return 1L + n + (n > 0 ? (b.get(b.position()) & 0xff) : 0);
    }

    /** One pass over every batch and record of {@code data}. */
    static void pass(ByteBuffer data, BufferSupplier supplier) {
        long n = 0;
        long sum = 0;
        MemoryRecords memoryRecords = MemoryRecords.readableRecords(data.duplicate());
        for (MutableRecordBatch batch : memoryRecords.batches()) {
            batch.ensureValid();
            try (CloseableIterator<Record> it = batch.streamingIterator(supplier)) {
                while (it.hasNext()) {
                    Record r = it.next();
                    n++;
                    sum += r.offset() + r.timestamp() + r.headers().length + touch(r.key()) + touch(r.value());
                }
            }
        }
        records = n;
        checksum = sum;
    }

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: JavaBench FILE RUNS [MIN_SECONDS_PER_RUN] [WARMUP_SECONDS]");
            System.exit(2);
        }
        byte[] bytes = Files.readAllBytes(Path.of(args[0]));
        int runs = Math.max(1, Integer.parseInt(args[1]));
        double minSecs = args.length > 2 ? Double.parseDouble(args[2]) : 1.0;
        double warmupSecs = args.length > 3 ? Double.parseDouble(args[3]) : 5.0;
        ByteBuffer data = ByteBuffer.wrap(bytes);
        BufferSupplier supplier = BufferSupplier.create();

        long warmupEnd = System.nanoTime() + (long) (warmupSecs * 1e9);
        long passes = 0;
        long warmStart = System.nanoTime();
        do {
            pass(data, supplier);
            passes++;
        } while (System.nanoTime() < warmupEnd);
        double estimate = (System.nanoTime() - warmStart) / 1e9 / passes;

        double[] perPass = new double[runs];
        for (int i = 0; i < runs; i++) {
            long n = Math.max(1, (long) Math.ceil(minSecs / Math.max(estimate, 1e-9)));
            long start = System.nanoTime();
            for (long p = 0; p < n; p++) pass(data, supplier);
            double secs = (System.nanoTime() - start) / 1e9;
            perPass[i] = secs / n;
            estimate = perPass[i];
            System.out.printf(Locale.ROOT, "run index=%d passes=%d secs_per_pass=%.9f%n", i, n, perPass[i]);
        }
        double[] sorted = perPass.clone();
        Arrays.sort(sorted);
        double median = sorted.length % 2 == 1
                ? sorted[sorted.length / 2]
                : (sorted[sorted.length / 2 - 1] + sorted[sorted.length / 2]) / 2;
        System.out.printf(Locale.ROOT,
                "result bytes=%d records=%d checksum=%s secs_per_pass=%.9f min=%.9f max=%.9f mb_s=%.1f records_s=%.0f%n",
                bytes.length, records, Long.toUnsignedString(checksum), median, sorted[0], sorted[sorted.length - 1],
                bytes.length / median / 1e6, records / median);
    }
}
