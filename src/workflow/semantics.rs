//! What happens next in a run, decided from its definition and where its nodes stand. No I/O:
//! the runner applies what this module decides.
//!
//! The rules (docs/architecture.md gives them in the same words):
//! - An edge is *satisfied* when its source ended with the matching outcome (SUCCESS: it
//!   succeeded; FAILURE: it failed; ALWAYS: any end; TRUE/FALSE: a DECISION node's result).
//! - A node whose parents have all ended or been skipped runs when at least one in-edge is
//!   satisfied and, for `join: ALL`, no in-edge from a parent that was not skipped is
//!   unsatisfied; otherwise it is SKIPPED, and skipping flows on.
//! - A failure blocks only its own descendants: independent branches run on.
//! - The run's end state is computed when nothing more can run: SUCCEEDED when no node FAILED
//!   without an outgoing FAILURE or ALWAYS edge (a handled failure), else FAILED.

use std::collections::{BTreeMap, BTreeSet};

use crate::model::{Definition, EdgeDef, EdgeWhen, Join, NodeState, RunState};

/// Where one node stands, as the rules read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeStand {
    /// Its state.
    pub state: NodeState,
    /// A DECISION node's result, once it has one.
    pub decision: Option<bool>,
}

impl NodeStand {
    /// A node in `state` with no decision.
    pub fn of(state: NodeState) -> Self {
        NodeStand {
            state,
            decision: None,
        }
    }
}

/// What the rules decide for the nodes still waiting.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Steps {
    /// Nodes that may run now (their in-edges allow it), sorted by key.
    pub run: Vec<String>,
    /// Nodes that will never run in this attempt, sorted by key.
    pub skip: Vec<String>,
}

/// Whether `edge` is satisfied by its source's stand; `None` while the source has not ended.
fn satisfied(edge: &EdgeDef, source: NodeStand) -> Option<bool> {
    let ended_well = match source.state {
        NodeState::Succeeded => true,
        NodeState::Failed | NodeState::Cancelled => false,
        NodeState::Skipped => return Some(false),
        NodeState::Waiting | NodeState::Running => return None,
    };
    let cancelled = source.state == NodeState::Cancelled;
    Some(match edge.when {
        EdgeWhen::Success => ended_well,
        EdgeWhen::Failure => !ended_well && !cancelled,
        EdgeWhen::Always => !cancelled,
        EdgeWhen::True => ended_well && source.decision == Some(true),
        EdgeWhen::False => ended_well && source.decision == Some(false),
    })
}

/// The nodes among those WAITING that may run now and those that never will, given `stands`
/// (every node's; a node missing counts as WAITING). Skipping flows on: a node skipped here
/// decides its children in the same call.
pub fn next_steps(def: &Definition, stands: &BTreeMap<String, NodeStand>) -> Steps {
    let mut stands = stands.clone();
    let mut steps = Steps::default();
    let in_edges: BTreeMap<&str, Vec<&EdgeDef>> =
        def.edges.iter().fold(BTreeMap::new(), |mut m, e| {
            m.entry(e.to.as_str()).or_default().push(e);
            m
        });
    let stand_of = |stands: &BTreeMap<String, NodeStand>, key: &str| {
        stands
            .get(key)
            .copied()
            .unwrap_or(NodeStand::of(NodeState::Waiting))
    };
    loop {
        let mut changed = false;
        for node in &def.nodes {
            if stand_of(&stands, &node.key).state != NodeState::Waiting
                || steps.run.contains(&node.key)
            {
                continue;
            }
            let edges = in_edges.get(node.key.as_str()).cloned().unwrap_or_default();
            let mut all_decided = true;
            let mut any = false;
            let mut unmet_from_live_parent = false;
            for e in &edges {
                let source = stand_of(&stands, &e.from);
                match satisfied(e, source) {
                    None => all_decided = false,
                    Some(true) => any = true,
                    Some(false) if source.state != NodeState::Skipped => {
                        unmet_from_live_parent = true
                    }
                    Some(false) => {}
                }
            }
            if !all_decided {
                continue;
            }
            let runs = edges.is_empty()
                || match node.join {
                    Join::All => any && !unmet_from_live_parent,
                    Join::Any => any,
                };
            if runs {
                steps.run.push(node.key.clone());
            } else {
                stands.insert(node.key.clone(), NodeStand::of(NodeState::Skipped));
                steps.skip.push(node.key.clone());
                changed = true;
            }
        }
        if !changed {
            break;
        }
    }
    steps.run.sort();
    steps.skip.sort();
    steps
}

