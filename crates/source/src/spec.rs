//! What a source argument names, and how it splits into partitions.
//!
//! A source is `-` (standard input), a file of entries (a segment or any concatenation), a
//! partition directory, a broker's `log.dirs` root, a glob pattern the shell did not expand, or
//! a live topic or partition, `kafka://HOST[:PORT][,HOST[:PORT]…]/TOPIC[/PARTITION]`, or a
//! remote tier location (`s3://BUCKET/PREFIX`, `gs://`, `az://`, `file:///ROOT/PREFIX`).
//! [`classify_dir`] is the one place that decides whether a directory is a partition or a
//! broker's root.

use crate::error::Error;
use krecords_log::data_dir::{self, PartitionDir};
use krecords_log::files::LOG_SUFFIX;
use std::io;
use std::path::{Path, PathBuf};

/// Kafka's default port, which a `kafka://` URL without one uses (as librdkafka does).
pub const DEFAULT_PORT: u16 = 9092;

/// A parsed `kafka://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KafkaUrl {
    /// `host:port,host:port`, each with its port (9092 when the URL has none).
    pub servers: String,
    /// The topic.
    pub topic: String,
    /// The partition; `None`: every partition.
    pub partition: Option<i32>,
}

impl KafkaUrl {
    /// Parses `kafka://HOST[:PORT][,HOST[:PORT]…]/TOPIC[/PARTITION]`; `None` if `text` is not
    /// a `kafka://` URL at all.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_source::KafkaUrl;
    /// let u = KafkaUrl::parse("kafka://a,b:9093/events/3").unwrap().unwrap();
    /// assert_eq!((u.servers.as_str(), u.topic.as_str(), u.partition), ("a:9092,b:9093", "events", Some(3)));
    /// assert!(KafkaUrl::parse("events-0/").is_none());
    /// ```
    pub fn parse(text: &str) -> Option<Result<KafkaUrl, String>> {
        const EXPECTED: &str = "kafka://HOST[:PORT][,HOST[:PORT]...]/TOPIC[/PARTITION]";
        let rest = text.strip_prefix("kafka://")?;
        let Some((servers, path)) = rest.split_once('/') else {
            return Some(Err(bad_url(text, "no topic", EXPECTED)));
        };
        Some(
            parse_parts(text, servers, path, EXPECTED).and_then(|(servers, topic, partition)| {
                Ok(KafkaUrl {
                    servers,
                    topic: topic.ok_or_else(|| bad_url(text, "no topic", EXPECTED))?,
                    partition,
                })
            }),
        )
    }

    /// Parses a cluster URL, `kafka://HOST[:PORT][,HOST[:PORT]…][/TOPIC[/PARTITION]]` (the
    /// topic optional, a filter of `krec metadata` and `krec offsets`, and the partition
    /// optional after it); `None` if `text` is not a `kafka://` URL at all.
    ///
    /// # Examples
    ///
    /// ```
    /// use krecords_source::KafkaUrl;
    /// let u = KafkaUrl::parse_cluster("kafka://a,b:9093").unwrap().unwrap();
    /// assert_eq!((u.servers.as_str(), u.topic, u.partition), ("a:9092,b:9093", None, None));
    /// let u = KafkaUrl::parse_cluster("kafka://a/orders-*/").unwrap().unwrap();
    /// assert_eq!(u.topic.as_deref(), Some("orders-*"));
    /// let u = KafkaUrl::parse_cluster("kafka://a/orders/3").unwrap().unwrap();
    /// assert_eq!((u.topic.as_deref(), u.partition), (Some("orders"), Some(3)));
    /// let e = KafkaUrl::parse_cluster("kafka:///").unwrap().unwrap_err();
    /// assert_eq!(e, "kafka:///: no broker address \
    ///     (expected kafka://HOST[:PORT][,HOST[:PORT]...][/TOPIC[/PARTITION]])");
    /// let e = KafkaUrl::parse_cluster("kafka://b:99999").unwrap().unwrap_err();
    /// assert!(e.starts_with("kafka://b:99999: \"b:99999\" is not HOST[:PORT]"), "{e}");
    /// assert!(KafkaUrl::parse_cluster("/var/lib/kafka").is_none());
    /// ```
    pub fn parse_cluster(text: &str) -> Option<Result<ClusterUrl, String>> {
        const EXPECTED: &str = "kafka://HOST[:PORT][,HOST[:PORT]...][/TOPIC[/PARTITION]]";
        let rest = text.strip_prefix("kafka://")?;
        let (servers, path) = rest.split_once('/').unwrap_or((rest, ""));
        Some(
            parse_parts(text, servers, path, EXPECTED).map(|(servers, topic, partition)| {
                ClusterUrl {
                    servers,
                    topic,
                    partition,
                }
            }),
        )
    }

