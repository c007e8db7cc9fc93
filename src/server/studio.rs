//! A studio attached to the folder's server: its engine calls answered as a person's, the
//! engine's events sent after a snapshot, and the screens it shows sent as they change, at
//! most one frame of each per [`FRAME`].
//!
//! A studio that stops reading (suspended with Ctrl-Z, a frozen ssh connection) holds up only
//! its own connection's writer: the engine and every other client go on. What it costs the
//! server stays bounded: its calls in flight ([`MAX_IN_FLIGHT`]), the answers waiting for it
//! (`conn::outbox`: past a few MiB or a thousand, nothing more is read from it, so a client
//! that calls and never reads blocks on its own socket), the engine's event buffer (which it
//! shares with every observer: past it this studio is told a fresh snapshot), and one copy of
//! each screen it shows. It is held up, never dropped for being slow: when it reads again it
//! gets its answers, and the state as it is then, not a backlog: the screens are read when
//! they are sent, not when they changed.

use super::protocol::{self, ToServer, ToStudio};
use crate::conn::outbox::{self, Outbox, Queue};
use crate::engine::approval::Approver;
use crate::engine::request::{Answer, Reply, Request, RequestError};
use crate::engine::{Actor, Change, Engine, EngineEvent};
use crate::term::mirror::Mirror;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use tokio::io::{AsyncBufRead, AsyncWrite};
use tokio::sync::broadcast::error::RecvError;
use tokio::sync::{Semaphore, mpsc};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::protocol::{ECHO_WINDOW, FRAME};

/// A studio's engine calls answered at once, at most; more wait to be read.
pub const MAX_IN_FLIGHT: usize = 64;

/// What the writer is told besides the answers it sends: at most this many wait, then the
/// reader waits for the writer.
const MOST_TOLD: usize = 64;

/// What the writer is told about the screens it sends.
#[derive(Debug)]
enum Told {
    /// The sessions the studio shows now.
    Watch(Vec<String>),
    /// The studio typed into this session: its echo goes out without waiting for a frame.
    Typed(String),
    /// The studio dropped what it was told: a fresh snapshot, and every screen again.
    Resync,
}

/// A studio being served: the engine, who it is for the log, and its right to answer
/// approval requests (held while it is attached) or why it has none (peer.rs).
#[derive(Debug)]
pub struct Attached {
    pub engine: Arc<Engine>,
    pub who: String,
    /// The person at this studio, as every call of theirs is attributed.
    pub person: Actor,
    pub approver: Result<Approver, String>,
    /// How many studios are attached (this one included), told to the studio as it changes.
    pub studios: tokio::sync::watch::Receiver<usize>,
    /// The runs it starts are cancelled if it goes before they end (`flowdeck run`).
    pub follows_runs: bool,
}

/// Serves one studio until it leaves, the connection fails, or the server stops.
pub async fn serve<R, W>(mut read: R, write: W, studio: Attached, stop: CancellationToken)
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let Attached {
        engine,
        who,
        person,
        approver,
        studios,
        follows_runs,
    } = studio;
    // Never given up for being slow: a studio stopped with Ctrl-Z is held up, and reads its
    // answers when it resumes.
    let (out, answers) = Outbox::new(outbox::Limits::with_stall(None), &who);
    let (tell, told) = mpsc::channel(MOST_TOLD);
    let writer = tokio::spawn(write_loop(
        Writer {
            write,
            answers,
            told,
        },
        engine.clone(),
        studios,
        stop.clone(),
    ));
    let mut serving = Serving {
        engine,
        who,
        person,
        approver,
        follows_runs,
        started: Arc::default(),
        out,
        tell,
        in_flight: Arc::new(Semaphore::new(MAX_IN_FLIGHT)),
        held: HashSet::new(),
    };
    let mut line = Vec::new();
    let gone = serving.out.gone();
    loop {
        // Backpressure: while its answers wait unread, nothing more is read from it.
        tokio::select! {
            () = serving.out.room() => {}
            () = stop.cancelled() => break,
        }
        if gone.is_cancelled() {
            break;
        }
        let Some(message) = next_message(&mut read, &mut line, &stop, &serving.who).await else {
            break;
        };
        if !serving.take(message).await {
            break;
        }
    }
    serving.leave(writer).await;
}

