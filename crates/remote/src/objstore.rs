//! [`Storage`] over the `object_store` crate (S3, GCS, Azure, a local directory, memory):
//! async underneath, synchronous to its callers through a small tokio runtime of its own.
//!
//! Every request is bounded: a per-request timeout and a bounded number of retries with
//! backoff (object_store's `RetryConfig`), and an overall deadline per call on top, so a
//! server that answers 500 or stalls yields a clear error in bounded time.

use std::ops::Range;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use futures::TryStreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{ObjectStore, ObjectStoreExt};
use tokio::runtime::Runtime;

use crate::error::{Error, Result};
use crate::storage::{ObjectMeta, Storage};

/// How long requests may take and how often they are retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timeouts {
    /// One HTTP request, connection included: 30 s by default.
    pub request: Duration,
    /// Connecting: 10 s by default.
    pub connect: Duration,
    /// Retries of a failed request (5xx, connection errors, timeouts): 3 by default.
    pub retries: usize,
}

impl Default for Timeouts {
    fn default() -> Timeouts {
        Timeouts {
            request: Duration::from_secs(30),
            connect: Duration::from_secs(10),
            retries: 3,
        }
    }
}

impl Timeouts {
    /// The deadline of one storage call: every attempt timing out, plus backoff.
    pub fn deadline(&self) -> Duration {
        let attempts = u32::try_from(self.retries.saturating_add(1)).unwrap_or(u32::MAX);
        self.request
            .saturating_add(self.connect)
            .saturating_mul(attempts)
            .saturating_add(Duration::from_secs(5))
    }

    /// object_store's retry configuration for these bounds.
    pub fn retry_config(&self) -> object_store::RetryConfig {
        object_store::RetryConfig {
            backoff: object_store::BackoffConfig {
                init_backoff: Duration::from_millis(100),
                max_backoff: Duration::from_secs(2),
                base: 2.0,
            },
            max_retries: self.retries,
            retry_timeout: self.deadline(),
        }
    }

    /// object_store's client options for these bounds.
    pub fn client_options(&self) -> object_store::ClientOptions {
        object_store::ClientOptions::new()
            .with_timeout(self.request)
            .with_connect_timeout(self.connect)
    }
}

/// An object store read synchronously.
pub struct ObjectStoreStorage {
    store: Arc<dyn ObjectStore>,
    rt: Runtime,
    deadline: Duration,
    name: String,
}

impl std::fmt::Debug for ObjectStoreStorage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ObjectStoreStorage")
            .field("store", &self.name)
            .field("deadline", &self.deadline)
            .finish_non_exhaustive()
    }
}

impl ObjectStoreStorage {
    /// Reads `store` (named `name` in errors, e.g. `s3://bucket`); each call gives up after
    /// `timeouts.deadline()`.
    ///
    /// # Errors
    ///
    /// [`Error::Io`] when the runtime cannot start.
    pub fn new(
        store: Arc<dyn ObjectStore>,
        name: impl Into<String>,
        timeouts: Timeouts,
    ) -> Result<ObjectStoreStorage> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .thread_name("krec-remote")
            .enable_all()
            .build()
            .map_err(|source| Error::Io {
                op: "start the object store runtime",
                path: PathBuf::new(),
                source,
            })?;
        Ok(ObjectStoreStorage {
            store,
            rt,
            deadline: timeouts.deadline(),
            name: name.into(),
        })
    }

    /// Runs `f` on the runtime, bounded by the deadline; errors name `key`. The calling
    /// thread waits on a channel, so a caller that is itself inside an async runtime (a
    /// DataFusion scan) does not nest runtimes.
    fn run<T: Send + 'static>(
        &self,
        op: &'static str,
        key: &str,
        f: impl std::future::Future<Output = object_store::Result<T>> + Send + 'static,
    ) -> Result<T> {
        let deadline = self.deadline;
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        self.rt.spawn(async move {
            let _ = tx.send(tokio::time::timeout(deadline, f).await);
        });
        let out = rx
            .recv()
            .map_err(|_| self.io(op, key, "the request task ended without an answer".into()))?;
        match out {
            Ok(Ok(v)) => Ok(v),
            Ok(Err(object_store::Error::NotFound { .. })) => Err(Error::NotFound {
                key: key.to_string(),
            }),
            Ok(Err(e)) => Err(self.io(op, key, e.to_string())),
            Err(_) => Err(self.io(
                op,
                key,
                format!("no answer within {} s", deadline.as_secs()),
            )),
        }
    }

    fn io(&self, op: &'static str, key: &str, message: String) -> Error {
        Error::Io {
            op,
            path: PathBuf::from(format!("{}/{key}", self.name)),
            source: std::io::Error::other(message),
        }
    }
}