    /// `kafka://servers/topic` (without the partition).
    pub fn topic_name(&self) -> String {
        format!("kafka://{}/{}", self.servers, self.topic)
    }
}

/// A parsed cluster URL, `kafka://HOST[:PORT][,HOST[:PORT]…][/TOPIC[/PARTITION]]`
/// ([`KafkaUrl::parse_cluster`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterUrl {
    /// `host:port,host:port`, each with its port (9092 when the URL has none).
    pub servers: String,
    /// The topic (a glob for `krec metadata` and `krec offsets`), if any.
    pub topic: Option<String>,
    /// The partition, if any (only after a topic).
    pub partition: Option<i32>,
}

/// The error of the URL `text`: why, then the form `expected`.
fn bad_url(text: &str, why: &str, expected: &str) -> String {
    format!("{text}: {why} (expected {expected})")
}

/// The servers (each with its port), topic and partition of a `kafka://` URL `text`, split
/// into `servers` and the `path` after them (`TOPIC[/PARTITION]`, maybe empty); errors name
/// `text` as given, and the form `expected`.
fn parse_parts(
    text: &str,
    servers: &str,
    path: &str,
    expected: &str,
) -> Result<(String, Option<String>, Option<i32>), String> {
    let bad = |why: &str| bad_url(text, why, expected);
    if servers.is_empty() {
        return Err(bad("no broker address"));
    }
    let mut with_ports = Vec::new();
    for s in servers.split(',') {
        let server = match s.rsplit_once(':') {
            // An IPv6 address in brackets without a port: `[::1]`.
            Some((h, p)) if !h.is_empty() && !p.contains(']') => match p.parse::<u16>() {
                Ok(_) => s.to_owned(),
                Err(_) => return Err(bad(&format!("{s:?} is not HOST[:PORT]"))),
            },
            _ if !s.is_empty() => format!("{s}:{DEFAULT_PORT}"),
            _ => return Err(bad("an empty broker address")),
        };
        with_ports.push(server);
    }
    let path = path.strip_suffix('/').unwrap_or(path);
    let (topic, partition) = match path.split_once('/') {
        None => (path, None),
        Some((t, p)) => match p.parse::<i32>() {
            Ok(n) if n >= 0 => (t, Some(n)),
            _ => return Err(bad(&format!("{p:?} is not a partition number"))),
        },
    };
    if topic.is_empty() && partition.is_some() {
        return Err(bad("no topic"));
    }
    Ok((
        with_ports.join(","),
        (!topic.is_empty()).then(|| topic.to_owned()),
        partition,
    ))
}

/// Whether a NAME=VALUE line is a remote tier option (`RemoteOptions::is_remote_pair`; none
/// without the `remote` feature).
#[cfg(feature = "remote")]
fn is_remote_pair(pair: &str) -> bool {
    crate::RemoteOptions::is_remote_pair(pair)
}

#[cfg(not(feature = "remote"))]
fn is_remote_pair(_pair: &str) -> bool {
    false
}

