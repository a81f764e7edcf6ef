//! [`KrecTable`]: a krec source as a DataFusion table, and the execution plan that scans it.

use crate::pushdown::Pushdown;
use crate::read::{scan_partition, PartitionRead};
use crate::{ScanCounters, TableOptions};
use async_trait::async_trait;
use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::catalog::{Session, TableProvider};
use datafusion::common::{DataFusionError, Result};
use datafusion::datasource::TableType;
use datafusion::execution::TaskContext;
use datafusion::logical_expr::{Expr, TableProviderFilterPushDown};
use datafusion::physical_expr::EquivalenceProperties;
use datafusion::physical_plan::execution_plan::{Boundedness, EmissionType};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::{
    DisplayAs, DisplayFormatType, ExecutionPlan, Partitioning, PlanProperties,
    SendableRecordBatchStream,
};
use krecords_arrow::{full_schema, Column, Options};
use krecords_source::{ClientConfig, Sources};
use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;

/// A krec source (files, partition directories, a `log.dirs` root, `kafka://` topics or
/// partitions) as a DataFusion table of krecords-arrow's fixed schema.
///
/// Scans build only the columns a query uses (a `count(*)` builds none), and filters on
/// `partition`, `offset` and `timestamp` are pushed down (`Inexact`): partitions a filter
/// excludes are not opened, an offset range starts and ends the read where it says (a
/// partition directory's offset index seeks to the segment that holds the start), and a lower
/// time bound starts it at the first offset at or after that time (the time index; ListOffsets
/// on a live topic). An upper time bound is not turned into an end offset: Kafka timestamps
/// need not grow with offsets, so a later record may still be earlier.
///
/// Each partition is one output partition of the scan, read on its own thread with at most
/// two record batches waiting, so memory stays bounded whatever the source's size. A partition
/// without a known topic (a bare segment file) has topic `""` and partition `-1`.
#[derive(Debug)]
pub struct KrecTable {
    source: Arc<SourceArgs>,
    options: TableOptions,
    schema: SchemaRef,
    counters: Arc<ScanCounters>,
}

/// What a scan needs to open the sources again on its own threads (the sources layer's
/// handles stay on the thread that opened them).
#[derive(Debug)]
struct SourceArgs {
    args: Vec<PathBuf>,
    /// The client configuration, when a `kafka://` source asked for it.
    config: Option<ClientConfig>,
    /// Topic and partition number of each partition, in [`Sources::open`]'s order.
    identities: Vec<(String, i32)>,
    /// The options of remote tier locations.
    remote: krecords_source::RemoteOptions,
}

impl SourceArgs {
    fn open(&self) -> Result<Sources, krecords_source::Error> {
        let sources = Sources::open_with(
            &self.args,
            &mut || {
                self.config.clone().ok_or_else(|| {
                    krecords_source::Error::Usage("no client configuration for kafka://".into())
                })
            },
            &mut || Ok(self.remote.clone()),
        )?;
        if sources.partitions.len() != self.identities.len() {
            return Err(krecords_source::Error::Usage(format!(
                "the sources changed while the query ran: {} partitions, then {}",
                self.identities.len(),
                sources.partitions.len()
            )));
        }
        Ok(sources)
    }
}

impl KrecTable {
    /// Opens `args` as [`Sources::open`] does (`config` is asked for once, for `kafka://`
    /// sources only) and makes a table of them. Each scan opens them again on its own threads.
    ///
    /// # Errors
    ///
    /// The errors of [`Sources::open`].
    pub fn open(
        args: &[PathBuf],
        options: TableOptions,
        config: &mut dyn FnMut() -> Result<ClientConfig, krecords_source::Error>,
    ) -> Result<KrecTable, krecords_source::Error> {
        KrecTable::open_with(
            args,
            options,
            config,
            krecords_source::RemoteOptions::default(),
        )
    }

    /// [`KrecTable::open`], remote tier locations opened with `remote` (endpoint,
    /// credentials, private keys).
    ///
    /// # Errors
    ///
    /// The errors of [`Sources::open_with`].
    pub fn open_with(
        args: &[PathBuf],
        options: TableOptions,
        config: &mut dyn FnMut() -> Result<ClientConfig, krecords_source::Error>,
        remote: krecords_source::RemoteOptions,
    ) -> Result<KrecTable, krecords_source::Error> {
        let mut asked = None;
        let sources = Sources::open_with(
            args,
            &mut || {
                let c = config()?;
                asked = Some(c.clone());
                Ok(c)
            },
            &mut || Ok(remote.clone()),
        )?;
        let identities = sources
            .partitions
            .iter()
            .map(|p| {
                (
                    p.topic.clone().unwrap_or_default(),
                    p.partition.unwrap_or(-1),
                )
            })
            .collect();
        let schema = Arc::new(full_schema(options.key_format, options.value_format));
        // A partition named more than once is read once: said with the scans' notes.
        let counters: Arc<ScanCounters> = Arc::default();
        counters.add_notes(sources.notes());
        Ok(KrecTable {
            source: Arc::new(SourceArgs {
                args: args.to_vec(),
                config: asked,
                identities,
                remote,
            }),
            options,
            schema,
            counters,
        })
    }

    /// What the scans of this table have read so far (partitions opened, files, entries), and
    /// the values the `key`/`value` string formats could not hold.
    pub fn counters(&self) -> Arc<ScanCounters> {
        Arc::clone(&self.counters)
    }
}

#[async_trait]
impl TableProvider for KrecTable {
    fn schema(&self) -> SchemaRef {
        Arc::clone(&self.schema)
    }

