//! The engine: the one kernel both front ends drive. Every action a person takes in the TUI
//! or an agent takes over MCP is a method here, every change is an [`EngineEvent`], and the
//! engine holds no UI types.
//!
//! - [`terminal`]: terminal sessions, driven with the parameter types of the manifest's tools,
//!   so a workflow step and a tool call are the same call;
//! - [`run`]: runs in progress, limits, cancellation; starting, following, cancelling and
//!   answering runs; every way a run ends, recorded the same way; their history;
//! - [`executor`]: one run's state machine; [`transition`] the pure choice of the next state;
//!   [`contract`] the input and output contracts;
//! - [`journal`], [`meta`]: the run history and per-workflow metadata in `DIR/.flowdeck/`;
//! - [`events`]: the event stream;
//! - [`search`]: searching a session's output, for the MCP tool and the studio's pane search;
//! - [`approval`]: approval mode, agents' runs waiting for a person's yes or no.

pub mod abandoned;
pub mod attention;
pub mod attention_list;
pub mod audit_log;
pub mod authoring;
pub mod claim;
pub mod contract;
pub mod editing;
pub mod error;
pub mod events;
pub mod hosts_file;
pub mod journal;
pub mod meta;
pub mod panes;
pub mod presence;
pub mod request;
pub mod result;
pub mod run;
pub mod save_pool;
pub mod search;
pub mod secrets;
pub mod terminal;
pub mod transition;

pub use error::EngineError;
// Types of the lower layers that the engine's methods take, return or fail with: front ends
// name them through the engine, never by reaching into `term` or `store`.
pub use crate::store::approvals::Approved;
pub use crate::store::lock::{Holder as LockHolder, LockError};
pub use crate::store::recovery::Recovered;
pub use crate::store::{FolderProblem, FolderProblemKind, Saved, StoreError, WorkflowStatus};
pub use crate::term::processes::ancestry;
pub use crate::term::{Content, ExitInfo, SessionInfo, TermError, WaitOutcome};
pub use contract::ContractPhase;
pub use events::{Actor, Change, EngineEvent, RunEvent};
pub use result::{FinalState, RunResult, WrittenFinalState};
pub use run::approval;
pub use run::fleet::{self, FleetResult, FleetRun};
pub use run::{FollowedRun, Phase, RunRequest, RunStatus, StartedRun, WorkflowSource};
pub use search::SearchResult;
pub use terminal::{
    AwaitOutput, ClosedSession, CommandOutput, EnvValues, Resized, ScreenContent, SentInput,
    SessionList, SetEnvResult,
};
pub use transition::StepStatus;

use crate::store::{Store, Watcher};
use crate::term::{TermConfig, Terminals};
use journal::Journal;
use meta::Metadata;
use run::Runs;
use std::path::Path;
use std::sync::Arc;
use tokio::sync::broadcast;

/// Settings of one engine.
#[derive(Debug, Clone)]
pub struct EngineConfig {
    pub terminals: TermConfig,
    /// Runs in progress at once.
    pub max_runs: usize,
    /// The program a run's own session starts (default: the user's shell).
    pub run_shell: Option<Vec<String>>,
    /// Follow the folder for changes made by editors (off for one-shot commands).
    pub watch: bool,
    /// Approval mode: an agent's run of content no person approved waits for one.
    pub approve_agent_runs: bool,
    /// The ssh command (and its options) that opens terminals on hosts; `None`: the one
    /// `FLOWDECK_SSH_COMMAND` gives, else `ssh` (terminal/hosts.rs).
    pub ssh_command: Option<Vec<String>>,
    /// Runs record their sessions as asciicast files beside their journals, each at most
    /// this many bytes; `None`: they do not.
    pub recording_cap: Option<u64>,
    /// asciicast v3 (asciinema 3's), or v2 for whoever asks (FLOWDECK_RECORDING_FORMAT).
    pub recording_format: crate::term::recording::cast::Format,
    /// Terminals an agent opened, whose agent has gone and that nobody has looked at for
    /// this long, are closed (abandoned.rs); `None`: never.
    pub close_abandoned_after: Option<std::time::Duration>,
    /// A running terminal (or run) with no output for this long is `quiet` in the attention
    /// list (attention/); `None`: never.
    pub quiet_after: Option<std::time::Duration>,
}

impl Default for EngineConfig {
    fn default() -> Self {
        EngineConfig {
            terminals: TermConfig::default(),
            max_runs: 8,
            run_shell: None,
            watch: true,
            approve_agent_runs: false,
            ssh_command: None,
            recording_cap: Some(crate::term::recording::DEFAULT_CAP),
            recording_format: crate::term::recording::cast::Format::V3,
            close_abandoned_after: Some(abandoned::DEFAULT_AFTER),
            quiet_after: Some(attention::DEFAULT_QUIET_AFTER),
        }
    }
}