/// The text of a client properties file (`-F`) with its line continuations joined
/// ([`krecords_client::join_continuations`]) and its remote tier lines
/// (`RemoteOptions::is_remote_pair`: `s3.*`,
/// `rsm.config.*`, ...) blanked, so that a broker's properties can be given as they are and
/// the line numbers of errors stay those of the file.
///
/// ```
/// let text = "security.protocol=SSL\ns3.region=eu-west-1\n# a comment";
/// assert_eq!(krecords_source::client_lines(text), "security.protocol=SSL\n\n# a comment");
/// let text = "s3.region=\\\n  eu-west-1\nclient.id=\\\n  me";
/// assert_eq!(krecords_source::client_lines(text), "\n\nclient.id=me");
/// ```
pub fn client_lines(text: &str) -> String {
    let joined = krecords_client::join_continuations(text);
    let lines: Vec<&str> = joined
        .lines()
        .map(|l| match is_remote_pair(l.trim_start()) {
            true => "",
            false => l,
        })
        .collect();
    lines.join("\n")
}

/// The partitions a command given the sources `paths` reads of them: those of the topics
/// matching one of the `--topic` globs `globs` (every topic when there is none), numbered
/// `partition` (`--partition`) if given ([`PartitionFilter::globs`]).
///
/// ```
/// use std::path::PathBuf;
/// use krecords_source::partition_filter;
/// let topics = ["orders*".to_owned()];
/// let f = partition_filter(&[PathBuf::from("/var/kafka/data")], &topics, None).unwrap();
/// assert!(f.matches_topic("orders-eu") && !f.matches_topic("payments"));
/// let f = partition_filter(&[PathBuf::from("kafka://b:9092")], &topics, None).unwrap();
/// assert!(f.matches_topic("orders-eu"));
/// let e = partition_filter(&[PathBuf::from("kafka://b/orders")], &topics, None).unwrap_err();
/// assert_eq!(e.to_string(), "kafka://b/orders: the topic is given twice, in the URL and \
///     with --topic: give it once");
/// let e = partition_filter(&[PathBuf::from("kafka://b/orders/1")], &[], Some(1)).unwrap_err();
/// assert!(e.to_string().contains("the partition is given twice"), "{e}");
/// ```
///
/// # Errors
///
/// [`Error::Usage`]: a glob that is not one; `globs` given with a `kafka://` source that names
/// its topic (`kafka://HOST/TOPIC`), or `partition` with one that names its partition: the
/// two would be taken together, the URL's topic filtered by the globs, which is never what
/// was meant.
///
/// [`PartitionFilter::globs`]: krecords_log::data_dir::PartitionFilter::globs
pub fn partition_filter(
    paths: &[PathBuf],
    globs: &[String],
    partition: Option<i32>,
) -> Result<krecords_log::data_dir::PartitionFilter, Error> {
    for text in paths.iter().filter_map(|p| p.to_str()) {
        let Some(Ok(url)) = KafkaUrl::parse_cluster(text) else {
            continue;
        };
        let twice = match (&url.topic, url.partition) {
            (Some(_), _) if !globs.is_empty() => {
                "the topic is given twice, in the URL and with --topic"
            }
            (_, Some(_)) if partition.is_some() => {
                "the partition is given twice, in the URL and with --partition"
            }
            _ => continue,
        };
        return Err(Error::Usage(format!("{text}: {twice}: give it once")));
    }
    krecords_log::data_dir::PartitionFilter::globs(globs, partition)
        .map_err(|e| Error::Usage(e.to_string()))
}