/// The studio's next message, or `None` once it is served no more: it left, its connection
/// failed or sent what no studio sends, or the server stops.
async fn next_message<R: AsyncBufRead + Unpin>(
    read: &mut R,
    line: &mut Vec<u8>,
    stop: &CancellationToken,
    who: &str,
) -> Option<ToServer> {
    let more = tokio::select! {
        more = protocol::read_line(read, line) => more,
        () = stop.cancelled() => return None,
    };
    match more {
        Ok(true) => {}
        Ok(false) => return None,
        Err(e) => {
            tracing::info!("{who}: {e}");
            return None;
        }
    }
    match serde_json::from_slice::<ToServer>(line) {
        Ok(message) => Some(message),
        Err(e) => {
            tracing::warn!("{who} sent what is not a studio's message ({e}): dropped");
            None
        }
    }
}

/// A studio being served: who it is, and what it holds while it is attached.
struct Serving {
    engine: Arc<Engine>,
    who: String,
    person: Actor,
    approver: Result<Approver, String>,
    follows_runs: bool,
    /// The runs it started, when it follows them.
    started: Arc<std::sync::Mutex<Followed>>,
    /// Its answers, waiting for it to read them.
    out: Outbox,
    /// What the writer is told about the screens.
    tell: mpsc::Sender<Told>,
    in_flight: Arc<Semaphore>,
    /// The sessions whose input this studio holds (focus mode): let go of when it goes,
    /// however it goes (a studio killed with -9 says no goodbye), so that nobody is locked out.
    held: HashSet<String>,
}

impl Serving {
    /// Acts on one message; false when nothing more is to be read from this studio.
    async fn take(&mut self, message: ToServer) -> bool {
        match message {
            // Quick calls in the order they came: a person's keys reach the session in order.
            ToServer::Call { id, request } if request.is_quick() => self.call_now(id, request),
            ToServer::Call { id, request } => return self.call_in_task(id, request).await,
            // Waits while the writer is behind: reading waits with it.
            ToServer::Watch { sessions } => {
                if self.tell.send(Told::Watch(sessions)).await.is_err() {
                    return false;
                }
            }
            ToServer::Resync => {
                if self.tell.send(Told::Resync).await.is_err() {
                    return false;
                }
            }
            ToServer::Decide {
                id,
                run_id,
                fingerprint,
                approve,
            } => self.decide(id, &run_id, &fingerprint, approve),
        }
        true
    }

    fn call_now(&mut self, id: u64, request: Request) {
        match &request {
            Request::HoldInput { session_id } => {
                self.held.insert(session_id.clone());
            }
            Request::ReleaseInput { session_id } => {
                self.held.remove(session_id);
            }
            // Only hastens the echo: a writer too far behind to be told sends it at the next
            // frame.
            Request::SendInput { session_id, .. } => {
                let _ = self.tell.try_send(Told::Typed(session_id.clone()));
            }
            _ => {}
        }
        let answer = self.engine.handle_now(request, &self.person);
        answer_with(&self.out, id, answer);
    }

    /// Answers a call that may take a while from a task of its own; false when no more calls
    /// can be taken.
    async fn call_in_task(&self, id: u64, request: Request) -> bool {
        // Backpressure: past the limit, nothing more is read from this studio.
        let Ok(permit) = self.in_flight.clone().acquire_owned().await else {
            return false;
        };
        let (engine, out, person) = (self.engine.clone(), self.out.clone(), self.person.clone());
        let started = self.follows_runs.then(|| self.started.clone());
        tokio::spawn(async move {
            let answer = engine.handle(request, &person).await;
            if let (Some(started), Ok(Reply::Started(run_id))) = (started, &answer) {
                follow(&started, &engine, run_id, &person).await;
            }
            answer_with(&out, id, answer);
            drop(permit);
        });
        true
    }

