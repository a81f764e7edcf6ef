//! How a subcommand ends: [`Outcome`] on success, [`Failure`] when it stops, and [`Context`] to
//! name what was being done when an I/O error happened. The exit codes (0 success, 1 the data
//! has a problem, 2 usage or I/O error) are [`krecords_source::ErrorClass`]'s.

use std::io;

/// How a subcommand ended.
#[derive(Debug)]
pub enum Outcome {
    /// Everything was fine.
    Ok,
    /// The data has a problem (exit 1); details were already printed.
    DataProblem,
    /// Some of the input could not be read (exit 2), the rest was answered; details were
    /// already printed.
    Unreadable,
}

impl Outcome {
    /// The outcome of a command that answered what it could, `unanswered` being the worst
    /// class of what it could not ([`krecords_source::ErrorClass`]).
    pub fn answered_but(unanswered: Option<krecords_source::ErrorClass>) -> Outcome {
        match unanswered {
            None => Outcome::Ok,
            Some(krecords_source::ErrorClass::Data) => Outcome::DataProblem,
            Some(_) => Outcome::Unreadable,
        }
    }
}

/// A failure that stops a subcommand: usage or I/O (exit 2), or a data problem (exit 1).
#[derive(Debug)]
pub enum Failure {
    /// Bad arguments or input that is not data (exit 2).
    Usage(String),
    /// An I/O error (exit 2); a broken pipe on stdout exits 0.
    Io(io::Error, String),
    /// The data is invalid (exit 1).
    Data(String),
}

impl Failure {
    /// The kind of failure, which decides the exit code (the sources layer's one mapping).
    pub fn class(&self) -> krecords_source::ErrorClass {
        use krecords_source::ErrorClass;
        match self {
            Failure::Usage(_) => ErrorClass::Usage,
            Failure::Io(e, _) => krecords_source::classify_io(e),
            Failure::Data(_) => ErrorClass::Data,
        }
    }
}

impl std::fmt::Display for Failure {
    /// The message after `krec: `: what was being done and the error, or the error alone where
    /// it names its place itself (a log or live error a reader passed on, or no description).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Io(e, what) if what.is_empty() || krecords_source::names_its_place(e) => {
                write!(f, "{e}")
            }
            Failure::Io(e, what) => write!(f, "{what}: {e}"),
            Failure::Usage(m) | Failure::Data(m) => f.write_str(m),
        }
    }
}

impl From<io::Error> for Failure {
    fn from(e: io::Error) -> Self {
        Failure::Io(e, String::new())
    }
}

/// Writes `value` as one line of JSON.
pub fn print_json(out: &mut impl io::Write, value: &impl serde::Serialize) -> io::Result<()> {
    serde_json::to_writer(&mut *out, value).map_err(io::Error::from)?;
    out.write_all(b"\n")
}

/// Adds a path or a description to I/O errors.
pub trait Context<T> {
    /// Names what was being done when the error happened.
    fn context(self, what: impl FnOnce() -> String) -> Result<T, Failure>;
}

impl<T> Context<T> for io::Result<T> {
    fn context(self, what: impl FnOnce() -> String) -> Result<T, Failure> {
        self.map_err(|e| Failure::Io(e, what()))
    }
}

/// A flag that SIGTERM and SIGINT set, for a command that stops gracefully (`ship`, `export
/// --follow`). A repeated SIGTERM does not end the process at once: `timeout` and
/// process-group kills deliver the same SIGTERM twice (GNU timeout sends it to the command and
/// to its process group), and both must end in the graceful stop. With `second_int_exits`, a
/// second SIGINT (Ctrl-C pressed again) ends the process at once with exit 130, for a command
/// a kill leaves exact anyway. SIGKILL ends it at once (a crash: the next run resumes
/// exactly).
pub fn stop_on_signals(
    second_int_exits: bool,
) -> Result<std::sync::Arc<std::sync::atomic::AtomicBool>, Failure> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let flag = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let failed = |e| Failure::Io(e, "cannot install the signal handlers".into());
    if second_int_exits {
        // Registered first: it sees the flag as the earlier signal left it.
        signal_hook::flag::register_conditional_shutdown(SIGINT, 130, flag.clone())
            .map_err(failed)?;
    }
    for sig in [SIGTERM, SIGINT] {
        signal_hook::flag::register(sig, flag.clone()).map_err(failed)?;
    }
    Ok(flag)
}