/// What a command given the sources `paths` says of the client properties it was given
/// (`-X NAME=VALUE` as `properties`; the `-F` files `files`, when one holds a client
/// property) when none of `paths` is a `kafka://` source: that they apply only to
/// `kafka://` sources, so they are ignored, unchecked. `None` when some source is a
/// `kafka://` one, or no client property is given (remote tier options, `s3.*` and the like,
/// apply to remote tier locations: not counted, nor comments and blank lines; a file that
/// cannot be read counts as one, said by whoever reads it).
///
/// ```
/// use std::path::PathBuf;
/// let local = [PathBuf::from("events-0")];
/// let w = krecords_source::unused_client_properties(&local, &["garbage".into()], &[]);
/// assert_eq!(w.unwrap(), "client properties apply only to kafka:// sources, and none is \
///     given: ignored, unchecked: -X garbage");
/// let remote = ["s3.region=y".to_owned()];
/// assert_eq!(krecords_source::unused_client_properties(&local, &remote, &[]), None);
/// let live = [PathBuf::from("kafka://b:9092/events")];
/// assert_eq!(krecords_source::unused_client_properties(&live, &["acks=all".into()], &[]), None);
/// let secret = ["sasl.password=hunter2".to_owned()];
/// let w = krecords_source::unused_client_properties(&local, &secret, &[]).unwrap();
/// assert!(w.ends_with("-X sasl.password=<redacted>"), "{w}");
/// ```
pub fn unused_client_properties(
    paths: &[PathBuf],
    properties: &[String],
    files: &[PathBuf],
) -> Option<String> {
    if paths
        .iter()
        .any(|p| matches!(SourceSpec::parse(p), Ok(SourceSpec::Kafka(_))))
    {
        return None;
    }
    let client = |l: &str| {
        let l = l.trim();
        !l.is_empty() && !l.starts_with('#') && !is_remote_pair(l)
    };
    let mut given: Vec<String> = properties
        .iter()
        .filter(|p| client(p))
        .map(|p| format!("-X {}", krecords_client::Secret::shown(p)))
        .collect();
    given.extend(
        files
            .iter()
            .filter(|f| {
                std::fs::read_to_string(f).map_or(true, |t| {
                    krecords_client::join_continuations(&t).lines().any(client)
                })
            })
            .map(|f| format!("-F {}", f.display())),
    );
    (!given.is_empty()).then(|| {
        format!(
            "client properties apply only to kafka:// sources, and none is given: ignored, \
             unchecked: {}",
            given.join(", ")
        )
    })
}

/// One source argument.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceSpec {
    /// `-`: standard input.
    Stdin,
    /// A file, a directory, or a glob pattern.
    Path(PathBuf),
    /// A live topic or partition.
    Kafka(KafkaUrl),
    /// A remote tier location: `s3://BUCKET/PREFIX`, `gs://`, `az://`, `file:///ROOT/PREFIX`
    /// (with the `remote` feature, on by default).
    #[cfg(feature = "remote")]
    Remote(krecords_remote::location::Location),
}

impl SourceSpec {
    /// What `arg` names.
    ///
    /// # Errors
    ///
    /// [`Error::Usage`] for a malformed `kafka://` or remote tier URL, and for any remote tier
    /// URL without the `remote` feature.
    pub fn parse(arg: &Path) -> Result<SourceSpec, Error> {
        if arg == Path::new("-") {
            return Ok(SourceSpec::Stdin);
        }
        #[cfg(not(feature = "remote"))]
        if let Some((scheme, _)) = arg.to_str().and_then(|a| a.split_once("://")) {
            if scheme != "kafka" {
                return Err(Error::Usage(format!(
                    "{}: a {scheme}:// location is read with the `remote` feature of \
                     krecords-source, which this build leaves out",
                    arg.display()
                )));
            }
        }
        #[cfg(feature = "remote")]
        if let Some(l) = arg
            .to_str()
            .and_then(krecords_remote::location::Location::parse)
        {
            return l
                .map(SourceSpec::Remote)
                .map_err(|e| Error::Usage(e.to_string()));
        }
        match arg.to_str().and_then(KafkaUrl::parse) {
            Some(url) => url.map(SourceSpec::Kafka).map_err(Error::Usage),
            None => Ok(SourceSpec::Path(arg.to_path_buf())),
        }
    }
}

