//! What a query may write: statements that write are refused ([`krecords_sql::query`]), and
//! a result goes only into a file that is none of the sources nor inside one
//! ([`krecords_sql::check_output`]), whole or not at all ([`krecords_sql::write_parquet`]).

use krecords_codec::write::{NewRecord, V2Builder};
use krecords_sql::{
    check_output, new_context, query, register, write_parquet, write_refused, OutputError,
    TableOptions, WriteError,
};
use std::path::{Path, PathBuf};

/// `DIR/events-0/00000000000000000000.log` with three records; the segment's path.
fn partition(dir: &Path) -> PathBuf {
    let part = dir.join("events-0");
    std::fs::create_dir_all(&part).unwrap();
    let mut b = V2Builder::new(0);
    for i in 0..3i64 {
        b.append(&NewRecord::new(1_714_000_000_000 + i, None, Some(b"v")))
            .unwrap();
    }
    let segment = part.join("00000000000000000000.log");
    std::fs::write(&segment, b.finish().unwrap()).unwrap();
    segment
}

fn no_config() -> Result<krecords_source::ClientConfig, krecords_source::Error> {
    Err(krecords_source::Error::Usage("no kafka:// here".into()))
}

#[test]
fn statements_that_write_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let segment = partition(dir.path());
    let before = std::fs::read(&segment).unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let ctx = new_context().unwrap();
        let source = dir.path().display().to_string();
        register(&ctx, "t", &source, TableOptions::default(), &mut no_config)
            .await
            .unwrap();
        let copy = format!(
            "COPY (SELECT \"offset\" FROM t) TO '{}' STORED AS CSV",
            segment.display()
        );
        for (sql, statement) in [
            (copy.as_str(), "COPY"),
            ("INSERT INTO t SELECT * FROM t", "INSERT"),
            ("DELETE FROM t", "DELETE"),
        ] {
            let e = query(&ctx, sql).await.unwrap_err();
            let w = write_refused(&e).unwrap_or_else(|| panic!("{sql}: {e}"));
            assert_eq!(w.statement, statement);
        }
        // DDL only changes the session.
        query(&ctx, "CREATE VIEW v AS SELECT 1 AS x").await.unwrap();
        let n = query(&ctx, "SELECT count(*) FROM t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert_eq!(n[0].num_rows(), 1);
    });
    assert_eq!(std::fs::read(&segment).unwrap(), before);
}

#[test]
fn an_output_in_a_source_or_without_its_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let segment = partition(dir.path());
    let part = segment.parent().unwrap().to_path_buf();
    let root = dir.path().to_path_buf();
    let inside = |e: Result<(), OutputError>| matches!(e, Err(OutputError::InsideSource(_)));
    assert!(inside(check_output(&segment, std::slice::from_ref(&root))));
    assert!(inside(check_output(
        &part.join("x.parquet"),
        std::slice::from_ref(&part)
    )));
    let pattern = root.join("events-*");
    assert!(inside(check_output(&segment, &[pattern])));
    assert!(matches!(
        check_output(&segment, std::slice::from_ref(&segment)),
        Err(OutputError::SourceFile { .. })
    ));
    assert!(matches!(
        check_output(&root.join("no/x.parquet"), &[]),
        Err(OutputError::NoParent { .. })
    ));
    assert!(matches!(
        check_output(&part, &[]),
        Err(OutputError::Directory(_))
    ));
    // A source file read alone: the directory that holds it is a source too (the partition
    // directory of a segment, the dataset of one of its files), so a result written there
    // would join the data; next to a lone Parquet file it is allowed.
    assert!(inside(check_output(
        &part.join("y.parquet"),
        std::slice::from_ref(&segment)
    )));
    let ds = root.join("ds");
    let files = ds.join("topic=ev/partition=0");
    std::fs::create_dir_all(&files).unwrap();
    let one = files.join("00000000000000000000-00000000000000000009.parquet");
    std::fs::write(&one, b"PAR1").unwrap();
    for out in [files.join("y.parquet"), ds.join("y.parquet")] {
        assert!(
            inside(check_output(&out, std::slice::from_ref(&one))),
            "{out:?}"
        );
    }
    let lone = root.join("lone.parquet");
    std::fs::write(&lone, b"PAR1").unwrap();
    check_output(&root.join("next.parquet"), std::slice::from_ref(&lone)).unwrap();
    // Next to the sources, and over an existing Parquet file (an earlier result) or an empty
    // file that is none of them: allowed; over any other file: refused.
    let other = root.join("result.parquet");
    check_output(&other, std::slice::from_ref(&part)).unwrap();
    std::fs::write(&other, b"PAR1 an earlier result").unwrap();
    check_output(&other, &[part.clone(), segment.clone()]).unwrap();
    std::fs::write(&other, b"").unwrap();
    check_output(&other, &[part.clone(), segment.clone()]).unwrap();
    std::fs::write(&other, b"notes").unwrap();
    assert!(matches!(
        check_output(&other, &[part, segment]),
        Err(OutputError::NotParquet(_))
    ));
}

