//! A definition's shape: what makes one valid (keys, kinds, edges, no cycle) and its topological
//! layers. Every problem is found, each with the field it is in, so a form can show them all.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use crate::model::{Definition, EdgeWhen, NodeKind};

/// Most nodes a workflow may have.
pub const MAX_NODES: usize = 200;
/// Most edges a workflow may have.
pub const MAX_EDGES: usize = 1_000;
/// Longest node key.
pub const KEY_MAX: usize = 64;
/// Longest node parameter (a job's executorParam has the same limit).
pub const PARAMS_MAX: usize = 65_535;
/// Longest DECISION expression.
pub const EXPRESSION_MAX: usize = 1_024;

/// One problem of a definition: where (`nodes[2].key`, `edges[0].when`) and what.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Problem {
    /// The field to blame.
    pub field: String,
    /// What is wrong, in words.
    pub error: String,
}

/// More nodes or edges than a workflow may have: whoever checks a definition's nodes one by one
/// (their jobs, their expressions) asks this first, so a huge body costs nothing per node.
pub fn size_problems(def: &Definition) -> Vec<Problem> {
    let mut found = Vec::new();
    if def.nodes.len() > MAX_NODES {
        found.push(problem(
            "nodes",
            format!(
                "a workflow may have at most {MAX_NODES} nodes, not {}",
                def.nodes.len()
            ),
        ));
    }
    if def.edges.len() > MAX_EDGES {
        found.push(problem(
            "edges",
            format!(
                "a workflow may have at most {MAX_EDGES} edges, not {}",
                def.edges.len()
            ),
        ));
    }
    found
}

fn problem(field: impl Into<String>, error: impl Into<String>) -> Problem {
    Problem {
        field: field.into(),
        error: error.into(),
    }
}

/// Every structural problem of `def` (jobs and expressions are checked by the caller, which
/// knows the jobs and compiles expressions); empty when the graph is sound. A definition over
/// the size limits gets those problems alone: nothing is done per node of one.
pub fn problems(def: &Definition) -> Vec<Problem> {
    let mut found = size_problems(def);
    if !found.is_empty() {
        return found;
    }
    if def.nodes.is_empty() {
        found.push(problem("nodes", "a workflow needs at least one node"));
    }
    let mut keys: HashMap<&str, usize> = HashMap::new();
    for (i, node) in def.nodes.iter().enumerate() {
        let at = |f: &str| format!("nodes[{i}].{f}");
        let key = node.key.as_str();
        if key.is_empty() {
            found.push(problem(at("key"), "a node needs a key"));
        } else if key.chars().count() > KEY_MAX {
            found.push(problem(
                at("key"),
                format!("a node key has at most {KEY_MAX} characters"),
            ));
        } else if !key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
        {
            found.push(problem(
                at("key"),
                format!("node key '{key}' may hold only letters, digits, '_' and '-'"),
            ));
        } else if let Some(first) = keys.insert(key, i) {
            found.push(problem(
                at("key"),
                format!("node key '{key}' is used twice (nodes[{first}] and nodes[{i}])"),
            ));
        }
        match node.kind {
            NodeKind::Job => {
                if node.job_id.is_none() {
                    found.push(problem(
                        at("jobId"),
                        format!("JOB node '{key}' needs a jobId"),
                    ));
                }
                if node.expression.is_some() {
                    found.push(problem(
                        at("expression"),
                        format!("JOB node '{key}' takes no expression (only DECISION nodes do)"),
                    ));
                }
            }
            NodeKind::Decision => {
                if node
                    .expression
                    .as_deref()
                    .is_none_or(|e| e.trim().is_empty())
                {
                    found.push(problem(
                        at("expression"),
                        format!("DECISION node '{key}' needs an expression"),
                    ));
                }
                for (field, set) in [
                    ("jobId", node.job_id.is_some()),
                    ("params", node.params.is_some()),
                    ("retries", node.retries.is_some()),
                    ("timeoutSecs", node.timeout_secs.is_some()),
                ] {
                    if set {
                        found.push(problem(
                            at(field),
                            format!("DECISION node '{key}' takes no {field} (it runs no job)"),
                        ));
                    }
                }
            }
        }
        if node.params.as_ref().is_some_and(|p| p.len() > PARAMS_MAX) {
            found.push(problem(
                at("params"),
                format!("params may be at most {PARAMS_MAX} bytes"),
            ));
        }
        if node
            .expression
            .as_ref()
            .is_some_and(|e| e.len() > EXPRESSION_MAX)
        {
            found.push(problem(
                at("expression"),
                format!("an expression may be at most {EXPRESSION_MAX} bytes"),
            ));
        }
        if node.retries.is_some_and(|r| !(0..=10).contains(&r)) {
            found.push(problem(at("retries"), "retries must be 0 to 10"));
        }
        if node
            .timeout_secs
            .is_some_and(|t| !(0..=86_400 * 7).contains(&t))
        {
            found.push(problem(
                at("timeoutSecs"),
                "timeoutSecs must be 0 (none) to 604800 (a week)",
            ));
        }
    }
    let mut pairs = BTreeSet::new();
    for (i, edge) in def.edges.iter().enumerate() {
        let at = |f: &str| format!("edges[{i}].{f}");
        let from = keys.get(edge.from.as_str()).map(|&n| &def.nodes[n]);
        if from.is_none() {
            found.push(problem(
                at("from"),
                format!(
                    "edge {} → {} starts at no node: there is no node '{}'",
                    edge.from, edge.to, edge.from
                ),
            ));
        }
        if !keys.contains_key(edge.to.as_str()) {
            found.push(problem(
                at("to"),
                format!(
                    "edge {} → {} leads to no node: there is no node '{}'",
                    edge.from, edge.to, edge.to
                ),
            ));
        }
        if edge.from == edge.to {
            found.push(problem(
                at("to"),
                format!("edge {} → {} goes back to its own node", edge.from, edge.to),
            ));
        }
        if let Some(node) = from {
            let decision_only = matches!(edge.when, EdgeWhen::True | EdgeWhen::False);
            if decision_only && node.kind != NodeKind::Decision {
                found.push(problem(
                    at("when"),
                    format!(
                        "edge {} → {} is {}, which only a DECISION node's edges may be; '{}' is a JOB node",
                        edge.from, edge.to, edge.when, edge.from
                    ),
                ));
            }
        }
        if !pairs.insert((edge.from.as_str(), edge.to.as_str())) {
            found.push(problem(
                at("to"),
                format!(
                    "there are two edges {} → {}: one is enough",
                    edge.from, edge.to
                ),
            ));
        }
    }
    if found.is_empty() {
        if let Err(cycle) = layers(def) {
            found.push(problem(
                "edges",
                format!("the edges form a cycle: {}", cycle.join(" → ")),
            ));
        }
    }
    found
}

