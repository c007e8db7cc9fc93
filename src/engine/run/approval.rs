//! Approval mode (`--approve agent-runs`): an agent's run of a manifest whose exact content a
//! person has not approved waits, in its own phase, until a person approves or denies it.
//!
//! Only an [`Approver`] can answer: the handle a front end with a person at it (the studio)
//! takes with [`Engine::attach_approver`]. No MCP tool holds one, so no agent can approve its
//! own run. With no approver attached, a run that needs approval is refused at once: nobody
//! would ever see it. Approvals are content versions (SHA-256) remembered in
//! `DIR/.flowdeck/approved.json` (store/approvals.rs): any change to a file needs a new one.

pub use super::approval_request::{ApprovalRequest, Decision, PendingApproval};
use super::{ActiveRun, Resolved, WorkflowSource};
use crate::engine::events::{Actor, Change};
use crate::engine::{Engine, EngineError};
use crate::store::approvals::Approved;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Weak};
use tokio::sync::oneshot;

/// The right to answer approval requests, held by a front end with a person at it. While one
/// is held, runs that need approval wait for it; when the last is dropped, the requests still
/// waiting are denied (nobody is left to answer them).
#[derive(Debug)]
pub struct Approver {
    engine: Weak<Engine>,
}

impl Approver {
    /// Answers the request of run `run_id` whose [`ApprovalRequest::fingerprint`] is
    /// `shown`, the one the person saw: approving remembers the content as approved (a later
    /// run of the same content does not ask again) and lets the run start. A request that is
    /// not the one shown is left waiting, undecided.
    pub fn decide(
        &self,
        run_id: &str,
        shown: &str,
        approve: bool,
        by: &Actor,
    ) -> Result<ApprovalRequest, EngineError> {
        let engine = self.engine.upgrade().ok_or_else(|| {
            EngineError::InvalidParams("the engine has shut down: nothing to approve".into())
        })?;
        let run = engine
            .runs()
            .get(run_id)
            .ok_or_else(|| EngineError::RunNotFound(run_id.to_string()))?;
        let pending = take_if_shown(&run, run_id, shown)?;
        let request = pending.request;
        let by = by.clone();
        let decision = if approve {
            // Remembered before the run goes on: if it cannot be, the run keeps waiting (the
            // error says why) rather than run on an approval nobody will find again.
            if let Err(e) = engine.store().approve(
                &approval_key(&request),
                &request.version,
                &request.content,
                &by.label(),
            ) {
                *run.pending_approval() = Some(PendingApproval {
                    request,
                    answer: pending.answer,
                });
                return Err(e.into());
            }
            Decision::Approved { by }
        } else {
            Decision::Denied {
                by,
                why: format!(
                    "a person denied this run of `{}` in the studio (approval mode is on); do not retry it unchanged: ask them what they want instead",
                    request.workflow
                ),
            }
        };
        let _ = pending.answer.send(decision);
        Ok(request)
    }
}

impl Drop for Approver {
    fn drop(&mut self) {
        let Some(engine) = self.engine.upgrade() else {
            return;
        };
        if engine.approvers.fetch_sub(1, Ordering::AcqRel) != 1 {
            return;
        }
        for run in engine.runs().all_active() {
            if let Some(pending) = run.pending_approval().take() {
                let _ = pending.answer.send(Decision::Denied {
                    by: Actor::System,
                    why: format!(
                        "the studio closed before anyone approved this run of `{}` (approval mode is on)",
                        pending.request.workflow
                    ),
                });
            }
        }
    }
}

/// The run's pending request, taken only when it is the one shown (checked and taken under
/// one lock, so nothing can replace it between).
fn take_if_shown(
    run: &ActiveRun,
    run_id: &str,
    shown: &str,
) -> Result<PendingApproval, EngineError> {
    let mut slot = run.pending_approval();
    match slot.as_ref() {
        None => Err(EngineError::NotAwaitingApproval(run_id.to_string())),
        Some(pending) if pending.request.fingerprint() != shown => {
            Err(EngineError::ApprovalNotShown(run_id.to_string()))
        }
        Some(_) => slot
            .take()
            .ok_or_else(|| EngineError::NotAwaitingApproval(run_id.to_string())),
    }
}

/// Where a workflow's approvals are kept: its name, or for a manifest given whole a name of
/// its own (`inline:NAME`, which no workflow can have), so that approving text an agent sent
/// never approves the folder's file of that name.
fn approval_key(request: &ApprovalRequest) -> String {
    if request.inline {
        format!("inline:{}", request.workflow)
    } else {
        request.workflow.clone()
    }
}

impl Engine {
    /// Takes the right to answer approval requests (the studio takes it while it is open).
    pub fn attach_approver(self: &Arc<Self>) -> Approver {
        self.approvers.fetch_add(1, Ordering::AcqRel);
        Approver {
            engine: Arc::downgrade(self),
        }
    }

    /// Whether the engine was started in approval mode (an agent's connection may still ask
    /// for it for its own runs: [`crate::engine::RunRequest::require_approval`]).
    pub fn approval_mode(&self) -> bool {
        self.approval_mode.load(Ordering::Acquire)
    }

