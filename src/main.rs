//! The `flowdeck` binary: parses the command line and hands over to [`flowdeck::cli`].

use std::ffi::CStr;
use std::process::ExitCode;

/// What `ps`, `top` and `pgrep` call flowdeck's processes.
const NAME: &CStr = c"flowdeck";

/// What they call the session watchdog: not `flowdeck`, so that it is never taken for a
/// server (nor ended with one by `pkill -x flowdeck`, which would leave the sessions of a
/// server killed next with nobody to end them). The kernel keeps 15 bytes of a name.
const WATCHDOG_NAME: &CStr = c"flowdeck-watchd";

fn main() -> ExitCode {
    // The session watchdog is this binary re-executed (see `flowdeck::term::watchdog`); it
    // is no command a person runs, so it never reaches the argument parser.
    let args: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if args
        .first()
        .is_some_and(|a| a == flowdeck::term::watchdog::ARG)
    {
        name_process(WATCHDOG_NAME);
        let status = flowdeck::term::watchdog::main(&args[1..]);
        return ExitCode::from(u8::try_from(status).unwrap_or(1));
    }
    name_process(NAME);
    flowdeck::cli::main()
}

/// Names the process before any thread starts (a thread starts with its creator's name
/// unless given one). A background server and the watchdog are `/proc/self/exe` re-executed, which the
/// kernel would name `exe`, whatever the argument 0 they were given.
fn name_process(name: &CStr) {
    // Only a name longer than the kernel keeps could be refused, and these are not.
    #[cfg(target_os = "linux")]
    let _ = nix::sys::prctl::set_name(name);
}
