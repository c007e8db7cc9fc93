//! Saves, off the async runtime and below it in priority.
//!
//! A save validates a manifest, hashes it, writes it and waits for its fsync under the
//! folder's lock. On tokio's blocking pool that kept reads off the runtime's two workers, but
//! at hundreds of saves a second the savers still took the cores that every agent's
//! `list_terminal_sessions` waits for (docs/PERFORMANCE.md, "Agents' reads beside saves").
//! Here they run on the blocking pool of a runtime of their own, whose threads lower their
//! scheduling priority (nice 10) as they start: a save still gets whatever CPU nobody else
//! wants, and a read that wakes takes a core first. Nice 10 above the process's own, whatever
//! that is: a server started with `nice -n 5` puts its savers at 15, never back up at 10. The
//! pool grows with the saves waiting on the disk, as the main one does, so a slow fsync holds
//! up only its own save.

use std::sync::OnceLock;
use tokio::runtime::{Builder, Runtime};

/// How much lower than the process the savers run (`nice`).
const NICER: i32 = 10;

/// The lowest priority there is (the highest nice value).
const LOWEST: i32 = 19;

/// Saves waiting on the disk at once, at most: as many as the agents who save.
const MOST_SAVERS: usize = 64;

/// Runs `work` on a saver thread and gives back its result; a panic in it comes back as
/// `Err`, for the caller to go on unwinding in its own task.
pub async fn run<T: Send + 'static>(
    work: impl FnOnce() -> T + Send + 'static,
) -> std::thread::Result<T> {
    let done = match savers() {
        Some(savers) => savers.spawn_blocking(work).await,
        // No runtime of their own could start: the caller's runtime's pool, as before.
        None => tokio::task::spawn_blocking(work).await,
    };
    done.map_err(|e| match e.try_into_panic() {
        Ok(panic) => panic,
        Err(e) => Box::new(format!("the save was dropped: {e}")),
    })
}

/// The savers' runtime, started on first use. It drives no tasks of its own (one worker,
/// idle): only its blocking pool is used.
fn savers() -> Option<&'static Runtime> {
    static SAVERS: OnceLock<Option<Runtime>> = OnceLock::new();
    SAVERS
        .get_or_init(|| {
            Builder::new_multi_thread()
                .worker_threads(1)
                .max_blocking_threads(MOST_SAVERS)
                .thread_name("flowdeck-save")
                .on_thread_start(lower_priority)
                .build()
                .inspect_err(|e| tracing::warn!("saves share the runtime's threads: {e}"))
                .ok()
        })
        .as_ref()
}

fn lower_priority() {
    // On Linux `PRIO_PROCESS` of the caller is the calling thread, not the process: the rest
    // of flowdeck keeps its priority. (Elsewhere it would be the whole process, so it is left
    // alone.) setpriority takes an absolute value, so the process's own comes first: read
    // from its main thread (whose id is the process's), not from the thread that happened to
    // start this one. Where lowering is refused, saves simply compete as before.
    #[cfg(target_os = "linux")]
    {
        let process = Some(rustix::process::getpid());
        let ours = rustix::process::getpriority_process(process).unwrap_or(0);
        if let Err(e) = rustix::process::setpriority_process(None, saver_nice(ours)) {
            tracing::debug!("a saver thread keeps its priority: {e}");
        }
    }
}

/// The savers' nice value for a process at `ours`.
fn saver_nice(ours: i32) -> i32 {
    ours.saturating_add(NICER).min(LOWEST)
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
            assert_eq!(theirs, saver_nice(ours), "the saver's nice value");
            // The caller's own thread keeps its priority.
            assert_eq!(rustix::process::getpriority_process(None).unwrap(), ours);
        }
        let panicked = run(|| -> u8 { panic!("a save that breaks") }).await;
        let message = panicked.map_err(|p| crate::panics::message(p.as_ref()));
        assert_eq!(message, Err("a save that breaks".to_string()));
        // The thread that ran it still saves.
        assert_eq!(run(|| 7).await.unwrap(), 7);
    }

    #[test]
    fn savers_run_ten_below_the_process_and_never_past_the_lowest() {
        assert_eq!(saver_nice(0), 10);
        assert_eq!(saver_nice(5), 15);
        assert_eq!(saver_nice(-5), 5);
        assert_eq!(saver_nice(12), 19);
        assert_eq!(saver_nice(19), 19);
    }
}