/// How the run ends, once nothing more can run (no node WAITING or RUNNING); `None` before.
pub fn end_state(def: &Definition, stands: &BTreeMap<String, NodeStand>) -> Option<RunState> {
    let state = |key: &str| stands.get(key).map_or(NodeState::Waiting, |s| s.state);
    if def
        .nodes
        .iter()
        .any(|n| matches!(state(&n.key), NodeState::Waiting | NodeState::Running))
    {
        return None;
    }
    let handled: BTreeSet<&str> = def
        .edges
        .iter()
        .filter(|e| matches!(e.when, EdgeWhen::Failure | EdgeWhen::Always))
        .map(|e| e.from.as_str())
        .collect();
    let unhandled = def
        .nodes
        .iter()
        .any(|n| state(&n.key) == NodeState::Failed && !handled.contains(n.key.as_str()));
    Some(if unhandled {
        RunState::Failed
    } else {
        RunState::Succeeded
    })
}

/// The nodes downstream of `keys` (not `keys` themselves), by any edge.
pub fn descendants(def: &Definition, keys: &[String]) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    let mut frontier: Vec<&str> = keys.iter().map(String::as_str).collect();
    while let Some(at) = frontier.pop() {
        for e in def.edges.iter().filter(|e| e.from == at) {
            if found.insert(e.to.clone()) {
                frontier.push(&e.to);
            }
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{NodeDef, NodeKind};

    fn node(key: &str, kind: NodeKind, join: Join) -> NodeDef {
        NodeDef {
            key: key.into(),
            kind,
            job_id: (kind == NodeKind::Job).then_some(1),
            params: None,
            expression: (kind == NodeKind::Decision).then(|| "true".into()),
            join,
            retries: None,
            timeout_secs: None,
        }
    }

    fn job(key: &str) -> NodeDef {
        node(key, NodeKind::Job, Join::All)
    }

    fn edge(from: &str, to: &str, when: EdgeWhen) -> EdgeDef {
        EdgeDef {
            from: from.into(),
            to: to.into(),
            when,
        }
    }

    fn stands(pairs: &[(&str, NodeState)]) -> BTreeMap<String, NodeStand> {
        pairs
            .iter()
            .map(|(k, s)| (k.to_string(), NodeStand::of(*s)))
            .collect()
    }

    fn diamond() -> Definition {
        Definition {
            nodes: ["a", "b", "c", "d"].map(job).to_vec(),
            edges: vec![
                edge("a", "b", EdgeWhen::Success),
                edge("a", "c", EdgeWhen::Success),
                edge("b", "d", EdgeWhen::Success),
                edge("c", "d", EdgeWhen::Success),
            ],
        }
    }

    #[test]
    fn a_diamond_runs_its_root_then_both_sides_then_the_join_once() {
        let d = diamond();
        let s = next_steps(&d, &stands(&[]));
        assert_eq!(s.run, ["a"]);
        let s = next_steps(&d, &stands(&[("a", NodeState::Succeeded)]));
        assert_eq!(s.run, ["b", "c"]);
        // one side done: the join waits for the other
        let one = stands(&[
            ("a", NodeState::Succeeded),
            ("b", NodeState::Succeeded),
            ("c", NodeState::Running),
        ]);
        assert_eq!(next_steps(&d, &one), Steps::default());
        let both = stands(&[
            ("a", NodeState::Succeeded),
            ("b", NodeState::Succeeded),
            ("c", NodeState::Succeeded),
        ]);
        assert_eq!(next_steps(&d, &both).run, ["d"]);
        assert_eq!(end_state(&d, &both), None);
        let all = stands(&[
            ("a", NodeState::Succeeded),
            ("b", NodeState::Succeeded),
            ("c", NodeState::Succeeded),
            ("d", NodeState::Succeeded),
        ]);
        assert_eq!(end_state(&d, &all), Some(RunState::Succeeded));
    }

    #[test]
    fn a_failure_blocks_only_its_descendants_and_a_failure_edge_handles_it() {
        // a → b (SUCCESS) → c; a → fix (FAILURE); x independent
        let d = Definition {
            nodes: ["a", "b", "c", "fix", "x"].map(job).to_vec(),
            edges: vec![
                edge("a", "b", EdgeWhen::Success),
                edge("b", "c", EdgeWhen::Success),
                edge("a", "fix", EdgeWhen::Failure),
            ],
        };
        let s = next_steps(
            &d,
            &stands(&[("a", NodeState::Failed), ("x", NodeState::Running)]),
        );
        assert_eq!(s.run, ["fix"]);
        assert_eq!(s.skip, ["b", "c"], "skipping flows on");
        let done = stands(&[
            ("a", NodeState::Failed),
            ("b", NodeState::Skipped),
            ("c", NodeState::Skipped),
            ("fix", NodeState::Succeeded),
            ("x", NodeState::Succeeded),
        ]);
        assert_eq!(
            end_state(&d, &done),
            Some(RunState::Succeeded),
            "a handled failure"
        );
        let fix_failed = stands(&[
            ("a", NodeState::Failed),
            ("b", NodeState::Skipped),
            ("c", NodeState::Skipped),
            ("fix", NodeState::Failed),
            ("x", NodeState::Succeeded),
        ]);
        assert_eq!(end_state(&d, &fix_failed), Some(RunState::Failed));
        // the unhandled failure of an independent branch fails the run too
        let x_failed = stands(&[
            ("a", NodeState::Succeeded),
            ("b", NodeState::Succeeded),
            ("c", NodeState::Succeeded),
            ("fix", NodeState::Skipped),
            ("x", NodeState::Failed),
        ]);
        assert_eq!(end_state(&d, &x_failed), Some(RunState::Failed));
    }

    #[test]
    fn a_decision_sends_the_run_down_one_branch_and_the_join_after_both_runs_once() {
        // a → check; check TRUE → yes; check FALSE → no; yes, no → join (ANY) ; and ALL join `all`
        let d = Definition {
            nodes: vec![
                job("a"),
                node("check", NodeKind::Decision, Join::All),
                job("yes"),
                job("no"),
                node("join", NodeKind::Job, Join::Any),
                job("all"),
            ],
            edges: vec![
                edge("a", "check", EdgeWhen::Success),
                edge("check", "yes", EdgeWhen::True),
                edge("check", "no", EdgeWhen::False),
                edge("yes", "join", EdgeWhen::Success),
                edge("no", "join", EdgeWhen::Success),
                edge("yes", "all", EdgeWhen::Success),
                edge("no", "all", EdgeWhen::Success),
            ],
        };
        let mut st = stands(&[("a", NodeState::Succeeded)]);
        st.insert(
            "check".into(),
            NodeStand {
                state: NodeState::Succeeded,
                decision: Some(true),
            },
        );
        let s = next_steps(&d, &st);
        assert_eq!(s.run, ["yes"]);
        assert_eq!(s.skip, ["no"]);
        st.insert("no".into(), NodeStand::of(NodeState::Skipped));
        st.insert("yes".into(), NodeStand::of(NodeState::Succeeded));
        // ANY and ALL both run: the skipped parent's edge does not count against ALL
        assert_eq!(next_steps(&d, &st).run, ["all", "join"]);
    }

    #[test]
    fn join_all_waits_for_a_live_parent_and_skips_when_one_is_unmet() {
        let d = diamond();
        let st = stands(&[
            ("a", NodeState::Succeeded),
            ("b", NodeState::Succeeded),
            ("c", NodeState::Failed),
        ]);
        let s = next_steps(&d, &st);
        assert_eq!(s.skip, ["d"]);
        assert!(s.run.is_empty());
        let mut any = d.clone();
        any.nodes[3].join = Join::Any;
        assert_eq!(next_steps(&any, &st).run, ["d"]);
    }

    #[test]
    fn always_edges_follow_any_end_but_not_a_skip() {
        let d = Definition {
            nodes: ["a", "b", "cleanup"].map(job).to_vec(),
            edges: vec![
                edge("a", "b", EdgeWhen::Success),
                edge("b", "cleanup", EdgeWhen::Always),
            ],
        };
        let st = stands(&[("a", NodeState::Succeeded), ("b", NodeState::Failed)]);
        assert_eq!(next_steps(&d, &st).run, ["cleanup"]);
        let st = stands(&[("a", NodeState::Failed)]);
        assert_eq!(next_steps(&d, &st).skip, ["b", "cleanup"]);
    }

    #[test]
    fn descendants_follow_every_edge() {
        let d = diamond();
        let below = descendants(&d, &["b".to_string()]);
        assert_eq!(below.into_iter().collect::<Vec<_>>(), ["d"]);
        assert_eq!(descendants(&d, &["a".to_string()]).len(), 3);
    }
}
