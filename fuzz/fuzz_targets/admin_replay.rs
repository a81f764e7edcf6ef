//! krecords-admin's replays of a broker's internal topics on arbitrary bytes: the KRaft
//! metadata log (`MetadataState::replay_bytes`, as a segment or snapshot would be read) and
//! `__consumer_offsets` records (`GroupLog::apply`): a result, never a panic, and no allocation
//! beyond the input's size times a small factor (libFuzzer's -malloc_limit_mb).
//!
//! Input: byte 0 picks the replay (even: metadata log; odd: one coordinator record whose key is
//! the next `byte 1` bytes and whose value is the rest).
#![no_main]

use krecords_admin::groups::GroupLog;
use krecords_admin::offline::MetadataState;
use libfuzzer_sys::fuzz_target;
use std::collections::BTreeMap;

fuzz_target!(|data: &[u8]| {
    let Some((&[which, klen], rest)) = data.split_first_chunk::<2>() else {
        return;
    };
    if which % 2 == 0 {
        let mut st = MetadataState::default();
        st.replay_bytes("fuzz", rest, 0);
        let c = st.into_cluster("fuzz".into());
        for t in &c.topics {
            assert!(t.partitions.windows(2).all(|w| w[0].partition < w[1].partition));
        }
    } else {
        let split = usize::from(klen).min(rest.len());
        let (key, value) = rest.split_at(split);
        let mut log = GroupLog::default();
        log.apply(Some(key), (which & 2 != 0).then_some(value), 0);
        let _ = log.into_groups(&BTreeMap::new());
    }
});