/// The nodes in topological layers (each layer's nodes have all their parents in earlier
/// layers, keys sorted within a layer), or a cycle found (its keys, the first repeated last).
pub fn layers(def: &Definition) -> Result<Vec<Vec<String>>, Vec<String>> {
    let mut parents: BTreeMap<&str, usize> =
        def.nodes.iter().map(|n| (n.key.as_str(), 0)).collect();
    let mut children: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for e in &def.edges {
        if parents.contains_key(e.to.as_str()) && parents.contains_key(e.from.as_str()) {
            *parents.entry(e.to.as_str()).or_default() += 1;
            children
                .entry(e.from.as_str())
                .or_default()
                .push(e.to.as_str());
        }
    }
    let mut layers = Vec::new();
    let mut ready: Vec<&str> = parents
        .iter()
        .filter(|(_, n)| **n == 0)
        .map(|(k, _)| *k)
        .collect();
    let mut placed = 0;
    while !ready.is_empty() {
        ready.sort_unstable();
        placed += ready.len();
        let mut next = Vec::new();
        for key in &ready {
            for child in children.get(key).into_iter().flatten() {
                let left = parents.get_mut(child).expect("every child is a node");
                *left -= 1;
                if *left == 0 {
                    next.push(*child);
                }
            }
        }
        layers.push(ready.iter().map(|k| k.to_string()).collect());
        ready = next;
    }
    if placed == parents.len() {
        return Ok(layers);
    }
    // a node left over is on a cycle or behind one, and has a parent left over (one never
    // placed): walking parents among the left-overs comes back to a node seen, on the cycle (a
    // node behind a cycle may have no child left over, so children are not walked)
    let left: BTreeSet<&str> = parents
        .iter()
        .filter(|(_, n)| **n > 0)
        .map(|(k, _)| *k)
        .collect();
    let start = *left.iter().next().expect("something is left");
    let mut path = vec![start];
    let mut seen: HashMap<&str, usize> = HashMap::from([(start, 0)]);
    let mut at = start;
    loop {
        let next = def
            .edges
            .iter()
            .find(|e| e.to == at && left.contains(e.from.as_str()))
            .map(|e| e.from.as_str())
            .expect("a node left over has a parent left over");
        if let Some(&i) = seen.get(next) {
            // walked against the edges: the cycle read forwards is the walk reversed
            let mut cycle: Vec<String> = vec![next.to_string()];
            cycle.extend(path[i..].iter().rev().map(|k| k.to_string()));
            return Err(cycle);
        }
        seen.insert(next, path.len());
        path.push(next);
        at = next;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EdgeDef, NodeDef};

    pub(crate) fn job(key: &str) -> NodeDef {
        NodeDef::job(key, 1)
    }

    pub(crate) fn edge(from: &str, to: &str, when: EdgeWhen) -> EdgeDef {
        EdgeDef {
            from: from.into(),
            to: to.into(),
            when,
        }
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
    fn a_diamond_has_three_layers() {
        let d = diamond();
        assert!(problems(&d).is_empty());
        assert_eq!(
            layers(&d).unwrap(),
            vec![vec!["a"], vec!["b", "c"], vec!["d"]]
        );
    }

    #[test]
    fn a_cycle_is_named() {
        let mut d = diamond();
        d.edges.push(edge("d", "a", EdgeWhen::Always));
        let found = problems(&d);
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].field, "edges");
        assert!(found[0].error.contains("cycle"), "{}", found[0].error);
        let cycle = layers(&d).unwrap_err();
        assert_eq!(cycle.first(), cycle.last());
        assert!(cycle.len() >= 4, "{cycle:?}");
    }

    #[test]
    fn a_node_behind_a_cycle_without_children_is_no_crash() {
        // `a` sorts first of the left-overs and has no child: the cycle is found through parents
        let d = Definition {
            nodes: ["a", "x", "y"].map(job).to_vec(),
            edges: vec![
                edge("x", "y", EdgeWhen::Success),
                edge("y", "x", EdgeWhen::Success),
                edge("x", "a", EdgeWhen::Success),
            ],
        };
        assert_eq!(layers(&d).unwrap_err(), ["x", "y", "x"]);
        let mut three = diamond();
        three.edges.push(edge("d", "b", EdgeWhen::Always));
        three.edges[2] = edge("b", "c", EdgeWhen::Success);
        three.edges[3] = edge("c", "d", EdgeWhen::Success);
        // b → c → d → b, read forwards
        assert_eq!(layers(&three).unwrap_err(), ["b", "c", "d", "b"]);
    }

    #[test]
    fn a_definition_over_the_limits_is_not_looked_at_node_by_node() {
        let d = Definition {
            nodes: (0..=MAX_NODES).map(|_| job("")).collect(),
            edges: Vec::new(),
        };
        let found = problems(&d);
        assert_eq!(found.len(), 1, "{found:?}");
        assert!(found[0].error.contains("at most 200 nodes"), "{found:?}");
    }

    #[test]
    fn every_problem_is_found_with_its_field() {
        let mut d = diamond();
        d.nodes.push(job("a"));
        d.nodes.push(NodeDef {
            kind: NodeKind::Decision,
            job_id: None,
            ..job("check")
        });
        d.nodes.push(NodeDef {
            key: "bad key!".into(),
            job_id: None,
            ..job("x")
        });
        d.edges.push(edge("b", "b", EdgeWhen::Success));
        d.edges.push(edge("a", "ghost", EdgeWhen::Success));
        d.edges.push(edge("a", "b", EdgeWhen::True));
        d.edges.push(edge("a", "d", EdgeWhen::Failure));
        let fields: Vec<String> = problems(&d).into_iter().map(|p| p.field).collect();
        for want in [
            "nodes[4].key",
            "nodes[5].expression",
            "nodes[6].key",
            "nodes[6].jobId",
            "edges[4].to",
            "edges[5].to",
            "edges[6].when",
        ] {
            assert!(fields.iter().any(|f| f == want), "{want} in {fields:?}");
        }
    }

    #[test]
    fn more_nodes_than_the_limit_are_refused() {
        let d = Definition {
            nodes: (0..=MAX_NODES).map(|i| job(&format!("n{i}"))).collect(),
            edges: Vec::new(),
        };
        assert!(problems(&d)
            .iter()
            .any(|p| p.field == "nodes" && p.error.contains("at most 200")));
    }
}