impl Storage for ObjectStoreStorage {
    fn get(&self, key: &str, limit: u64) -> Result<Bytes> {
        let path = ObjectPath::from(key);
        let store = Arc::clone(&self.store);
        let got = self.run("read", key, async move {
            let r = store.get(&path).await?;
            if r.meta.size > limit {
                return Ok(Err(r.meta.size));
            }
            // The body is read by frames, refused as soon as it passes the limit.
            let mut body = r.into_stream();
            let mut out = Vec::new();
            while let Some(frame) = body.try_next().await? {
                out.extend_from_slice(&frame);
                if u64::try_from(out.len()).unwrap_or(u64::MAX) > limit {
                    return Ok(Err(u64::try_from(out.len()).unwrap_or(u64::MAX)));
                }
            }
            Ok(Ok(Bytes::from(out)))
        })?;
        got.map_err(|size| Error::TooLarge {
            key: key.to_string(),
            size,
            limit,
        })
    }

    fn get_range(&self, key: &str, range: Range<u64>) -> Result<Bytes> {
        let needed = range.end.saturating_sub(range.start);
        if needed == 0 {
            return Ok(Bytes::new());
        }
        let path = ObjectPath::from(key);
        let store = Arc::clone(&self.store);
        let r = range.clone();
        let got = self.run("read", key, async move {
            let meta = store.head(&path).await?;
            if meta.size < r.end {
                return Ok(Err(meta.size));
            }
            store.get_range(&path, r).await.map(Ok)
        })?;
        match got {
            Ok(bytes) if u64::try_from(bytes.len()).unwrap_or(u64::MAX) == needed => Ok(bytes),
            Ok(bytes) => Err(Error::Truncated {
                key: key.to_string(),
                at: range.start,
                needed,
                available: u64::try_from(bytes.len()).unwrap_or(u64::MAX),
            }),
            Err(size) => Err(Error::Truncated {
                key: key.to_string(),
                at: range.start,
                needed,
                available: size.saturating_sub(range.start),
            }),
        }
    }

    fn size(&self, key: &str) -> Result<u64> {
        let path = ObjectPath::from(key);
        let store = Arc::clone(&self.store);
        self.run("stat", key, async move { store.head(&path).await })
            .map(|m| m.size)
    }

    fn list(&self, prefix: &str) -> Result<Vec<ObjectMeta>> {
        // object_store lists by whole path elements: list the deepest directory the prefix
        // names, then keep the keys with the whole prefix.
        let dir = prefix
            .rfind('/')
            .and_then(|i| prefix.get(..i))
            .unwrap_or("");
        let dir_path = (!dir.is_empty()).then(|| ObjectPath::from(dir));
        let store = Arc::clone(&self.store);
        let metas: Vec<object_store::ObjectMeta> = self.run("list", prefix, async move {
            store.list(dir_path.as_ref()).try_collect().await
        })?;
        let mut out: Vec<ObjectMeta> = metas
            .into_iter()
            .map(|m| ObjectMeta {
                key: m.location.to_string(),
                size: m.size,
            })
            .filter(|m| m.key.starts_with(prefix))
            .collect();
        out.sort();
        Ok(out)
    }
}
