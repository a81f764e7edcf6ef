//! append tests.
use crate::util::*;

#[test]
fn smoke() {
    let m = mem();
    let mut log = m.create(&[]);
    let a = append(&mut log, &v2(NOW, &["a", "b"]));
    assert_eq!((a.base_offset, a.last_offset), (0, 1));
    let b = append(&mut log, &v2(NOW, &["c"]));
    assert_eq!((b.base_offset, b.last_offset), (2, 2));
    let all = read_all(&log, 1);
    assert_eq!(all.iter().map(|s| s.offset).collect::<Vec<_>>(), vec![0, 1, 2]);
    log.close().unwrap();
    let log = m.open();
    assert!(log.recovery_info().clean_shutdown);
    assert_eq!(log.log_end_offset(), 3);
    log.verify_indexes().unwrap();
}
