package dev.krecords.interop;

import java.io.File;
import java.io.IOException;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.apache.kafka.common.utils.Time;
import org.apache.kafka.server.util.KafkaScheduler;
import org.apache.kafka.storage.internals.log.Cleaner;
import org.apache.kafka.storage.internals.log.CleanerStats;
import org.apache.kafka.storage.internals.log.LogCleanerManager;
import org.apache.kafka.storage.internals.log.LogConfig;
import org.apache.kafka.storage.internals.log.LogDirFailureChannel;
import org.apache.kafka.storage.internals.log.LogToClean;
import org.apache.kafka.storage.internals.log.ProducerStateManagerConfig;
import org.apache.kafka.storage.internals.log.SkimpyOffsetMap;
import org.apache.kafka.storage.internals.log.UnifiedLog;
import org.apache.kafka.storage.internals.utils.Throttler;
import org.apache.kafka.storage.log.metrics.BrokerTopicStats;

/**
 * Kafka's own log cleaner as the referee for {@code krec log compact}: opens a partition
 * directory as a {@link UnifiedLog} (as a broker restart does), picks the
 * cleanable range as {@code LogCleanerManager} does, and runs one {@link Cleaner#doClean} pass with
 * a fixed clock, as one cleaner thread of a broker would.
 *
 * <p>Usage: {@code CleanerReferee DIR NOW_MS [--always] [NAME=VALUE]...}. The settings are the
 * topic configs of the log (Kafka's names) plus the cleaner's {@code log.cleaner.dedupe.buffer.size},
 * {@code log.cleaner.io.buffer.size}, {@code log.cleaner.io.buffer.load.factor},
 * {@code message.max.bytes} (the cleaner's largest read buffer) and {@code producer.id.expiration.ms}.
 * The first dirty offset is read from and written to {@code krec-cleaner-offset} (our one-partition
 * form of {@code cleaner-offset-checkpoint}), so a second call continues where the first ended.
 * Without {@code --always} the log is cleaned only when Kafka's cleaner manager would pick it
 * (dirty ratio above {@code min.cleanable.dirty.ratio}, or the maximum compaction lag passed).
 *
 * <p>Prints one JSON line: {@code {"cleaned":B,"first_dirty_offset":N,
 * "first_uncleanable_offset":N,"next_dirty_offset":N,"clean_ms":N}} ({@code clean_ms}: wall time
 * of the cleaning pass alone, for the benchmark).
 */
public final class CleanerReferee {
    private static final String CHECKPOINT = "krec-cleaner-offset";

    private CleanerReferee() {}

    /** A clock that stands still at the given time, as Kafka's tests use {@code MockTime}. */
    private static final class FixedTime implements Time {
        private final long ms;

        FixedTime(long ms) {
            this.ms = ms;
        }

        @Override
        public long milliseconds() {
            return ms;
        }

        @Override
        public long nanoseconds() {
            return TimeUnit.MILLISECONDS.toNanos(ms);
        }

        @Override
        public void sleep(long sleepMs) {}

        @Override
        public void waitObject(Object obj, java.util.function.Supplier<Boolean> condition, long deadlineMs) {
            throw new UnsupportedOperationException("the referee never waits");
        }
    }