/// What a directory is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum DirKind {
    /// A partition directory: `.log` segments of its own, or a `TOPIC-N` name.
    Partition,
    /// A broker's data directory (a `log.dirs` root: `meta.properties` or `TOPIC-N`
    /// partition directories), with its partitions.
    Root(Vec<PartitionDir>),
    /// Neither.
    Other,
}

/// Decides what a directory is: a partition directory when it holds `.log` files, else a
/// broker's root when it has `meta.properties` or partition directories, else a partition
/// directory (without segments yet) when its name is `TOPIC-N`.
///
/// # Errors
///
/// The directory cannot be listed.
pub fn classify_dir(dir: &Path) -> io::Result<DirKind> {
    if !dir_logs(dir)?.is_empty() {
        return Ok(DirKind::Partition);
    }
    if data_dir::is_data_dir(dir) {
        return Ok(DirKind::Root(data_dir::partition_dirs(dir)?));
    }
    let named = dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(data_dir::parse_partition_dir)
        .is_some();
    Ok(if named {
        DirKind::Partition
    } else {
        DirKind::Other
    })
}

/// The topic and partition a directory's name gives (`events-3/` → `("events", 3)`).
pub fn partition_of_dir(dir: &Path) -> Option<(String, i32)> {
    let name = dir.file_name()?.to_str()?;
    data_dir::parse_partition_dir(name).map(|(t, p)| (t.to_owned(), p))
}

/// The topic and partition of a local path as the sources layer names them: a directory's
/// from its name ([`partition_of_dir`]), a segment file's (`<base offset>.log`,
/// `.checkpoint`) from its directory's; `None` for any other file.
///
/// ```
/// use krecords_source::partition_of_path;
/// use std::path::Path;
/// let segment = Path::new("data/events-3/00000000000000000000.log");
/// assert_eq!(partition_of_path(segment), Some(("events".into(), 3)));
/// assert_eq!(partition_of_path(Path::new("data/events-3/x.bin")), None);
/// ```
pub fn partition_of_path(path: &Path) -> Option<(String, i32)> {
    if path.is_dir() {
        return partition_of_dir(path);
    }
    krecords_log::check::segment_base(path)?;
    partition_of_dir(path.parent()?)
}

/// The `.log` files directly in `dir`, in name (so offset) order.
///
/// # Errors
///
/// The directory cannot be listed.
pub fn dir_logs(dir: &Path) -> io::Result<Vec<PathBuf>> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_file()
                && p.file_name()
                    .and_then(|n| n.to_str())
                    .is_some_and(|n| n.ends_with(LOG_SUFFIX))
        })
        .collect();
    logs.sort();
    Ok(logs)
}

/// A group of local files that make one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LocalPartition {
    /// The partition directory, when the whole directory was named.
    pub dir: Option<PathBuf>,
    /// Its files, in offset order.
    pub files: Vec<PathBuf>,
    /// Topic and partition, from the directory's name.
    pub id: Option<(String, i32)>,
}

/// Expands path arguments (not `-` nor `kafka://`) into local partitions: a partition directory
/// is one; a broker's root gives each of its partitions that has segments; a file is one, and
/// consecutive segment files of one partition directory are one together; a path that does not
/// exist and contains `*`, `?` or `[` is a glob pattern, replaced by its matches in sorted order
/// (`*` and `?` do not match `/` or a leading dot), each expanded in turn.
///
/// # Errors
///
/// A pattern that matches nothing, a directory with no segments anywhere, a listing that fails.
pub(crate) fn expand_local(paths: &[PathBuf]) -> io::Result<Vec<LocalPartition>> {
    let mut out: Vec<LocalPartition> = Vec::new();
    for p in paths {
        match glob_matches(p)? {
            Some(matches) => {
                for m in matches {
                    push_path(&mut out, m)?;
                }
            }
            None => push_path(&mut out, p.clone())?,
        }
    }
    Ok(out)
}