/// The engine's state at one point of its event stream.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
pub struct Snapshot {
    /// The number of the last event this state reflects.
    pub seq: u64,
    pub workflows: Vec<authoring::WorkflowSummary>,
    pub sessions: Vec<SessionInfo>,
    /// Runs in progress.
    pub runs: Vec<RunStatus>,
    /// What is wrong with the workflows folder itself (missing, not a folder, unreadable),
    /// for an engine opened with [`Engine::open_lenient`]; `None` when it can be listed.
    pub folder_problem: Option<FolderProblem>,
    /// Whether agents' runs of content no person approved wait for a person (approval.rs).
    #[serde(default)]
    pub approval_mode: bool,
    /// The last run that ended of each workflow, as its journal says (its execution log left
    /// out): what a studio attaching shows in the plan of a workflow it saw no run of.
    #[serde(default)]
    pub last_runs: Vec<RunStatus>,
    /// Every run and terminal with what it asks of a person, as last told
    /// ([`Change::AttentionChanged`]).
    #[serde(default)]
    pub attention: attention::AttentionList,
}

/// How long shutdown waits for cancelled runs to journal how they ended.
const SHUTDOWN_GRACE: std::time::Duration = std::time::Duration::from_secs(5);

/// The engine handle shared by the front ends.
#[derive(Debug)]
pub struct Engine {
    config: EngineConfig,
    store: Arc<Store>,
    _watcher: Option<Watcher>,
    terminals: Terminals,
    runs: Runs,
    journal: Journal,
    metadata: Arc<Metadata>,
    events: Arc<events::EventHub>,
    /// Sessions whose input someone holds (a person in focus mode on its pane): only they
    /// may type into it meanwhile.
    input_holders: std::sync::Mutex<std::collections::HashMap<String, Actor>>,
    /// Front ends with a person at them that answer approval requests (approval.rs).
    approvers: std::sync::atomic::AtomicUsize,
    /// Approval mode: on from the start (`config.approve_agent_runs`) or turned on by a
    /// person later; never off again while the engine lives.
    approval_mode: std::sync::atomic::AtomicBool,
    /// Who is attached and what they look at (presence.rs).
    presence: presence::Watching,
    /// What was seen of the runs and terminals that need a person (attention/).
    attention: attention::Keeper,
}

impl Engine {
    /// Opens the workflows folder and, if configured, starts following it. A folder that does
    /// not exist or cannot be read is an error.
    pub fn open(workflows: &Path, config: EngineConfig) -> Result<Arc<Engine>, EngineError> {
        Engine::with_store(Store::open(workflows)?, config)
    }

    /// Opens the workflows folder whatever state it is in, for a front end that stays open
    /// and says what is wrong (the studio): a folder that does not exist, is a file or cannot
    /// be read gives an engine with no workflows and the problem in [`Snapshot::folder_problem`].
    /// Followed (with `config.watch`), the folder's workflows appear when it is fixed, with a
    /// [`Change::WorkflowFolder`] event each time the problem changes.
    pub fn open_lenient(
        workflows: &Path,
        config: EngineConfig,
    ) -> Result<Arc<Engine>, EngineError> {
        Engine::with_store(Store::open_lenient(workflows)?, config)
    }

    fn with_store(store: Arc<Store>, config: EngineConfig) -> Result<Arc<Engine>, EngineError> {
        let watcher = if config.watch {
            Some(Watcher::start(&store)?)
        } else {
            None
        };
        let events = Arc::new(events::EventHub::default());
        let meta_dir = store.root().join(crate::store::files::META_DIR);
        let engine = Arc::new(Engine {
            approval_mode: config.approve_agent_runs.into(),
            terminals: Terminals::new(config.terminals.clone()),
            runs: Runs::new(config.max_runs),
            journal: Journal::new(journal::runs_dir(store.root())),
            metadata: Arc::new(Metadata::new(&meta_dir)),
            config,
            store,
            _watcher: watcher,
            events,
            input_holders: Default::default(),
            approvers: Default::default(),
            presence: Default::default(),
            attention: Default::default(),
        });
        // Each ends as any run ends: its journal's last line (written by the recovery) and its
        // workflow's run count and last result.
        for run in engine.journal.recover_interrupted() {
            tracing::info!(
                "run {} was in flight when its flowdeck died: now interrupted",
                run.run_id
            );
            engine.metadata.record(
                &run.workflow,
                &run.run_id,
                result::FinalState::Interrupted,
                &run.at,
            );
        }
        engine.forward_store_changes();
        Ok(engine)
    }