    /** Entry point; see the class comment. */
    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: CleanerReferee DIR NOW_MS [--always] [NAME=VALUE]...");
            System.exit(2);
        }
        File dir = new File(args[0]);
        long now = Long.parseLong(args[1]);
        boolean always = false;
        Map<String, String> settings = new HashMap<>();
        for (int i = 2; i < args.length; i++) {
            if (args[i].equals("--always")) {
                always = true;
                continue;
            }
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected NAME=VALUE: " + args[i]);
            }
            settings.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        long dedupe = Long.parseLong(settings.getOrDefault("log.cleaner.dedupe.buffer.size", "134217728"));
        int ioBuffer = Integer.parseInt(settings.getOrDefault("log.cleaner.io.buffer.size", "524288"));
        double loadFactor = Double.parseDouble(settings.getOrDefault("log.cleaner.io.buffer.load.factor", "0.9"));
        int maxMessage = Integer.parseInt(settings.getOrDefault("message.max.bytes", "1048588"));
        int producerExpiry = Integer.parseInt(settings.getOrDefault("producer.id.expiration.ms", "86400000"));
        Map<String, Object> topic = new HashMap<>();
        for (Map.Entry<String, String> e : settings.entrySet()) {
            if (!e.getKey().startsWith("log.cleaner.") && !e.getKey().equals("message.max.bytes")
                    && !e.getKey().equals("producer.id.expiration.ms")) {
                topic.put(e.getKey(), e.getValue());
            }
        }
        topic.put("file.delete.delay.ms", "0");
        // Kafka 4 refuses segment.bytes below 1 MiB; its tests use the internal override.
        Object segmentBytes = topic.remove("segment.bytes");
        if (segmentBytes != null) {
            topic.put("internal.segment.bytes", segmentBytes);
        }
        LogConfig config = new LogConfig(topic);

        Time time = new FixedTime(now);
        KafkaScheduler scheduler = new KafkaScheduler(1, true, "referee-");
        scheduler.startup();
        // A broker restart: after a clean shutdown (our marker file) nothing is recovered and the
        // producer state comes from the snapshots, as Kafka's LogLoader does. (A recovery would
        // rebuild the .txnindex files from the markers and lose the entries a cleaner kept for
        // aborted transactions whose data it already removed.)
        boolean clean = Files.exists(dir.toPath().resolve("krec-clean-shutdown"));
        long recoveryPoint = readCheckpoint(dir.toPath().resolve("krec-recovery-point")).orElse(0L);
        UnifiedLog log = UnifiedLog.create(dir, config, 0L, recoveryPoint, scheduler, new BrokerTopicStats(),
                time, 5 * 60 * 1000, new ProducerStateManagerConfig(producerExpiry, false), 600000,
                new LogDirFailureChannel(10), clean, Optional.empty());
        // A standalone log starts with its high watermark at the log start; a partition whose every
        // record is replicated (what a krecords log is) has it at the log end.
        log.updateHighWatermark(log.logEndOffset());
        String out;
        try {
            out = cleanOnce(log, dir.toPath(), now, always, dedupe, ioBuffer, loadFactor, maxMessage, time);
        } finally {
            log.close();
            scheduler.shutdown();
        }
        // Files the scheduler had no time to remove (Kafka deletes them asynchronously).
        try (var files = Files.list(dir.toPath())) {
            for (Path p : files.toList()) {
                if (p.getFileName().toString().endsWith(".deleted")) {
                    Files.delete(p);
                }
            }
        }
        System.out.println(out);
    }

    private static String cleanOnce(UnifiedLog log, Path dir, long now, boolean always, long dedupe,
            int ioBuffer, double loadFactor, int maxMessage, Time time) throws Exception {
        Optional<Long> last = readCheckpoint(dir.resolve(CHECKPOINT));
        Method offsets = LogCleanerManager.class.getDeclaredMethod("cleanableOffsets", UnifiedLog.class,
                Optional.class, long.class);
        offsets.setAccessible(true);
        Object o = offsets.invoke(null, log, last, now);
        long firstDirty = (Long) accessor(o, "firstDirtyOffset");
        long firstUncleanable = (Long) accessor(o, "firstUncleanableDirtyOffset");
        boolean reset = (Boolean) accessor(o, "forceUpdateCheckpoint");
        Method delay = LogCleanerManager.class.getDeclaredMethod("maxCompactionDelay", UnifiedLog.class,
                long.class, long.class);
        delay.setAccessible(true);
        long compactionDelay = (Long) delay.invoke(null, log, firstDirty, now);
        LogToClean ltc = new LogToClean(log, firstDirty, firstUncleanable,
                compactionDelay > 0);
        if (reset) {
            writeCheckpoint(dir.resolve(CHECKPOINT), firstDirty);
        }
        // LogCleanerManager.grabFilthiestCompactedLog's filter.
        boolean pick = (compactionDelay > 0 && ltc.cleanableBytes() > 0)
                || ltc.cleanableRatio() > log.config().minCleanableRatio;
        boolean clean = ltc.cleanableBytes() > 0 && (always || pick);
        long next = firstDirty;
        long ms = 0;
        if (clean) {
            // LogCleaner's construction of one cleaner thread (log.cleaner.threads = 1).
            SkimpyOffsetMap map = new SkimpyOffsetMap((int) Math.min(dedupe, Integer.MAX_VALUE));
            Throttler throttler = new Throttler(Double.MAX_VALUE, 300, "cleaner-io", "bytes", time);
            Cleaner cleaner = new Cleaner(0, map, ioBuffer / 2, maxMessage, loadFactor, throttler, time, tp -> {});
            long t0 = System.nanoTime();
            Map.Entry<Long, CleanerStats> r = cleaner.doClean(ltc, now);
            ms = (System.nanoTime() - t0) / 1_000_000;
            next = r.getKey();
            writeCheckpoint(dir.resolve(CHECKPOINT), next);
        }
        return "{\"cleaned\":" + clean + ",\"first_dirty_offset\":" + firstDirty
                + ",\"first_uncleanable_offset\":" + ltc.firstUncleanableOffset()
                + ",\"next_dirty_offset\":" + next + ",\"clean_ms\":" + ms + "}";
    }

    /** Calls a record accessor of a class this package may not name ({@code OffsetsToClean}). */
    private static Object accessor(Object o, String name) throws Exception {
        Method m = o.getClass().getDeclaredMethod(name);
        m.setAccessible(true);
        return m.invoke(o);
    }

    private static Optional<Long> readCheckpoint(Path p) throws IOException {
        if (!Files.exists(p)) {
            return Optional.empty();
        }
        try {
            return Optional.of(Long.parseLong(Files.readString(p, StandardCharsets.UTF_8).trim()));
        } catch (NumberFormatException e) {
            return Optional.empty();
        }
    }

    private static void writeCheckpoint(Path p, long offset) throws IOException {
        Path tmp = p.resolveSibling(p.getFileName() + ".tmp");
        Files.write(tmp, List.of(Long.toString(offset)), StandardCharsets.UTF_8);
        Files.move(tmp, p, java.nio.file.StandardCopyOption.REPLACE_EXISTING,
                java.nio.file.StandardCopyOption.ATOMIC_MOVE);
    }
}