fn push_path(out: &mut Vec<LocalPartition>, p: PathBuf) -> io::Result<()> {
    if !p.is_dir() {
        // A segment file of a partition directory joins the previous one of the same directory.
        let parent = p
            .parent()
            .filter(|_| krecords_log::check::segment_base(&p).is_some());
        let id = partition_of_path(&p);
        if let Some(last) = out.last_mut() {
            let same = id.is_some()
                && last.dir.is_none()
                && last.id == id
                && last.files.last().and_then(|f| f.parent()) == parent;
            if same {
                last.files.push(p);
                return Ok(());
            }
        }
        out.push(LocalPartition {
            dir: None,
            files: vec![p],
            id,
        });
        return Ok(());
    }
    // `otherwise`: what the directory is, when it holds no orphaned index files either.
    let no_segments = |otherwise: &str| {
        let why = krecords_log::files::orphaned_indexes_note(&p)
            .map_or_else(|| otherwise.to_owned(), |n| format!("only {n}"));
        // A usage error, not an I/O one (`classify_io`): nothing failed to read.
        io::Error::new(
            io::ErrorKind::NotFound,
            crate::error::NoSegments(format!("{}: no .log segments here ({why})", p.display())),
        )
    };
    match classify_dir(&p).map_err(named(&p))? {
        DirKind::Partition => {
            let files = dir_logs(&p).map_err(named(&p))?;
            if files.is_empty() {
                return Err(no_segments("an empty partition directory"));
            }
            out.push(LocalPartition {
                id: partition_of_dir(&p),
                dir: Some(p),
                files,
            });
        }
        DirKind::Root(parts) => {
            let mut found = false;
            for part in parts {
                let files = dir_logs(&part.path).map_err(named(&part.path))?;
                if files.is_empty() {
                    continue;
                }
                found = true;
                out.push(LocalPartition {
                    id: Some((part.topic, part.partition)),
                    dir: Some(part.path),
                    files,
                });
            }
            if !found {
                return Err(no_segments(
                    "a broker's data directory whose partition directories are all empty",
                ));
            }
        }
        DirKind::Other => {
            return Err(no_segments(
                "neither a partition directory nor a broker's data directory with partitions",
            ))
        }
    }
    Ok(())
}

/// An I/O error about `path` that names it.
fn named(path: &Path) -> impl FnOnce(io::Error) -> io::Error + '_ {
    move |e| io::Error::new(e.kind(), format!("{}: {e}", path.display()))
}

/// Replaces each local glob pattern among `paths` (a path that does not exist and contains
/// `*`, `?` or `[`; not `-`, a `kafka://` or a remote tier URL) by its matches in sorted order,
/// as the sources layer expands them; the other arguments are kept as given. For a command
/// that takes each argument on its own (`krec verify`), so that a quoted pattern is every file
/// it matches, not the first.
///
/// # Errors
///
/// A pattern that is not valid or matches nothing.
///
/// # Examples
///
/// ```
/// use krecords_source::expand_globs;
/// use std::path::PathBuf;
///
/// let dir = tempfile::tempdir().unwrap();
/// for name in ["b.log", "a.log", "c.txt"] {
///     std::fs::write(dir.path().join(name), b"").unwrap();
/// }
/// let pattern = dir.path().join("*.log");
/// let got = expand_globs(&[pattern, PathBuf::from("-")]).unwrap();
/// assert_eq!(got, [dir.path().join("a.log"), dir.path().join("b.log"), PathBuf::from("-")]);
/// assert!(expand_globs(&[dir.path().join("*.none")]).is_err());
/// ```
pub fn expand_globs(paths: &[PathBuf]) -> io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    for p in paths {
        let local = matches!(SourceSpec::parse(p), Ok(SourceSpec::Path(_)));
        match local.then(|| glob_matches(p)).transpose()?.flatten() {
            Some(matches) => out.extend(matches),
            None => out.push(p.clone()),
        }
    }
    Ok(out)
}

