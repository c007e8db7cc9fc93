//! What the attention list remembers: runs that ended and nobody has seen since, terminals
//! whose end was seen, since when each item is in its state, and the list last told.

use super::derive::{self, Ended, Found};
use super::{Acknowledged, AttentionItem, AttentionList, AttentionState};
use crate::engine::Change;
use crate::engine::result::FinalState;
use crate::engine::{RunStatus, SessionInfo};
use chrono::{DateTime, SecondsFormat, Utc};
use std::collections::{HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

/// Endings kept unseen at most; past it the oldest completed ones go first.
const MOST_ENDED: usize = 500;

#[derive(Debug, Default)]
pub(in crate::engine) struct Keeper {
    inner: Mutex<Kept>,
    /// Held from reading the list to telling it, so that lists are told in the order they
    /// were read. Apart from `inner`, which a snapshot takes while it holds the event
    /// stream still.
    telling: Mutex<()>,
}

#[derive(Debug, Default)]
struct Kept {
    /// Runs that ended and nobody has seen since, by id, with the order they ended in.
    ended: HashMap<String, Ended>,
    ended_order: HashMap<String, u64>,
    endings: u64,
    /// Terminals whose end someone saw.
    seen_exits: HashSet<String>,
    /// Each item's state and since when.
    since: HashMap<String, (AttentionState, DateTime<Utc>)>,
    /// Terminals quiet when last read: their next output changes the list.
    quiet: HashSet<String>,
    told: AttentionList,
}

impl Keeper {
    fn lock(&self) -> MutexGuard<'_, Kept> {
        // Maps with no invariant across them that a panic could break half-way.
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn telling(&self) -> MutexGuard<'_, ()> {
        self.telling.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub(super) fn told(&self) -> AttentionList {
        self.lock().told.clone()
    }

    pub(super) fn run_ended(&self, ended: Ended) {
        let mut kept = self.lock();
        kept.endings += 1;
        let n = kept.endings;
        kept.ended_order.insert(ended.run_id.clone(), n);
        kept.ended.insert(ended.run_id.clone(), ended);
        if kept.ended.len() > MOST_ENDED {
            // The oldest of the completed ones, else the oldest: what a person misses least.
            let order = |id: &str| kept.ended_order.get(id).copied().unwrap_or(0);
            let oldest = kept
                .ended
                .values()
                .min_by_key(|e| (e.final_state != FinalState::Completed, order(&e.run_id)))
                .map(|e| e.run_id.clone());
            if let Some(id) = oldest {
                kept.ended.remove(&id);
                kept.ended_order.remove(&id);
            }
        }
    }

    /// Whether an event can change the list: anything about a run, an approval or a
    /// terminal's life, and output of a terminal that was quiet.
    pub(super) fn concerns(&self, change: &Change) -> bool {
        match change {
            Change::Run { .. }
            | Change::ApprovalRequested { .. }
            | Change::ApprovalSettled { .. }
            | Change::SessionOpened { .. }
            | Change::SessionExited { .. }
            | Change::SessionFailed { .. }
            | Change::SessionClosed { .. } => true,
            Change::SessionActivity { session_id, .. } => self.lock().quiet.contains(session_id),
            _ => false,
        }
    }

    pub(super) fn acknowledge(&self, ids: &[String], sessions: &[SessionInfo]) -> Acknowledged {
        let mut kept = self.lock();
        let mut acknowledged = Acknowledged::default();
        for id in ids {
            let ended_session = sessions
                .iter()
                .any(|s| &s.session_id == id && (s.exit.is_some() || s.failed.is_some()));
            if kept.ended.remove(id).is_some() {
                kept.ended_order.remove(id);
                acknowledged.cleared.push(id.clone());
            } else if ended_session && kept.seen_exits.insert(id.clone()) {
                acknowledged.cleared.push(id.clone());
            } else {
                acknowledged.ignored.push(id.clone());
            }
        }
        acknowledged
    }

    /// Reads the list from the engine's state: the list, whether it differs from the one
    /// last told (which it now is), and how long until a terminal turns quiet.
    pub(super) fn refresh(
        &self,
        runs: &[RunStatus],
        sessions: &[(SessionInfo, Duration)],
        quiet_after: Option<Duration>,
        shown: &dyn Fn(&str) -> bool,
    ) -> (AttentionList, bool, Option<Duration>) {
        let now = Utc::now();
        let mut kept = self.lock();
        // A terminal that ended while a studio showed it has been seen.
        for (session, _) in sessions {
            if (session.exit.is_some() || session.failed.is_some()) && shown(&session.session_id) {
                kept.seen_exits.insert(session.session_id.clone());
            }
        }
        let open: HashSet<&str> = sessions
            .iter()
            .map(|(s, _)| s.session_id.as_str())
            .collect();
        kept.seen_exits.retain(|id| open.contains(id.as_str()));
        // A run whose end is kept is no longer active, whatever the registry still says.
        let active: Vec<&RunStatus> = runs
            .iter()
            .filter(|r| !kept.ended.contains_key(&r.run_id))
            .collect();
        let found = derive::items(&derive::Seen {
            active: &active,
            ended: &kept.ended,
            sessions,
            seen_exits: &kept.seen_exits,
            quiet_after,
        });
        let next = derive::next_quiet(sessions, quiet_after);
        let mut items = Vec::with_capacity(found.len());
        let mut since = HashMap::with_capacity(found.len());
        for Found { item, since: fixed } in found {
            let at = match kept.since.get(&item.id) {
                Some((state, at)) if *state == item.state => *at,
                _ => fixed.unwrap_or(now),
            };
            since.insert(item.id.clone(), (item.state, at));
            items.push(AttentionItem {
                since: at.to_rfc3339_opts(SecondsFormat::Millis, true),
                ..item
            });
        }
        kept.since = since;
        kept.quiet = items
            .iter()
            .filter(|i| i.state == AttentionState::Quiet)
            .filter_map(|i| i.session_id.clone())
            .collect();
        let list = AttentionList::new(items);
        let changed = list != kept.told;
        if changed {
            kept.told = list.clone();
        }
        (list, changed, next)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ended(id: &str, final_state: FinalState) -> Ended {
        Ended {
            run_id: id.into(),
            workflow: "deploy".into(),
            final_state,
            error: None,
            session_id: None,
            by: None,
            at: Utc::now(),
        }
    }

    fn refresh(keeper: &Keeper) -> (AttentionList, bool) {
        let (list, changed, _) = keeper.refresh(&[], &[], None, &|_| false);
        (list, changed)
    }

    #[test]
    fn an_ending_stays_until_acknowledged_and_is_told_once_each_way() {
        let keeper = Keeper::default();
        keeper.run_ended(ended("r1", FinalState::Timeout));
        let (list, changed) = refresh(&keeper);
        assert!(changed);
        assert_eq!(list.counts.failed, 1);
        assert_eq!(refresh(&keeper), (list.clone(), false), "told once");
        assert_eq!(keeper.told(), list);
        let acked = keeper.acknowledge(&["r1".into(), "r1".into()], &[]);
        assert_eq!(acked.cleared, vec!["r1".to_string()]);
        assert_eq!(
            acked.ignored,
            vec!["r1".to_string()],
            "the second finds nothing"
        );
        let (list, changed) = refresh(&keeper);
        assert!(changed && list.items.is_empty(), "{list:?}");
    }

    #[test]
    fn past_the_bound_the_oldest_completed_ending_goes_first() {
        let keeper = Keeper::default();
        keeper.run_ended(ended("failed", FinalState::Error));
        for n in 0..MOST_ENDED {
            keeper.run_ended(ended(&format!("ok{n}"), FinalState::Completed));
        }
        let (list, _) = refresh(&keeper);
        assert_eq!(list.items.len(), MOST_ENDED);
        assert!(list.get("failed").is_some(), "what failed is kept longest");
        assert!(list.get("ok0").is_none(), "the oldest completed went");
    }
}
