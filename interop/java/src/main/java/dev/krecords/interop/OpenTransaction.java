package dev.krecords.interop;

import java.util.List;
import java.util.Properties;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * A partition whose last transaction is still open: the input of the checks that a read stops
 * at the last stable offset only at read_committed, and says so.
 *
 * <p>Creates TOPIC (one partition), commits a transaction of COMMITTED records, then begins a
 * second transaction, sends OPEN records, flushes them and halts the JVM without committing or
 * aborting (a graceful close would abort it). With transaction.timeout.ms at 15 minutes the
 * transaction stays open for the rest of the suite: the partition's high watermark is
 * COMMITTED + 1 (the COMMIT marker) + OPEN, its last stable offset COMMITTED + 1.
 *
 * <pre>java -cp ... dev.krecords.interop.OpenTransaction BOOTSTRAP TOPIC COMMITTED OPEN</pre>
 *
 * Prints one line: {@code lso=<n> hw=<n>} (the offsets the checks expect).
 */
public final class OpenTransaction {
    private OpenTransaction() {}

    public static void main(String[] args) throws Exception {
        String bootstrap = args[0];
        String topic = args[1];
        int committed = Integer.parseInt(args[2]);
        int open = Integer.parseInt(args[3]);
        Properties ap = new Properties();
        ap.put("bootstrap.servers", bootstrap);
        try (Admin admin = Admin.create(ap)) {
            admin.createTopics(List.of(new NewTopic(topic, 1, (short) 1))).all().get();
        }
        Properties pp = new Properties();
        pp.put("bootstrap.servers", bootstrap);
        pp.put("key.serializer", StringSerializer.class.getName());
        pp.put("value.serializer", StringSerializer.class.getName());
        pp.put("transactional.id", topic + "-txn");
        pp.put("transaction.timeout.ms", "900000");
        KafkaProducer<String, String> p = new KafkaProducer<>(pp);
        p.initTransactions();
        p.beginTransaction();
        for (int i = 0; i < committed; i++) {
            p.send(new ProducerRecord<>(topic, "k" + i, "committed-" + i));
        }
        p.commitTransaction();
        p.beginTransaction();
        long last = -1;
        for (int i = 0; i < open; i++) {
            last = p.send(new ProducerRecord<>(topic, "k" + i, "open-" + i)).get().offset();
        }
        p.flush();
        System.out.println("lso=" + (committed + 1) + " hw=" + (last + 1));
        System.out.flush();
        // No close: the producer's shutdown would abort the open transaction.
        Runtime.getRuntime().halt(0);
    }
}