/// The matches of `p` when it is a glob pattern rather than an existing path.
fn glob_matches(p: &Path) -> io::Result<Option<Vec<PathBuf>>> {
    let Some(text) = p.to_str() else {
        return Ok(None);
    };
    if p == Path::new("-") || !text.contains(['*', '?', '[']) || p.exists() {
        return Ok(None);
    }
    let options = glob::MatchOptions {
        case_sensitive: true,
        require_literal_separator: true,
        require_literal_leading_dot: true,
    };
    let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    let paths = glob::glob_with(text, options)
        .map_err(|e| invalid(format!("invalid pattern {text:?}: {e}")))?;
    let mut matches = Vec::new();
    for m in paths {
        matches.push(m.map_err(io::Error::from)?);
    }
    if matches.is_empty() {
        return Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("no file matches {text:?}"),
        ));
    }
    matches.sort();
    Ok(Some(matches))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        assert_eq!(
            KafkaUrl::parse("kafka://a:1,b:2/t/3"),
            Some(Ok(KafkaUrl {
                servers: "a:1,b:2".into(),
                topic: "t".into(),
                partition: Some(3)
            }))
        );
        assert_eq!(
            KafkaUrl::parse("kafka://a:1/my.topic").map(|u| u.map(|u| u.partition)),
            Some(Ok(None))
        );
        assert_eq!(
            KafkaUrl::parse("kafka://a/t").map(|u| u.map(|u| u.servers)),
            Some(Ok("a:9092".into()))
        );
        assert!(KafkaUrl::parse("topic-0/").is_none());
        assert!(matches!(KafkaUrl::parse("kafka://a:x/t"), Some(Err(_))));
        assert!(matches!(KafkaUrl::parse("kafka://a:1/"), Some(Err(_))));
        assert!(matches!(KafkaUrl::parse("kafka://a:1/t/x"), Some(Err(_))));
        assert!(matches!(KafkaUrl::parse("kafka://a:1"), Some(Err(_))));
        assert!(matches!(KafkaUrl::parse("kafka:///t"), Some(Err(_))));
    }

    #[test]
    fn directories_are_classified_once() {
        let root = tempfile::tempdir().unwrap();
        let part = root.path().join("events-3");
        std::fs::create_dir(&part).unwrap();
        assert_eq!(classify_dir(&part).unwrap(), DirKind::Partition);
        assert!(matches!(classify_dir(root.path()).unwrap(), DirKind::Root(p) if p.len() == 1));
        let other = root.path().join("other");
        std::fs::create_dir(&other).unwrap();
        assert_eq!(classify_dir(&other).unwrap(), DirKind::Other);
        std::fs::write(other.join("x.log"), b"").unwrap();
        assert_eq!(classify_dir(&other).unwrap(), DirKind::Partition);
        assert_eq!(partition_of_dir(&part), Some(("events".into(), 3)));
    }

    #[test]
    fn remote_locations_need_the_remote_feature() {
        let parsed = SourceSpec::parse(Path::new("s3://bucket/prefix"));
        #[cfg(feature = "remote")]
        assert!(matches!(parsed, Ok(SourceSpec::Remote(_))), "{parsed:?}");
        #[cfg(not(feature = "remote"))]
        match parsed {
            Err(Error::Usage(m)) => assert!(m.contains("`remote` feature"), "{m}"),
            other => panic!("{other:?}"),
        }
        // kafka:// and paths do not depend on it.
        assert!(matches!(
            SourceSpec::parse(Path::new("kafka://a:1/t")),
            Ok(SourceSpec::Kafka(_))
        ));
        assert!(matches!(
            SourceSpec::parse(Path::new("dir/t-0")),
            Ok(SourceSpec::Path(_))
        ));
    }
}
