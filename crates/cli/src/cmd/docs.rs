//! `krec completions` and `krec man`: shell completion scripts and man pages, generated from the
//! same clap definitions as `--help`, so they never fall behind the flags.

use crate::outcome::{Context, Failure, Outcome};
use std::io::Write;
use std::path::PathBuf;

/// Print a shell completion script.
///
/// Examples:
///   krec completions bash > /etc/bash_completion.d/krec
///   krec completions zsh > "${fpath[1]}/_krec"
///   krec completions fish > ~/.config/fish/completions/krec.fish
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Print a man page (roff) for krec or one of its subcommands.
///
/// Examples:
///   krec man | man -l -
///   krec man dump > krec-dump.1
///   krec man log append | man -l -
///   krec man --dir /usr/local/share/man/man1     (every page: krec.1, krec-dump.1, ...)
#[derive(clap::Args)]
#[command(verbatim_doc_comment)]
pub struct ManArgs {
    /// A subcommand (and sub-subcommand) for its own page; none for krec(1).
    subcommand: Vec<String>,
    /// Write every page into this directory (printing their paths) instead.
    #[arg(long, conflicts_with = "subcommand")]
    dir: Option<PathBuf>,
}

/// Runs `krec completions`.
pub fn completions(
    args: CompletionsArgs,
    mut cmd: clap::Command,
    out: &mut impl Write,
) -> Result<Outcome, Failure> {
    let name = cmd.get_name().to_string();
    clap_complete::generate(args.shell, &mut cmd, name, out);
    Ok(Outcome::Ok)
}

/// Runs `krec man`.
pub fn man(args: ManArgs, cmd: clap::Command, out: &mut impl Write) -> Result<Outcome, Failure> {
    let mut cmd = cmd.disable_help_subcommand(true);
    cmd.build();
    if let Some(dir) = &args.dir {
        let mut pages = Vec::new();
        collect_pages(&cmd, &mut pages);
        std::fs::create_dir_all(dir).context(|| format!("cannot create {}", dir.display()))?;
        for page in pages {
            let man = page_of(page);
            let path = dir.join(man.get_filename());
            let mut roff = Vec::new();
            man.render(&mut roff)?;
            std::fs::write(&path, roff).context(|| format!("cannot write {}", path.display()))?;
            writeln!(out, "{}", path.display())?;
        }
        return Ok(Outcome::Ok);
    }
    let mut page = cmd;
    for name in &args.subcommand {
        page = page.find_subcommand(name).cloned().ok_or_else(|| {
            Failure::Usage(format!(
                "no subcommand {name:?} in `{}`",
                page.get_display_name().unwrap_or(page.get_name())
            ))
        })?;
    }
    let mut roff = Vec::new();
    page_of(page).render(&mut roff)?;
    out.write_all(&roff)?;
    Ok(Outcome::Ok)
}

/// The man page of a (built) command, every page naming krec's version as its source.
fn page_of(cmd: clap::Command) -> clap_mangen::Man {
    clap_mangen::Man::new(cmd).source(format!("krec {}", env!("CARGO_PKG_VERSION")))
}

/// A command and its visible subcommands, depth first (krec, krec-build, ..., krec-log-append).
fn collect_pages(cmd: &clap::Command, pages: &mut Vec<clap::Command>) {
    pages.push(cmd.clone());
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        collect_pages(sub, pages);
    }
}
