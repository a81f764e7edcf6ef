//! Apache Kafka's Java reader, run as a child process on the same bytes (`JavaBench` in the
//! interop Maven project). Missing Java or an unbuilt project is a skip, never a failure.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::measure::{Plan, Timing};
use crate::workload::Digest;

/// Where the Maven project's build output is.
#[derive(Debug, Clone)]
pub(crate) struct JavaSetup {
    /// `interop/java/target`.
    target: PathBuf,
}

/// What a JavaBench run reported.
#[derive(Debug, Clone)]
pub(crate) struct JavaRun {
    pub timing: Timing,
    pub digest: Digest,
}

impl JavaSetup {
    /// Checks for `java` and the built classes under `repo_root`; `Err` says why Java is skipped.
    ///
    /// # Errors
    ///
    /// The reason for skipping, as text.
    pub fn find(repo_root: &Path) -> Result<Self, String> {
        let target = repo_root.join("interop/java/target");
        let class = target.join("classes/dev/krecords/interop/JavaBench.class");
        if !class.is_file() {
            return Err(format!(
                "{} missing: run `mvn -q -B -f interop/java/pom.xml package -DskipTests`",
                class.display()
            ));
        }
        let has_clients = std::fs::read_dir(target.join("lib"))
            .map(|d| {
                d.filter_map(|e| e.ok()).any(|e| {
                    e.file_name()
                        .to_string_lossy()
                        .starts_with("kafka-clients-")
                })
            })
            .unwrap_or(false);
        if !has_clients {
            return Err("interop/java/target/lib has no kafka-clients jar".into());
        }
        match Command::new("java").arg("-version").output() {
            Ok(o) if o.status.success() => Ok(JavaSetup { target }),
            Ok(o) => Err(format!(
                "`java -version` failed: {}",
                String::from_utf8_lossy(&o.stderr).trim()
            )),
            Err(e) => Err(format!("no `java` on PATH: {e}")),
        }
    }

    /// `java -version`'s first line.
    pub fn version() -> Option<String> {
        let o = Command::new("java").arg("-version").output().ok()?;
        String::from_utf8_lossy(&o.stderr)
            .lines()
            .next()
            .map(str::to_owned)
    }

    /// Writes `bytes` to a temporary file and runs JavaBench on it with `plan`'s runs and
    /// minimum run time, after `warmup_secs` of JIT warm-up.
    ///
    /// # Errors
    ///
    /// A failed run or output without a result line, as text.
    pub fn run(&self, bytes: &[u8], plan: &Plan, warmup_secs: f64) -> Result<JavaRun, String> {
        let mut file = tempfile::Builder::new()
            .prefix("krecords-compare-")
            .suffix(".log")
            .tempfile()
            .map_err(|e| e.to_string())?;
        file.write_all(bytes).map_err(|e| e.to_string())?;
        file.flush().map_err(|e| e.to_string())?;
        let classpath = format!(
            "{}:{}",
            self.target.join("lib/*").display(),
            self.target.join("classes").display()
        );
        let output = Command::new("java")
            .arg("-cp")
            .arg(classpath)
            .arg("dev.krecords.interop.JavaBench")
            .arg(file.path())
            .arg(plan.runs.max(1).to_string())
            .arg(plan.min_run.as_secs_f64().to_string())
            .arg(warmup_secs.to_string())
            .output()
            .map_err(|e| format!("cannot start java: {e}"))?;
        let stdout = String::from_utf8_lossy(&output.stdout);
        if !output.status.success() {
            let stderr = String::from_utf8_lossy(&output.stderr);
            let last = stderr
                .lines()
                .find(|l| l.contains("Exception"))
                .unwrap_or("")
                .trim();
            return Err(format!("JavaBench exited with {}: {last}", output.status));
        }
        parse(&stdout)
    }
}

/// Reads JavaBench's `run ...` and `result ...` lines.
fn parse(stdout: &str) -> Result<JavaRun, String> {
    let field = |line: &str, key: &str| -> Option<String> {
        line.split_whitespace().find_map(|kv| {
            kv.strip_prefix(key)
                .and_then(|v| v.strip_prefix('='))
                .map(str::to_owned)
        })
    };
    let runs: Vec<f64> = stdout
        .lines()
        .filter(|l| l.starts_with("run "))
        .filter_map(|l| field(l, "secs_per_pass")?.parse().ok())
        .collect();
    let result = stdout
        .lines()
        .find(|l| l.starts_with("result "))
        .ok_or_else(|| "JavaBench printed no result line".to_string())?;
    let num = |key: &str| -> Result<u64, String> {
        field(result, key)
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| format!("JavaBench result has no {key}"))
    };
    Ok(JavaRun {
        timing: Timing::from_runs(runs),
        digest: Digest {
            records: num("records")?,
            sum: num("checksum")?,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_javabench_output() {
        let out = "run index=0 passes=3 secs_per_pass=0.5\nrun index=1 passes=3 secs_per_pass=0.25\n\
                   run index=2 passes=3 secs_per_pass=0.75\n\
                   result bytes=10 records=7 checksum=18446744073709551615 secs_per_pass=0.5 min=0.25 max=0.75 mb_s=1 records_s=2\n";
        let r = parse(out).unwrap();
        assert_eq!(
            r.digest,
            Digest {
                records: 7,
                sum: u64::MAX
            }
        );
        assert_eq!(
            (r.timing.median, r.timing.min, r.timing.max),
            (0.5, 0.25, 0.75)
        );
        assert!(parse("run index=0 secs_per_pass=1\n").is_err());
    }
}
