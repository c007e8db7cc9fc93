//! One workflow on several hosts at once, a fleet: one run per host, each in a terminal of
//! its own there, at most `parallel` at a time (the others wait for a slot), each ending on
//! its own (a host that is down fails its run; the others go on). Hosts are named one by
//! one, or by groups written once in the folder's `hosts.conf`.

use super::request::RunRequest;
use crate::engine::error::StartError;
use crate::engine::hosts_file::HostsFile;
use crate::engine::result::{FinalState, RunResult};
use crate::engine::{Engine, EngineError};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::Semaphore;

/// Runs of a fleet at once, unless told otherwise.
pub const DEFAULT_PARALLEL: usize = 8;

/// Hosts a fleet may hold: more is surely a mistake (a group that names itself through
/// another is refused before this).
pub const MOST_HOSTS: usize = 1000;

pub use crate::engine::hosts_file::HOSTS_FILE;

/// A fleet run refused for want of a run slot (other runs hold them) tries again this often,
/// and sooner when a run ends.
const SLOT_RETRY: Duration = Duration::from_secs(1);

/// What one host's run did.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FleetRun {
    pub host: String,
    /// Whether the run on this host completed.
    pub success: bool,
    /// Its run's id, when it started.
    pub run_id: Option<String>,
    pub final_state: Option<FinalState>,
    /// Why it failed, when it did (a host that cannot be reached says so here).
    pub error: Option<String>,
    /// The run's full result, when it started.
    pub result: Option<RunResult>,
}

/// What a fleet did: one run per host, in the order the hosts were given.
#[derive(Debug, Clone, Serialize, Deserialize, JsonSchema)]
pub struct FleetResult {
    /// Whether every host's run completed.
    pub success: bool,
    pub workflow_name: String,
    /// How many hosts' runs completed, of how many.
    pub completed: usize,
    pub hosts: usize,
    pub runs: Vec<FleetRun>,
    pub duration_ms: f64,
}

impl Engine {
    /// The hosts `on` names, in order and each once: a name of the folder's `hosts.conf` is
    /// its group's hosts (groups may name groups), anything else a host.
    pub fn fleet_hosts(&self, on: &[String]) -> Result<Vec<String>, EngineError> {
        let hosts = HostsFile::read(self.store().root())?.hosts(on)?;
        if hosts.is_empty() {
            return Err(EngineError::InvalidParams(
                "no host given: name one or more hosts, or a group of hosts.conf".into(),
            ));
        }
        if hosts.len() > MOST_HOSTS {
            return Err(EngineError::InvalidParams(format!(
                "{} hosts at once; a fleet holds at most {MOST_HOSTS}",
                hosts.len()
            )));
        }
        for host in &hosts {
            crate::engine::terminal::hosts::check_host(host)?;
        }
        Ok(hosts)
    }

    /// Whether `name` is a group of the folder's hosts.conf.
    pub fn is_fleet_group(&self, name: &str) -> bool {
        is_group(self.store().root(), name)
    }

    /// Runs `request`'s workflow on every host, at most `parallel` at a time, and waits for
    /// all of them. Dropped before the end (a caller that goes away), it cancels the runs
    /// still going, as a single followed run is.
    pub async fn run_fleet(
        self: &Arc<Self>,
        request: RunRequest,
        hosts: Vec<String>,
        parallel: usize,
    ) -> FleetResult {
        let started = Instant::now();
        let workflow_name = match &request.workflow {
            super::WorkflowSource::Name(name) => name.clone(),
            super::WorkflowSource::Inline(_) => String::new(),
        };
        let slots = Arc::new(Semaphore::new(parallel.max(1)));
        let mut runs = tokio::task::JoinSet::new();
        for (i, host) in hosts.iter().enumerate() {
            let engine = self.clone();
            let slots = slots.clone();
            let mut request = request.clone();
            request.host = Some(host.clone());
            request.session_id = None;
            runs.spawn(async move {
                let _slot = slots.acquire_owned().await;
                (i, engine.run_on_host(request).await)
            });
        }
        let mut done: Vec<(usize, FleetRun)> = Vec::with_capacity(hosts.len());
        while let Some(joined) = runs.join_next().await {
            match joined {
                Ok(run) => done.push(run),
                Err(e) => tracing::error!("a fleet's run task failed: {e}"),
            }
        }
        done.sort_by_key(|(i, _)| *i);
        let runs: Vec<FleetRun> = done.into_iter().map(|(_, run)| run).collect();
        let completed = runs.iter().filter(|r| r.success).count();
        let workflow_name = runs
            .iter()
            .find_map(|r| r.result.as_ref().map(|r| r.workflow_name.clone()))
            .unwrap_or(workflow_name);
        FleetResult {
            success: completed == hosts.len(),
            workflow_name,
            completed,
            hosts: hosts.len(),
            runs,
            duration_ms: started.elapsed().as_secs_f64() * 1000.0,
        }
    }

    /// One host's run of a fleet, to its end; a start refused for want of a run slot (runs
    /// outside the fleet hold them) waits for one.
    async fn run_on_host(self: &Arc<Self>, request: RunRequest) -> FleetRun {
        let host = request.host.clone().unwrap_or_default();
        let mut ended = self.subscribe();
        let followed = loop {
            match self.follow_run(request.clone()).await {
                Err(EngineError::RunStart(StartError::TooManyRuns { .. })) => {
                    let _ = tokio::time::timeout(SLOT_RETRY, ended.recv()).await;
                }
                other => break other,
            }
        };
        match followed {
            Ok(run) => {
                let run_id = run.run_id().to_string();
                let result = run.finished().await;
                FleetRun {
                    host,
                    success: result.success,
                    run_id: Some(run_id),
                    final_state: Some(result.final_state),
                    error: result.error.clone(),
                    result: Some(result),
                }
            }
            Err(e) => FleetRun {
                host,
                success: false,
                run_id: None,
                final_state: None,
                error: Some(e.to_string()),
                result: None,
            },
        }
    }
}

/// Whether `name` is a group of `folder`'s hosts.conf (a file that cannot be read names none).
pub fn is_group(folder: &std::path::Path, name: &str) -> bool {
    HostsFile::read(folder).is_ok_and(|file| file.is_group(name))
}