/// An output in a Kafka log's directory that is no source of the query (another partition
/// directory, a broker's root) is refused, as it is inside a source: a partition's segment
/// replaced by a query's result was a partition lost (a newcomer's trial, with `-o` naming
/// the wrong directory).
#[test]
fn an_output_in_any_kafka_directory_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let a = partition(&dir.path().join("a"));
    let b = partition(&dir.path().join("b"));
    let source = b.parent().unwrap().to_path_buf();
    let before = std::fs::read(&a).unwrap();
    let refused = |out: &Path| match check_output(out, std::slice::from_ref(&source)) {
        Err(OutputError::KafkaDirectory { evidence, .. }) => evidence,
        other => panic!("{out:?}: {other:?}"),
    };
    assert_eq!(refused(&a), a);
    assert_eq!(refused(&a.parent().unwrap().join("x.parquet")), a);
    assert_eq!(std::fs::read(&a).unwrap(), before);
    let root = dir.path().join("root");
    std::fs::create_dir(&root).unwrap();
    std::fs::write(root.join("meta.properties"), b"node.id=1\n").unwrap();
    let e = check_output(&root.join("x.parquet"), std::slice::from_ref(&source)).unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "the output {} is in a Kafka log's directory ({} is there): a broker or a later \
             read would take it for its own; write the output outside it",
            root.join("x.parquet").display(),
            root.join("meta.properties").display()
        )
    );
    // A directory that only looks like one by its name is not, nor one with an `app.log`.
    let named = dir.path().join("results-2024");
    std::fs::create_dir(&named).unwrap();
    std::fs::write(named.join("app.log"), b"started\n").unwrap();
    check_output(&named.join("x.parquet"), std::slice::from_ref(&source)).unwrap();
    // A device is no file to replace (renaming over /dev/null as root replaced it).
    let null = Path::new("/dev/null");
    if null.exists() {
        let e = check_output(null, &[]).unwrap_err();
        assert!(matches!(e, OutputError::NotAFile(..)), "{e}");
        assert!(e.to_string().contains("is not a regular file"), "{e}");
    }
}

#[test]
fn a_failed_query_leaves_the_output_as_it_was() {
    let dir = tempfile::tempdir().unwrap();
    let segment = partition(dir.path());
    let out = dir.path().join("result.parquet");
    std::fs::write(&out, b"old").unwrap();
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let ctx = new_context().unwrap();
        let source = segment.display().to_string();
        register(&ctx, "t", &source, TableOptions::default(), &mut no_config)
            .await
            .unwrap();
        let df = query(&ctx, "SELECT 1 / (\"offset\" - 1) FROM t")
            .await
            .unwrap();
        assert!(write_parquet(df, &out).await.is_err());
        assert_eq!(std::fs::read(&out).unwrap(), b"old");
        let df = query(&ctx, "SELECT \"offset\" FROM t").await.unwrap();
        let (rows, removed) = write_parquet(df, &out).await.unwrap();
        assert_eq!((rows, removed.len()), (3, 0));
    });
    let names: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(std::fs::read(&out).unwrap().starts_with(b"PAR1"));
}

/// A write that fails said `Parquet error: External: No space left on device` (a full disk)
/// and `IO error: cannot create DIR/.result.parquet.krec-tmp-PID: ...` (a temporary that
/// cannot be created): the error names the output as given, without the writer's wrappers,
/// keeps the failure's kind, and leaves no file behind.
#[test]
fn a_failed_write_names_the_output() {
    let dir = tempfile::tempdir().unwrap();
    let segment = partition(dir.path());
    let out = dir.path().join("result.parquet");
    let tmp = krecords_source::log::convert::temporary_path(&out);
    let rt = tokio::runtime::Runtime::new().unwrap();
    rt.block_on(async {
        let ctx = new_context().unwrap();
        let source = segment.display().to_string();
        register(&ctx, "t", &source, TableOptions::default(), &mut no_config)
            .await
            .unwrap();
        // The temporary cannot be created: a directory is in its place.
        std::fs::create_dir(&tmp).unwrap();
        let df = query(&ctx, "SELECT * FROM t").await.unwrap();
        let e = write_parquet(df, &out).await.unwrap_err();
        assert!(matches!(e, WriteError::Output(_)), "{e:?}");
        assert_eq!(
            e.to_string(),
            format!(
                "cannot write {}: Is a directory (os error 21)",
                out.display()
            )
        );
        std::fs::remove_dir(&tmp).unwrap();
        // A full disk: the temporary is /dev/full.
        if Path::new("/dev/full").exists() {
            std::os::unix::fs::symlink("/dev/full", &tmp).unwrap();
            let df = query(&ctx, "SELECT * FROM t").await.unwrap();
            let e = write_parquet(df, &out).await.unwrap_err();
            let WriteError::Output(io) = &e else {
                panic!("{e:?}")
            };
            assert_eq!(io.kind(), std::io::ErrorKind::StorageFull);
            assert_eq!(
                e.to_string(),
                format!(
                    "cannot write {}: No space left on device (os error 28)",
                    out.display()
                )
            );
            assert!(tmp.symlink_metadata().is_err(), "the temporary was left");
        }
        // A query's own failure stays the query's.
        let df = query(&ctx, "SELECT 1 / (\"offset\" - 1) FROM t")
            .await
            .unwrap();
        let e = write_parquet(df, &out).await.unwrap_err();
        assert!(matches!(e, WriteError::Query(_)), "{e:?}");
    });
    assert!(!out.exists());
}
