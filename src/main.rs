//! The `flowdeck` binary: parses the command line and hands over to [`flowdeck::cli`].

use std::process::ExitCode;

fn main() -> ExitCode {
    // The session watchdog is this binary re-executed (see `flowdeck::term::watchdog`); it
    // is no command a person runs, so it never reaches the argument parser.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args
        .first()
        .is_some_and(|a| a == flowdeck::term::watchdog::ARG)
    {
        let status = flowdeck::term::watchdog::main(&args[1..]);
        return ExitCode::from(u8::try_from(status).unwrap_or(1));
    }
    flowdeck::cli::main()
}