    fn table_type(&self) -> TableType {
        TableType::Base
    }

    fn supports_filters_pushdown(
        &self,
        filters: &[&Expr],
    ) -> Result<Vec<TableProviderFilterPushDown>> {
        Ok(filters
            .iter()
            .map(|f| {
                if Pushdown::understands(f) {
                    TableProviderFilterPushDown::Inexact
                } else {
                    TableProviderFilterPushDown::Unsupported
                }
            })
            .collect())
    }

    async fn scan(
        &self,
        _state: &dyn Session,
        projection: Option<&Vec<usize>>,
        filters: &[Expr],
        _limit: Option<usize>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        let columns: Vec<Column> = match projection {
            None => Column::ALL.to_vec(),
            Some(p) => p
                .iter()
                .map(|&i| {
                    Column::ALL.get(i).copied().ok_or_else(|| {
                        DataFusionError::Internal(format!("no column {i} in a krec table"))
                    })
                })
                .collect::<Result<_>>()?,
        };
        let schema = Arc::new(
            self.schema
                .project(projection.map_or(&(0..Column::ALL.len()).collect::<Vec<_>>(), |p| p))?,
        );
        let pushdown = Pushdown::of(filters);
        let partitions: Vec<usize> = (0..self.source.identities.len())
            .filter(|&i| {
                self.source
                    .identities
                    .get(i)
                    .is_some_and(|(_, n)| pushdown.wants_partition(*n))
            })
            .collect();
        let arrow = Options {
            columns,
            key_format: self.options.key_format,
            value_format: self.options.value_format,
            max_rows: self.options.batch_rows.max(1),
            ..Options::default()
        };
        let properties = Arc::new(PlanProperties::new(
            EquivalenceProperties::new(Arc::clone(&schema)),
            Partitioning::UnknownPartitioning(partitions.len().max(1)),
            EmissionType::Incremental,
            Boundedness::Bounded,
        ));
        Ok(Arc::new(KrecScanExec {
            table: KrecTableRef {
                source: Arc::clone(&self.source),
                isolation: self.options.isolation,
                counters: Arc::clone(&self.counters),
            },
            schema,
            partitions,
            pushdown,
            arrow,
            properties,
        }))
    }
}

/// What a scan keeps of its table.
#[derive(Debug, Clone)]
struct KrecTableRef {
    source: Arc<SourceArgs>,
    isolation: krecords_source::IsolationLevel,
    counters: Arc<ScanCounters>,
}

/// The scan of a [`KrecTable`]: one output partition per source partition left after the
/// partition filters.
#[derive(Debug)]
struct KrecScanExec {
    table: KrecTableRef,
    schema: SchemaRef,
    /// Source partition indexes, one per output partition.
    partitions: Vec<usize>,
    pushdown: Pushdown,
    arrow: Options,
    properties: Arc<PlanProperties>,
}

impl DisplayAs for KrecScanExec {
    fn fmt_as(&self, _t: DisplayFormatType, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.arrow.columns.iter().map(|c| c.name()).collect();
        write!(
            f,
            "KrecScanExec: partitions={}, columns=[{}], offsets={:?}, timestamps={:?}",
            self.partitions.len(),
            names.join(", "),
            self.pushdown.offsets,
            self.pushdown.timestamps
        )
    }
}

impl ExecutionPlan for KrecScanExec {
    fn name(&self) -> &str {
        "KrecScanExec"
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        &self.properties
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        Vec::new()
    }

    fn with_new_children(
        self: Arc<Self>,
        children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.is_empty() {
            Ok(self)
        } else {
            Err(DataFusionError::Internal(
                "KrecScanExec has no children".into(),
            ))
        }
    }

    fn execute(
        &self,
        partition: usize,
        _context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let schema = Arc::clone(&self.schema);
        let (tx, rx) = tokio::sync::mpsc::channel::<Result<RecordBatch>>(2);
        if let Some(&index) = self.partitions.get(partition) {
            let table = self.table.clone();
            let pushdown = self.pushdown.clone();
            let arrow = self.arrow.clone();
            let out_schema = Arc::clone(&schema);
            std::thread::Builder::new()
                .name(format!("krec-scan-{index}"))
                .spawn(move || {
                    let sources = match table.source.open() {
                        Ok(s) => s,
                        Err(e) => {
                            let _ = tx.blocking_send(Err(DataFusionError::External(Box::new(e))));
                            return;
                        }
                    };
                    let read = PartitionRead {
                        sources: &sources,
                        index,
                        isolation: table.isolation,
                        offsets: pushdown.offsets,
                        min_timestamp: pushdown.timestamps.lo,
                        arrow,
                        counters: &table.counters,
                    };
                    let mut sink = |batch: RecordBatch| {
                        // A batch of no columns carries its row count only (a `count(*)`).
                        let batch = if out_schema.fields().is_empty() {
                            Ok(batch)
                        } else {
                            batch
                                .with_schema(Arc::clone(&out_schema))
                                .map_err(Into::into)
                        };
                        tx.blocking_send(batch).is_ok()
                    };
                    if let Err(e) = scan_partition(read, &mut sink) {
                        let _ = tx.blocking_send(Err(DataFusionError::External(Box::new(e))));
                    }
                })
                .map_err(|e| DataFusionError::External(Box::new(e)))?;
        }
        let stream = futures::stream::unfold(rx, |mut rx| async move {
            rx.recv().await.map(|item| (item, rx))
        });
        Ok(Box::pin(RecordBatchStreamAdapter::new(schema, stream)))
    }
}
