//! The `flowdeck` binary: parses the command line and hands over to [`flowdeck::cli`].

use std::process::ExitCode;

fn main() -> ExitCode {
    flowdeck::cli::main()
}