    fn decide(&self, id: u64, run_id: &str, fingerprint: &str, approve: bool) {
        let answer = match &self.approver {
            // The first answer settles it; a later one finds nothing waiting.
            Ok(approver) => approver
                .decide(run_id, fingerprint, approve, &self.person)
                .map(|_| Reply::Done)
                .map_err(RequestError::from),
            Err(why) => Err(RequestError::new(
                "not_approver",
                format!("this studio may not answer approval requests: {why}"),
            )),
        };
        answer_with(&self.out, id, answer);
    }

    /// The studio has gone: lets go of the inputs it held, and cancels the runs it followed.
    async fn leave(self, writer: tokio::task::JoinHandle<()>) {
        let Serving {
            engine,
            who,
            person,
            started,
            out,
            tell,
            held,
            ..
        } = self;
        drop((out, tell));
        writer.abort();
        for session_id in held {
            let _ = engine.handle_now(Request::ReleaseInput { session_id }, &person);
        }
        // Under the same lock as a starting run records itself: each run is cancelled here, or
        // by the task that started it, never by neither.
        let followed = {
            let mut followed = lock(&started);
            followed.gone = true;
            std::mem::take(&mut followed.runs)
        };
        for run_id in followed {
            // A run that ended already says so; nothing to cancel.
            if engine.cancel_run(&run_id, &person).await.is_ok() {
                tracing::info!("{who} went before its run {run_id} ended: cancelled");
            }
        }
        tracing::info!("{who} detached");
    }
}

/// Queues the answer to call `id` for the studio (a studio gone takes no more answers).
fn answer_with(out: &Outbox, id: u64, answer: Answer) {
    let line = protocol::line(&ToStudio::Answer { id, answer }).or_else(|e| {
        // Every answer serializes; should one not, its call still hears why.
        let failed = Err(RequestError::new(
            "internal",
            format!("the answer could not be sent: {e}"),
        ));
        protocol::line(&ToStudio::Answer { id, answer: failed })
    });
    if let Ok(line) = line {
        let _ = out.queue(line);
    }
}

/// Records a run the studio started and follows, or cancels it when the studio has gone.
async fn follow(
    started: &std::sync::Mutex<Followed>,
    engine: &Engine,
    run_id: &str,
    person: &Actor,
) {
    let gone = {
        let mut followed = lock(started);
        followed.runs.push(run_id.to_string());
        followed.gone
    };
    // The client went while its run was starting: nobody follows it.
    if gone {
        let _ = engine.cancel_run(run_id, person).await;
    }
}

/// The runs a client follows (`flowdeck run`), and whether it has gone.
#[derive(Debug, Default)]
struct Followed {
    runs: Vec<String>,
    gone: bool,
}

fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// What the connection's writer writes to, and what it is given to write.
struct Writer<W> {
    write: W,
    /// The answers, in the order they were made.
    answers: Queue,
    told: mpsc::Receiver<Told>,
}

