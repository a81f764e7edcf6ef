package dev.krecords.interop;

import java.util.Properties;
import java.util.Random;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * Transactions, some of them aborted, into existing one-partition topics: the transactional
 * input of the salvage check (interop/broker/salvage_check.py).
 *
 * <p>For each TOPIC, a transactional producer (transactional.id TOPIC-txn, lz4) writes RECORDS
 * records in transactions of 200, each transaction into one partition (the n-th into partition
 * n modulo the topic's partition count), aborting every third transaction of each partition (the
 * n-th when n divided by the partition count leaves a quotient of 2 modulo 3).
 * Values are {@code <topic>-<i>-committed} or {@code <topic>-<i>-aborted} padded to 200 bytes
 * with letters from a seeded random generator (so lz4 leaves them about half their size), keys
 * {@code k<i>}.
 *
 * <pre>java -cp ... dev.krecords.interop.AbortedTransactions BOOTSTRAP RECORDS TOPIC...</pre>
 *
 * Prints one line per topic: {@code TOPIC committed=<n> aborted=<n>}.
 */
public final class AbortedTransactions {
    private AbortedTransactions() {}

    /** Records per transaction. */
    private static final int PER_TXN = 200;

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: AbortedTransactions BOOTSTRAP RECORDS TOPIC...");
            System.exit(2);
        }
        String bootstrap = args[0];
        int records = Integer.parseInt(args[1]);
        for (int t = 2; t < args.length; t++) {
            String topic = args[t];
            Properties pp = new Properties();
            pp.put("bootstrap.servers", bootstrap);
            pp.put("key.serializer", StringSerializer.class.getName());
            pp.put("value.serializer", StringSerializer.class.getName());
            pp.put("transactional.id", topic + "-txn");
            pp.put("compression.type", "lz4");
            pp.put("batch.size", "16384");
            pp.put("linger.ms", "5");
            int committed = 0;
            int aborted = 0;
            Random random = new Random(31);
            try (KafkaProducer<String, String> p = new KafkaProducer<>(pp)) {
                int partitions = p.partitionsFor(topic).size();
                p.initTransactions();
                for (int start = 0, n = 1; start < records; start += PER_TXN, n++) {
                    boolean abort = (n / partitions) % 3 == 2;
                    p.beginTransaction();
                    int end = Math.min(records, start + PER_TXN);
                    for (int i = start; i < end; i++) {
                        StringBuilder v = new StringBuilder(topic + "-" + i + (abort ? "-aborted" : "-committed"));
                        while (v.length() < 200) {
                            v.append((char) ('a' + random.nextInt(26)));
                        }
                        p.send(new ProducerRecord<>(topic, n % partitions, "k" + i, v.toString()));
                    }
                    if (abort) {
                        p.abortTransaction();
                        aborted += end - start;
                    } else {
                        p.commitTransaction();
                        committed += end - start;
                    }
                }
            }
            System.out.println(topic + " committed=" + committed + " aborted=" + aborted);
        }
    }
}