    /// Turns approval mode on for every agent from now on (a person who opens the studio
    /// with `--approve agent-runs` on a folder whose server runs without it). Only ever
    /// stricter: nothing turns it off while the engine lives.
    pub fn turn_on_approval_mode(&self) {
        if !self.approval_mode.swap(true, Ordering::AcqRel) {
            tracing::info!("approval mode turned on by a person");
        }
    }

    /// The runs waiting for approval, oldest first.
    pub fn approvals_pending(&self) -> Vec<ApprovalRequest> {
        let mut pending: Vec<ApprovalRequest> = self
            .runs()
            .all_active()
            .iter()
            .filter_map(|run| run.pending_approval().as_ref().map(|p| p.request.clone()))
            .collect();
        pending.sort_by(|a, b| a.run_id.cmp(&b.run_id));
        pending
    }

    /// Approves the content of workflow `name` that would run now, ahead of any request (the
    /// command line's `flowdeck approve`, for a headless host with nobody to ask).
    pub fn approve_workflow(&self, name: &str, by: &Actor) -> Result<Approved, EngineError> {
        let good = self.store().runnable_good(name)?;
        let content = String::from_utf8_lossy(&good.bytes);
        Ok(self
            .store()
            .approve(&good.workflow.name, &good.version, &content, &by.label())?)
    }

    /// What a run asks of a person before it starts: `None` when it needs no approval (not
    /// an agent's, approval mode off, or this exact content approved already). With nobody
    /// attached to answer, a run that needs approval is refused.
    pub(super) fn approval_needed(
        &self,
        run_id: &str,
        source: &WorkflowSource,
        resolved: &Resolved,
        actor: &Actor,
        asked_by_connection: bool,
    ) -> Result<Option<ApprovalRequest>, EngineError> {
        if !matches!(actor, Actor::Agent { .. }) || !(self.approval_mode() || asked_by_connection) {
            return Ok(None);
        }
        let inline = matches!(source, WorkflowSource::Inline(_));
        let mut request = ApprovalRequest {
            run_id: run_id.to_string(),
            workflow: resolved.workflow.name.clone(),
            version: resolved.version.clone(),
            agent: actor.clone(),
            requested_at: crate::engine::journal::now(),
            inline,
            content: String::from_utf8_lossy(&resolved.content).into_owned(),
            last_approved: None,
        };
        let key = approval_key(&request);
        if self.store().is_approved(&key, &request.version) {
            return Ok(None);
        }
        if self.approvers.load(Ordering::Acquire) == 0 {
            return Err(EngineError::NotApproved {
                workflow: request.workflow,
                why: "no studio is attached to approve it: open the studio on this folder (`flowdeck`), or approve the workflow's current content with `flowdeck approve NAME`".into(),
            });
        }
        request.last_approved = self.store().last_approved(&key);
        Ok(Some(request))
    }

    /// Puts the request before the approvers: from this instant it is pending (the run's
    /// status says so, and an approver can answer it). The answer comes on the receiver.
    pub(super) fn ask_approval(
        &self,
        run: &ActiveRun,
        request: ApprovalRequest,
    ) -> oneshot::Receiver<Decision> {
        let (answer, decided) = oneshot::channel();
        let (run_id, workflow, version, agent) = (
            request.run_id.clone(),
            request.workflow.clone(),
            request.version.clone(),
            request.agent.clone(),
        );
        *run.pending_approval() = Some(PendingApproval { request, answer });
        // The last approver may have left between the check and now: nobody would answer.
        if self.approvers.load(Ordering::Acquire) == 0
            && let Some(pending) = run.pending_approval().take()
        {
            let _ = pending.answer.send(Decision::Denied {
                by: Actor::System,
                why: format!(
                    "no studio is attached to approve this run of `{workflow}` (approval mode is on)"
                ),
            });
            return decided;
        }
        self.publish(
            agent,
            Change::ApprovalRequested {
                run_id,
                workflow,
                version,
            },
        );
        decided
    }

    /// Waits for the answer to the run's request, or for the run's cancellation (`None`),
    /// and announces that the request is settled.
    pub(super) async fn await_approval(
        &self,
        run: &ActiveRun,
        decided: oneshot::Receiver<Decision>,
    ) -> Option<Decision> {
        let (run_id, workflow) = (run.run_id.clone(), run.snapshot().workflow_name);
        let decision = tokio::select! {
            decided = decided => Some(decided.unwrap_or_else(|_| Decision::Denied {
                by: Actor::System,
                why: format!("the approval request for `{workflow}` was dropped unanswered"),
            })),
            () = run.cancel.cancelled() => {
                run.pending_approval().take();
                None
            }
        };
        let (by, approved) = match &decision {
            Some(Decision::Approved { by }) => (by.clone(), true),
            Some(Decision::Denied { by, .. }) => (by.clone(), false),
            None => (run.canceller().unwrap_or(Actor::System), false),
        };
        self.publish(
            by,
            Change::ApprovalSettled {
                run_id,
                workflow,
                approved,
            },
        );
        decision
    }
}
