package dev.krecords.interop;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.ListOffsetsOptions;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.IsolationLevel;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;

/**
 * Waits until the partition has no open transaction, then reads it from the beginning to its
 * end with
 * Kafka's Java consumer and prints one JSON line per record: {"offset", "timestamp", "key",
 * "value", "headers": [{"key", "value"}]}, bytes as lowercase hex (null stays null), header keys
 * as strings. `krec ship`'s interop step compares these lines with the source's records.
 *
 * <p>Usage: ShipConsume BOOTSTRAP TOPIC PARTITION read_committed|read_uncommitted
 */
public final class ShipConsume {
    private static final Duration TIMEOUT = Duration.ofSeconds(60);

    private ShipConsume() {}

    public static void main(String[] args) throws Exception {
        if (args.length != 4) {
            System.err.println("usage: ShipConsume BOOTSTRAP TOPIC PARTITION ISOLATION");
            System.exit(2);
        }
        Properties p = new Properties();
        p.put(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG, args[0]);
        p.put(ConsumerConfig.ISOLATION_LEVEL_CONFIG, args[3]);
        p.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, false);
        p.put(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        p.put(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG, (int) TIMEOUT.toMillis());
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        try (KafkaConsumer<byte[], byte[]> c =
                new KafkaConsumer<>(p, new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            TopicPartition tp = new TopicPartition(args[1], Integer.parseInt(args[2]));
            c.assign(List.of(tp));
            c.seekToBeginning(List.of(tp));
            // EndTxn returns before the coordinator has written the markers: wait until no
            // transaction is open (the last stable offset reaches the high watermark).
            long deadline = System.nanoTime() + TIMEOUT.toNanos();
            long end = stableEnd(args[0], tp, deadline);
            while (c.position(tp, TIMEOUT) < end) {
                if (System.nanoTime() > deadline)
                    throw new IllegalStateException("stuck at offset " + c.position(tp) + " of " + end);
                for (ConsumerRecord<byte[], byte[]> r : c.poll(Duration.ofMillis(200))) {
                    Map<String, Object> m = new LinkedHashMap<>();
                    m.put("offset", r.offset());
                    m.put("timestamp", r.timestamp());
                    m.put("key", hex(r.key()));
                    m.put("value", hex(r.value()));
                    List<Object> hs = new ArrayList<>();
                    for (Header h : r.headers().toArray()) {
                        Map<String, Object> hm = new LinkedHashMap<>();
                        hm.put("key", h.key());
                        hm.put("value", hex(h.value()));
                        hs.add(hm);
                    }
                    m.put("headers", hs);
                    out.print(Json.write(m, 0));
                }
            }
        }
        out.flush();
    }

    /** The high watermark once the last stable offset has caught up with it (RecordDigest uses it too). */
    static long stableEnd(String bootstrap, TopicPartition tp, long deadline) throws Exception {
        Properties p = new Properties();
        p.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, bootstrap);
        try (Admin admin = Admin.create(p)) {
            while (true) {
                long hw = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                        new ListOffsetsOptions(IsolationLevel.READ_UNCOMMITTED)).partitionResult(tp).get().offset();
                long lso = admin.listOffsets(Map.of(tp, OffsetSpec.latest()),
                        new ListOffsetsOptions(IsolationLevel.READ_COMMITTED)).partitionResult(tp).get().offset();
                if (lso == hw) return hw;
                if (System.nanoTime() > deadline)
                    throw new IllegalStateException("a transaction stays open: LSO " + lso + ", HW " + hw);
                Thread.sleep(100);
            }
        }
    }

    private static String hex(byte[] b) {
        return b == null ? null : Hex.encode(b);
    }
}
