//! Saves, off the async runtime and below it in priority.
//!
//! A save validates a manifest, hashes it, writes it and waits for its fsync under the
//! folder's lock. On tokio's blocking pool that kept reads off the runtime's two workers, but
//! at hundreds of saves a second the savers still took the cores that every agent's
//! `list_terminal_sessions` waits for (docs/PERFORMANCE.md, "Agents' reads beside saves").
//! Here they run on threads of their own whose scheduling priority is lowered (nice 10): a
//! save still gets whatever CPU nobody else wants, and a read that wakes takes a core first.

use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex, OnceLock};
use tokio::sync::oneshot;

/// Threads that save at once. The folder's lock lets one write at a time anyway; more
/// threads let the next saves validate and hash meanwhile.
const SAVERS: usize = 4;

/// How much lower than the process the savers run (`nice`).
const NICER: i32 = 10;

type Job = Box<dyn FnOnce() + Send>;

/// Runs `work` on a saver thread and gives back its result; a panic in it comes back as
/// `Err`, for the caller to go on unwinding in its own task.
pub async fn run<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::thread::Result<T> {
    let (done, result) = oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = done.send(std::panic::catch_unwind(AssertUnwindSafe(work)));
    });
    if let Err(refused) = queue().send(job) {
        // No saver could start (the system refused threads): the caller's own thread does it.
        (refused.0)();
    }
    result
        .await
        .unwrap_or_else(|_| Err(Box::new("the save's thread ended without an answer")))
}

/// The savers' queue, started on first use.
fn queue() -> &'static Sender<Job> {
    static QUEUE: OnceLock<Sender<Job>> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let (queue, jobs) = channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        for n in 0..SAVERS {
            let jobs = jobs.clone();
            let started = std::thread::Builder::new()
                .name(format!("flowdeck-save-{n}"))
                .spawn(move || saver(&jobs));
            if let Err(e) = started {
                tracing::warn!("a saver thread could not start: {e}");
            }
        }
        queue
    })
}

fn saver(jobs: &Mutex<Receiver<Job>>) {
    // On Linux `PRIO_PROCESS` of the caller is the calling thread, not the process: the rest
    // of flowdeck keeps its priority. (Elsewhere it would be the whole process, so it is left
    // alone.) Where lowering is refused, saves simply compete as before.
    #[cfg(target_os = "linux")]
    if let Err(e) = rustix::process::setpriority_process(None, NICER) {
        tracing::debug!("a saver thread keeps its priority: {e}");
    }
    loop {
        let job = match jobs.lock().unwrap_or_else(|p| p.into_inner()).recv() {
            Ok(job) => job,
            Err(_) => return,
        };
        job();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_save_runs_below_the_callers_priority_and_its_panic_comes_back() {
        #[cfg(target_os = "linux")]
        {
            let ours = rustix::process::getpriority_process(None).unwrap();
            let theirs = run(|| rustix::process::getpriority_process(None).unwrap())
                .await
                .unwrap();
            assert_eq!(theirs, (ours + NICER).min(19), "the saver's nice value");
            // The caller's own thread keeps its priority.
            assert_eq!(rustix::process::getpriority_process(None).unwrap(), ours);
        }
        let panicked = run(|| -> u8 { panic!("a save that breaks") }).await;
        let message = panicked.map_err(|p| crate::panics::message(p.as_ref()));
        assert_eq!(message, Err("a save that breaks".to_string()));
        // The thread that ran it still saves.
        assert_eq!(run(|| 7).await.unwrap(), 7);
    }
}
