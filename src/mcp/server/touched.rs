//! Which workflows a burst of engine events touched, and whether the attention list changed,
//! told to subscribers once per burst (everything, when events were missed).

// A tool error is built at most once per failed call and returned straight to the client;
// boxing it would buy nothing but indirection.
#![allow(clippy::result_large_err)]

use crate::mcp::resources;
use tokio::sync::broadcast;
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

/// The workflows that the next engine events touched: the first event waited for, then every
/// one already queued behind it, so that a storm of saves costs each client one set of
/// notifications (list changed is list changed, however many times) rather than one per save.
/// `None` once the engine is gone. Both MCP listeners (the 2025 protocol's notifications and
/// the 2026 `subscriptions/listen` stream) use it.
pub(super) async fn next_touched(
    events: &mut broadcast::Receiver<crate::engine::EngineEvent>,
) -> Option<Touched> {
    let mut touched = Touched::default();
    touched.add(events.recv().await)?;
    loop {
        match events.try_recv() {
            Err(TryRecvError::Empty) => return Some(touched),
            event => touched.add(event.map_err(|e| match e {
                TryRecvError::Lagged(n) => RecvError::Lagged(n),
                _ => RecvError::Closed,
            }))?,
        }
    }
}

/// Workflows that events touched: named ones, or any of them when changes were missed.
#[derive(Debug, Default)]
pub(super) struct Touched {
    any: bool,
    names: std::collections::BTreeSet<String>,
    /// The attention list changed (flowdeck://attention).
    attention: bool,
}

impl Touched {
    /// Adds what one event touched; `None` once the engine is gone.
    pub(super) fn add(
        &mut self,
        event: Result<crate::engine::EngineEvent, RecvError>,
    ) -> Option<()> {
        match event {
            Ok(event) => match (&event.change, event.workflow()) {
                // Changes were missed: anything may have changed.
                (crate::engine::Change::WorkflowsResync { .. }, _) => self.any = true,
                (crate::engine::Change::AttentionChanged { .. }, _) => self.attention = true,
                (_, Some(name)) => {
                    self.names.insert(name.to_string());
                }
                (_, None) => {}
            },
            // This listener fell behind: the same.
            Err(RecvError::Lagged(_)) => {
                self.any = true;
                self.attention = true;
            }
            Err(RecvError::Closed) => return None,
        }
        Some(())
    }

    pub(super) fn is_empty(&self) -> bool {
        !self.workflows() && !self.attention
    }

    /// Whether any workflow was touched: the tool and resource lists may have changed.
    pub(super) fn workflows(&self) -> bool {
        self.any || !self.names.is_empty()
    }

    /// Of the `subscribed` resources, those this burst changed.
    pub(super) fn updated<'a>(
        &self,
        subscribed: impl Iterator<Item = &'a String>,
    ) -> std::collections::BTreeSet<String> {
        subscribed
            .filter(|uri| {
                (self.attention && uri.as_str() == resources::ATTENTION)
                    || self.names().any(|name| is_about(uri, name))
            })
            .cloned()
            .collect()
    }

    /// Each workflow touched by name, or `None` alone (any workflow) when changes were missed.
    pub(super) fn names(&self) -> Box<dyn Iterator<Item = Option<&str>> + '_> {
        if self.any {
            Box::new(std::iter::once(None))
        } else {
            Box::new(self.names.iter().map(|n| Some(n.as_str())))
        }
    }
}

/// Whether resource `uri` is about workflow `name` (about any workflow, for `None`).
pub(super) fn is_about(uri: &str, name: Option<&str>) -> bool {
    uri == resources::WORKFLOWS
        || match name {
            Some(name) => uri.strip_prefix(resources::WORKFLOW_PREFIX) == Some(name),
            None => uri.starts_with(resources::WORKFLOW_PREFIX),
        }
}
