//! The signals that ask a flowdeck process to end: SIGHUP (the terminal of its client or
//! user closed), SIGTERM, SIGINT (Ctrl-C) and SIGQUIT (Ctrl-\). Each front end that runs
//! sessions registers them at once, so that none of them kills the process before it has
//! cancelled its runs, journaled them and ended its sessions' processes.

#[cfg(unix)]
use tokio::signal::unix::{Signal, SignalKind, signal};

/// The termination signals, registered.
#[derive(Debug)]
pub struct Termination {
    #[cfg(unix)]
    hangup: Signal,
    #[cfg(unix)]
    terminate: Signal,
    #[cfg(unix)]
    interrupt: Signal,
    #[cfg(unix)]
    quit: Signal,
}

impl Termination {
    /// Registers the handlers. Must be called inside a tokio runtime.
    pub fn register() -> std::io::Result<Termination> {
        Ok(Termination {
            #[cfg(unix)]
            hangup: signal(SignalKind::hangup())?,
            #[cfg(unix)]
            terminate: signal(SignalKind::terminate())?,
            #[cfg(unix)]
            interrupt: signal(SignalKind::interrupt())?,
            #[cfg(unix)]
            quit: signal(SignalKind::quit())?,
        })
    }

    /// Waits for the next termination signal and names it.
    pub async fn recv(&mut self) -> &'static str {
        #[cfg(unix)]
        {
            tokio::select! {
                _ = self.hangup.recv() => "SIGHUP",
                _ = self.terminate.recv() => "SIGTERM",
                _ = self.interrupt.recv() => "SIGINT",
                _ = self.quit.recv() => "SIGQUIT",
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C"
        }
    }
}
