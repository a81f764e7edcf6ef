package dev.krecords.interop;

import java.io.File;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.record.internal.FileLogInputStream.FileChannelRecordBatch;
import org.apache.kafka.common.record.internal.FileRecords;
import org.apache.kafka.common.record.internal.Record;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * One digest of a partition's records, for comparing sources and targets too large to print
 * record by record (`scripts/ship-big.sh`): SHA-256 over every record's timestamp, key, value
 * and headers, in order, each field length-prefixed (null distinct from empty). Offsets are not
 * part of it (a shipped record gets a new offset).
 *
 * <p>Usage:
 *
 * <pre>
 *   RecordDigest consume BOOTSTRAP TOPIC PARTITION   Kafka's Java consumer at read_committed,
 *                                                    from the start to the last stable offset
 *   RecordDigest files SEGMENT.log...                Kafka's FileRecords reader; control batches
 *                                                    skipped (the files must hold no transaction:
 *                                                    a transactional batch is an error)
 * </pre>
 *
 * <p>Prints one JSON object: {"records": N, "sha256": "..."}.
 */
public final class RecordDigest {
    private static final Duration TIMEOUT = Duration.ofSeconds(120);

    private final MessageDigest sha;
    private final ByteBuffer scratch = ByteBuffer.allocate(12);
    private long records;

    private RecordDigest() throws Exception {
        sha = MessageDigest.getInstance("SHA-256");
    }

    public static void main(String[] args) throws Exception {
        RecordDigest d = new RecordDigest();
        if (args.length == 4 && args[0].equals("consume")) {
            d.consume(args[1], new TopicPartition(args[2], Integer.parseInt(args[3])));
        } else if (args.length >= 2 && args[0].equals("files")) {
            for (String f : Arrays.copyOfRange(args, 1, args.length)) d.file(new File(f));
        } else {
            System.err.println("usage: RecordDigest consume BOOTSTRAP TOPIC PARTITION | files SEGMENT.log...");
            System.exit(2);
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : d.sha.digest()) hex.append(String.format("%02x", b));
        System.out.println("{\"records\": " + d.records + ", \"sha256\": \"" + hex + "\"}");
    }

    private void consume(String bootstrap, TopicPartition tp) throws Exception {
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, "read_committed");
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.MAX_PARTITION_FETCH_BYTES_CONFIG, 8 << 20);
        p.put(ConsumerConfig.FETCH_MAX_BYTES_CONFIG, 64 << 20);
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        try (KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            long end = ShipConsume.stableEnd(bootstrap, tp, System.nanoTime() + TIMEOUT.toNanos());
            long idle = System.nanoTime();
            while (c.position(tp, TIMEOUT) < end) {
                boolean any = false;
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(500))) {
                    any = true;
                    Header[] hs = r.headers().toArray();
                    begin(r.timestamp(), r.key(), r.value(), hs.length);
                    for (Header h : hs) header(h.key(), h.value());
                }
                if (any) idle = System.nanoTime();
                else if (System.nanoTime() - idle > TIMEOUT.toNanos())
                    throw new IllegalStateException("no progress at offset " + c.position(tp) + " of " + end);
            }
        }
    }

    private void file(File f) throws Exception {
        try (FileRecords fr = FileRecords.open(f, false)) {
            for (FileChannelRecordBatch b : fr.batches()) {
                b.ensureValid();
                if (b.isControlBatch()) continue;
                if (b.isTransactional())
                    throw new IllegalStateException(f + ": transactional batch at offset " + b.baseOffset()
                            + " (the files mode reads sources without transactions)");
                for (Record r : b) {
                    Header[] hs = r.headers();
                    begin(r.timestamp(), bytes(r.key()), bytes(r.value()), hs.length);
                    for (Header h : hs) header(h.key(), h.value());
                }
            }
        }
    }

    private static byte[] bytes(ByteBuffer b) {
        if (b == null) return null;
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private void begin(long timestamp, byte[] key, byte[] value, int headers) {
        records++;
        scratch.clear();
        scratch.putLong(timestamp).putInt(headers);
        sha.update(scratch.array(), 0, 12);
        field(key);
        field(value);
    }

    private void header(String key, byte[] value) {
        field(key.getBytes(StandardCharsets.UTF_8));
        field(value);
    }

    private void field(byte[] b) {
        scratch.clear();
        scratch.putInt(b == null ? -1 : b.length);
        sha.update(scratch.array(), 0, 4);
        if (b != null) sha.update(b);
    }
}
