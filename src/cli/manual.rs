//! `flowdeck completions SHELL` and `flowdeck man`: what a shell and `man` need, made from
//! the command line's own definition (cli.rs), so they never fall behind it.

use super::Cli;
use anyhow::Result;
use clap::CommandFactory;
use std::io::Write;
use std::process::ExitCode;

/// The completion script of `shell` for every command and option.
pub(super) fn completions(shell: clap_complete::Shell, out: &mut impl Write) -> Result<ExitCode> {
    clap_complete::generate(shell, &mut Cli::command(), "flowdeck", out);
    Ok(ExitCode::SUCCESS)
}

/// The manual: flowdeck(1), then a page for each command (`flowdeck-replay(1)`, ...), one
/// roff document after another, as `man -l -` reads them.
pub(super) fn man(out: &mut impl Write) -> Result<ExitCode> {
    let command = Cli::command();
    clap_mangen::Man::new(command.clone()).render(out)?;
    for sub in command.get_subcommands().filter(|s| !s.is_hide_set()) {
        clap_mangen::Man::new(sub.clone())
            .title(format!("flowdeck-{}", sub.get_name()))
            .render(out)?;
    }
    Ok(ExitCode::SUCCESS)
}