/// The connection's one writer: the snapshot, then events, answers and screens, in order.
/// When it ends, however it ends, its queue of answers goes with it and the connection is
/// given up (`Queue`'s drop): a reader waiting for room stops waiting.
async fn write_loop<W: AsyncWrite + Unpin>(
    writer: Writer<W>,
    engine: Arc<Engine>,
    mut studios: tokio::sync::watch::Receiver<usize>,
    stop: CancellationToken,
) {
    let Writer {
        mut write,
        mut answers,
        mut told,
    } = writer;
    // Subscribed before the snapshot: no event falls between them.
    let mut events = engine.subscribe();
    let mut screens = Screens {
        viewer: Some(engine.viewer()),
        ..Screens::default()
    };
    // How many studios first: what the studio does with the snapshot (fit the panes it shows
    // to its screen, or leave them to the studio that sized them) depends on it.
    let attached = *studios.borrow_and_update();
    let mut counted = true;
    let mut log = crate::logfile::trouble();
    let log_trouble = log.borrow_and_update().clone();
    let mut firsts = vec![
        ToStudio::Studios { attached },
        ToStudio::Snapshot(Box::new(engine.snapshot())),
    ];
    if log_trouble.is_some() {
        firsts.push(ToStudio::ServerLog {
            trouble: log_trouble,
        });
    }
    for first in firsts {
        if send(&mut write, &first).await.is_err() {
            return;
        }
    }
    loop {
        let due = screens.due();
        let message = tokio::select! {
            event = events.recv() => match event {
                Ok(event) => {
                    screens.note(&event);
                    ToStudio::Event(Box::new(event))
                }
                // Behind: a fresh state instead of what was missed, and every screen again.
                Err(RecvError::Lagged(_)) => {
                    screens.all_dirty();
                    ToStudio::Snapshot(Box::new(engine.snapshot()))
                }
                Err(RecvError::Closed) => return,
            },
            answer = answers.next() => match answer {
                Some(answer) => {
                    if answers.write(&mut write, answer).await.is_err() {
                        return;
                    }
                    continue;
                }
                None => return,
            },
            news = told.recv() => match news.map(|news| screens.told(news, &engine)) {
                Some(Some(message)) => message,
                Some(None) => continue,
                None => return,
            },
            () = sleep_until(due), if due.is_some() => {
                for message in screens.frame(&engine) {
                    if send(&mut write, &message).await.is_err() {
                        return;
                    }
                }
                continue;
            },
            changed = studios.changed(), if counted => match changed {
                Ok(()) => ToStudio::Studios { attached: *studios.borrow_and_update() },
                // Nobody counts any more (a client that is no studio): nothing more to tell.
                Err(_) => {
                    counted = false;
                    continue;
                }
            },
            // The sender is a static: it never closes.
            Ok(()) = log.changed() => ToStudio::ServerLog { trouble: log.borrow_and_update().clone() },
            () = stop.cancelled() => return,
        };
        if send(&mut write, &message).await.is_err() {
            return;
        }
    }
}

async fn sleep_until(at: Option<Instant>) {
    if let Some(at) = at {
        tokio::time::sleep_until(at).await;
    }
}

/// Writes one of the writer's own messages, however long the studio takes to read it.
async fn send<W: AsyncWrite + Unpin>(write: &mut W, message: &ToStudio) -> std::io::Result<()> {
    outbox::write_line(write, &protocol::line(message)?, None).await
}

/// The screens a studio shows: which, which changed since they were last sent, and the copy
/// it has of each.
#[derive(Default)]
struct Screens {
    watched: HashSet<String>,
    dirty: HashSet<String>,
    sent: HashMap<String, Mirror>,
    last_frame: Option<Instant>,
    /// Sessions the studio typed into, until when their changes (the echo) are sent at once,
    /// not a frame later, so that typing feels immediate ([`ECHO_WINDOW`]).
    typed: HashMap<String, Instant>,
    /// What the studio shows, told to the engine: someone looks at those terminals.
    viewer: Option<crate::engine::presence::Viewer>,
}

impl Screens {
    fn watch(&mut self, sessions: Vec<String>) {
        let sessions: HashSet<String> = sessions.into_iter().collect();
        // A session shown again is sent whole: the studio may have dropped its copy. One no
        // longer shown is not sent at the next frame either: its copy here would be taken for
        // the studio's when it is shown again, and changes meanwhile, not looked at, lost.
        self.sent.retain(|id, _| sessions.contains(id));
        self.dirty.retain(|id| sessions.contains(id));
        for id in &sessions {
            if !self.sent.contains_key(id) {
                self.dirty.insert(id.clone());
            }
        }
        if let Some(viewer) = &self.viewer {
            viewer.show(&sessions);
        }
        self.watched = sessions;
    }

    /// Marks the session an event says changed.
    fn note(&mut self, event: &EngineEvent) {
        match &event.change {
            Change::SessionActivity { session_id, .. }
            | Change::SessionResized { session_id, .. }
            | Change::SessionExited { session_id, .. }
            | Change::SessionFailed { session_id, .. }
                if self.watched.contains(session_id) =>
            {
                self.dirty.insert(session_id.clone());
            }
            Change::SessionOpened { session } if self.watched.contains(&session.session_id) => {
                self.dirty.insert(session.session_id.clone());
            }
            Change::SessionClosed { session_id } => {
                self.sent.remove(session_id);
                self.dirty.remove(session_id);
            }
            _ => {}
        }
    }

    fn typed(&mut self, session_id: String) {
        if self.watched.contains(&session_id) {
            self.typed.insert(session_id, Instant::now() + ECHO_WINDOW);
        }
    }