    /// Publishes every change of the folder as an engine event.
    fn forward_store_changes(&self) {
        let changes = self.store.subscribe();
        let events = self.events.clone();
        let store = Arc::downgrade(&self.store);
        let spawned = std::thread::Builder::new()
            .name("engine-store-events".into())
            .spawn(move || {
                while let Some(change) = changes.recv() {
                    let missed = changes.missed();
                    if missed > 0 {
                        // Changes came faster than this thread took them: front ends are
                        // told to read the list again rather than trust their view.
                        events.publish(Actor::System, Change::WorkflowsResync { missed });
                    }
                    let actor = authoring::author_of(change.author.as_deref());
                    let (name, file_name, version) =
                        (change.name, change.file_name, change.version);
                    let change = match change.kind {
                        crate::store::ChangeKind::Added => Change::WorkflowAdded {
                            name,
                            file_name,
                            version,
                        },
                        crate::store::ChangeKind::Changed => Change::WorkflowChanged {
                            name,
                            file_name,
                            version,
                        },
                        crate::store::ChangeKind::Removed => {
                            Change::WorkflowRemoved { name, file_name }
                        }
                        // The problem as the store holds it now: a later change of it is
                        // its own event, so an observer always ends on the latest.
                        crate::store::ChangeKind::Folder => Change::WorkflowFolder {
                            problem: store.upgrade().and_then(|s| s.folder_problem()),
                        },
                    };
                    events.publish(actor, change);
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("workflow change events are off: {e}");
        }
    }

    pub fn config(&self) -> &EngineConfig {
        &self.config
    }

    // The engine's parts are its own: front ends go through its methods and events, so that
    // every caller gets the same rules (ownership, events, secrets, cancellation).

    /// The workflows folder.
    fn store(&self) -> &Arc<Store> {
        &self.store
    }

    fn terminals(&self) -> &Terminals {
        &self.terminals
    }

    /// The first process of each session still running: what a check of who may approve
    /// compares a connecting process with (server/peer.rs).
    pub fn session_leaders(&self) -> Vec<i32> {
        self.terminals.live_leaders()
    }

    fn runs(&self) -> &Runs {
        &self.runs
    }

    fn journal(&self) -> &Journal {
        &self.journal
    }

    fn metadata(&self) -> &Metadata {
        &self.metadata
    }

    /// Follows every engine event from now on.
    pub fn subscribe(&self) -> broadcast::Receiver<EngineEvent> {
        self.events.subscribe()
    }

    /// flowdeck's own folder inside the workflows folder (`DIR/.flowdeck/`, owner-only, with a
    /// `.gitignore` of `*`), created on first need: where front ends keep their files (the
    /// MCP audit log).
    pub fn state_dir(&self) -> Result<std::path::PathBuf, EngineError> {
        Ok(self.store.meta_dir()?)
    }

    /// Publishes a change, once the state it announces is visible. Returns its number.
    pub(crate) fn publish(&self, actor: Actor, change: Change) -> u64 {
        self.events.publish(actor, change)
    }

    /// The engine's state and the number of the last event it reflects: subscribe first,
    /// then take a snapshot, then apply the events numbered above it.
    pub fn snapshot(&self) -> Snapshot {
        // Run counts and last results are a file shared with other flowdeck processes: read
        // before holding the event stream still, which a slow disk must not hold up.
        let meta = self.metadata.all();
        let last_runs = self.last_runs(&meta);
        self.events.at_rest(|seq| Snapshot {
            seq,
            workflows: self.workflow_list_with(&meta).workflows,
            sessions: self.terminals.list(),
            runs: self.runs.list_active(),
            folder_problem: self.store.folder_problem(),
            approval_mode: self.approval_mode(),
            last_runs,
            attention: self.attention_told(),
        })
    }

    /// The last finished run of each workflow the metadata names, read from its journal.
    fn last_runs(
        &self,
        meta: &std::collections::BTreeMap<String, meta::WorkflowMeta>,
    ) -> Vec<RunStatus> {
        meta.values()
            .filter_map(|m| m.last_run_id.as_deref())
            .filter_map(|id| self.run_status(id).ok())
            .filter(|status| status.status == Phase::Finished)
            .map(|mut status| {
                if let Some(result) = status.result.as_mut() {
                    result.execution_log.clear();
                }
                status
            })
            .collect()
    }

    /// Whether anything lives here: a terminal whose program runs, or a run in progress.
    pub fn lives(&self) -> bool {
        !self.runs.list_active().is_empty() || self.terminals.list().iter().any(|s| s.running)
    }

    /// Ends everything the engine started: runs are cancelled, sessions closed.
    pub async fn shutdown(&self) {
        let active = self.runs.all_active();
        self.runs.cancel_all();
        // Give cancelled runs their turn to record how they ended: all at once, within one
        // grace period, however many there are.
        let ended = async {
            for run in active {
                let mut status = run.status.subscribe();
                let _ = status.wait_for(|s| s.status == Phase::Finished).await;
            }
        };
        let _ = tokio::time::timeout(SHUTDOWN_GRACE, ended).await;
        for session_id in self.terminals.close_all().await {
            self.publish(Actor::System, Change::SessionClosed { session_id });
        }
    }
}
