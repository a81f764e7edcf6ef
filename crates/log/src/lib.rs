//! krecords-log: a Kafka partition log (work in progress).