    /// Takes what the reader was told; the message to send when there is one: a snapshot,
    /// in order with the events, for a studio that dropped some (it takes it up from there).
    fn told(&mut self, news: Told, engine: &Engine) -> Option<ToStudio> {
        match news {
            Told::Watch(sessions) => self.watch(sessions),
            Told::Typed(session_id) => self.typed(session_id),
            Told::Resync => {
                self.resend_all();
                return Some(ToStudio::Snapshot(Box::new(engine.snapshot())));
            }
        }
        None
    }

    /// Every shown screen sent whole at the next frame: the studio dropped what it was told,
    /// screens included, and may hold copies that are behind.
    fn resend_all(&mut self) {
        self.sent.clear();
        self.all_dirty();
    }

    fn all_dirty(&mut self) {
        self.dirty.extend(self.watched.iter().cloned());
    }

    /// When the next frame may go, if anything waits for one.
    fn due(&self) -> Option<Instant> {
        if self.dirty.is_empty() {
            return None;
        }
        let now = Instant::now();
        if self
            .dirty
            .iter()
            .any(|id| self.typed.get(id).is_some_and(|until| *until > now))
        {
            return Some(now);
        }
        Some(self.last_frame.map_or_else(Instant::now, |at| at + FRAME))
    }

    /// The changed rows of every dirty screen, read now.
    fn frame(&mut self, engine: &Engine) -> Vec<ToStudio> {
        let now = Instant::now();
        self.last_frame = Some(now);
        self.typed.retain(|_, until| *until > now);
        let mut messages = Vec::new();
        for session_id in std::mem::take(&mut self.dirty) {
            let Ok(mirror) = engine.session_mirror(&session_id) else {
                continue;
            };
            let changes = mirror.changes_since(self.sent.get(&session_id));
            let same = self.sent.get(&session_id).is_some_and(|old| {
                changes.changed.is_empty()
                    && old.cursor_row == mirror.cursor_row
                    && old.cursor_col == mirror.cursor_col
                    && old.cursor_visible == mirror.cursor_visible
                    && old.alternate == mirror.alternate
                    && old.bracketed_paste == mirror.bracketed_paste
                    && old.mouse == mirror.mouse
                    && old.mouse_encoding == mirror.mouse_encoding
            });
            if !same {
                messages.push(ToStudio::Screen {
                    session_id: session_id.clone(),
                    changes,
                });
            }
            self.sent.insert(session_id, mirror);
        }
        messages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_hidden_before_its_frame_is_sent_whole_when_shown_again() {
        let mut screens = Screens::default();
        screens.watch(vec!["s1".into()]);
        screens.sent.insert("s1".into(), Mirror::default());
        screens.dirty.insert("s1".into());
        // Hidden before the frame that would have sent its change.
        screens.watch(vec!["s2".into()]);
        assert!(!screens.dirty.contains("s1"), "not sent while hidden");
        assert!(!screens.sent.contains_key("s1"));
        screens.watch(vec!["s1".into()]);
        assert!(screens.dirty.contains("s1"), "sent whole once shown again");
    }

    #[test]
    fn a_typed_sessions_changes_are_due_at_once_for_the_echo_window_only() {
        let mut screens = Screens::default();
        screens.watch(vec!["s1".into(), "s2".into()]);
        let just_now = Instant::now();
        screens.last_frame = Some(just_now);
        assert_eq!(
            screens.due(),
            Some(just_now + FRAME),
            "changed screens wait a frame"
        );
        screens.typed("s1".into());
        assert!(
            screens.due().is_some_and(|due| due < just_now + FRAME),
            "the typed session's echo waits for no frame"
        );
        // A frame that went before the echo came does not use the window up.
        screens.dirty.clear();
        screens.dirty.insert("s1".into());
        assert!(screens.due().is_some_and(|due| due < just_now + FRAME));
        // Once the window has passed, changes wait for their frame again.
        screens.typed.insert("s1".into(), just_now);
        assert_eq!(screens.due(), Some(just_now + FRAME));
        // A session not shown is not sent early.
        screens.typed("s9".into());
        assert!(!screens.typed.contains_key("s9"));
    }
}
