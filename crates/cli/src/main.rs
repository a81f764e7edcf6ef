//! `krec`: the command line for Kafka data.
//!
//! Glue only: parse arguments, call the library crates, print; outcomes become exit codes
//! through krecords-source's one mapping (0 success, 1 the data has a problem, 2 usage or I/O
//! error). Data goes to stdout, diagnostics to stderr; a closed stdout pipe ends the program
//! quietly.

// The doc comments of the argument structs are clap's `--help` text, written for a terminal
// (`zstd[:level]`, `<offset>.snapshot`): escaping them for rustdoc would show the escapes in
// `--help`, so rustdoc's link and HTML checks are off for this binary.
#![allow(rustdoc::broken_intra_doc_links, rustdoc::invalid_html_tags)]

mod args;
mod bytes_fmt;
mod cmd;
mod isolation;
mod kafka;
mod outcome;
mod progress;
mod source;
mod time_fmt;

use clap::{CommandFactory, Parser, Subcommand};
use std::io::{self, Write};
use std::process::ExitCode;

use cmd::{
    build, convert, demo, docs, dump, explain, export, gen, log, metadata, produce, salvage, ship,
    sql, stats, verify,
};
use krecords_log::convert::NamedWriter;
use krecords_source::ErrorClass;
use outcome::{Failure, Outcome};

/// The command line for Kafka data (the about line is the package description).
#[derive(Parser)]
#[command(name = "krec", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    Dump(dump::Args),
    Demo(demo::Args),
    Build(build::Args),
    Explain(explain::Args),
    Stats(stats::Args),
    Gen(gen::Args),
    Verify(verify::Args),
    Convert(convert::Args),
    Salvage(salvage::Args),
    Log(log::Args),
    Ship(ship::Args),
    Export(export::Args),
    Metadata(metadata::Args),
    Offsets(metadata::OffsetsArgs),
    Groups(metadata::GroupsArgs),
    Produce(produce::Args),
    Sql(sql::Args),
    Completions(docs::CompletionsArgs),
    Man(docs::ManArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let stdout = io::stdout();
    let mut out = io::BufWriter::with_capacity(1 << 16, NamedWriter::stdout(stdout.lock()));
    let result = match cli.command {
        Command::Dump(args) => dump::run(args, &mut out),
        Command::Demo(args) => demo::run(args, &mut out),
        Command::Build(args) => build::run(args, &mut out),
        Command::Explain(args) => explain::run(args, &mut out),
        Command::Stats(args) => stats::run(args, &mut out),
        Command::Gen(args) => gen::run(args, &mut out),
        Command::Verify(args) => verify::run(args, &mut out),
        Command::Convert(args) => convert::run(args, &mut out),
        Command::Salvage(args) => salvage::run(args, &mut out),
        Command::Log(args) => log::run(args, &mut out),
        Command::Ship(args) => ship::run(args, &mut out),
        Command::Export(args) => export::run(args, &mut out),
        Command::Metadata(args) => metadata::run(args, &mut out),
        Command::Offsets(args) => metadata::run_offsets(args, &mut out),
        Command::Groups(args) => metadata::run_groups(args, &mut out),
        Command::Produce(args) => produce::run(args, &mut out),
        Command::Sql(args) => sql::run(args, &mut out),
        Command::Completions(args) => docs::completions(args, Cli::command(), &mut out),
        Command::Man(args) => docs::man(args, Cli::command(), &mut out),
    };
    let result = result.and_then(|o| out.flush().map(|()| o).map_err(Failure::from));
    let failure = match result {
        Ok(Outcome::Ok) => return ExitCode::SUCCESS,
        Ok(Outcome::DataProblem) => return ExitCode::from(ErrorClass::Data.exit_code()),
        Ok(Outcome::Unreadable) => return ExitCode::from(ErrorClass::Io.exit_code()),
        Err(Failure::Io(e, _)) if e.kind() == io::ErrorKind::BrokenPipe => {
            return ExitCode::SUCCESS
        }
        Err(f) => f,
    };
    eprintln!("krec: {failure}");
    ExitCode::from(failure.class().exit_code())
}
