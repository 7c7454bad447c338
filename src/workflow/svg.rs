//! The graph drawn as SVG: nodes in topological layers from left to right (the layer order within
//! a column chosen to cross few edges), edges as curves labelled with their condition, each node
//! coloured by its state when a run is drawn. Served by `GET /api/v1/workflows/{id}/graph.svg`
//! and embedded in the console's pages; it loads nothing.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::graph::layers;
use crate::model::{Definition, EdgeWhen, NodeKind, NodeState};

const NODE_W: i32 = 168;
const NODE_H: i32 = 48;
const GAP_X: i32 = 72;
const GAP_Y: i32 = 28;
const MARGIN: i32 = 16;
/// Characters of a label that fit in a node.
const LABEL_CHARS: usize = 22;

/// What to draw beside the definition.
#[derive(Debug, Default, Clone)]
pub struct Drawing<'a> {
    /// Each node's state (a run's graph); none for a definition.
    pub states: Option<&'a BTreeMap<String, NodeState>>,
    /// A second line per node: the job's name, say.
    pub captions: BTreeMap<String, String>,
}

/// Where each node goes: its column and row.
fn place(def: &Definition) -> BTreeMap<String, (usize, usize)> {
    // a definition with a cycle (not saved, but drawn while edited) goes in one column
    let mut columns =
        layers(def).unwrap_or_else(|_| vec![def.nodes.iter().map(|n| n.key.clone()).collect()]);
    let parents_of = |key: &str| -> Vec<&str> {
        def.edges
            .iter()
            .filter(|e| e.to == key)
            .map(|e| e.from.as_str())
            .collect()
    };
    // barycentre ordering: each column sorted by the mean row of its parents in earlier columns
    let mut rows: BTreeMap<String, usize> = BTreeMap::new();
    for column in columns.iter_mut() {
        let weight = |key: &String| -> f64 {
            let placed: Vec<usize> = parents_of(key)
                .iter()
                .filter_map(|p| rows.get(*p).copied())
                .collect();
            match placed.is_empty() {
                true => f64::MAX,
                false => placed.iter().sum::<usize>() as f64 / placed.len() as f64,
            }
        };
        let mut weighted: Vec<(f64, String)> =
            column.iter().map(|k| (weight(k), k.clone())).collect();
        weighted.sort_by(|a, b| a.0.total_cmp(&b.0).then_with(|| a.1.cmp(&b.1)));
        *column = weighted.into_iter().map(|(_, k)| k).collect();
        for (row, key) in column.iter().enumerate() {
            rows.insert(key.clone(), row);
        }
    }
    let mut at = BTreeMap::new();
    for (col, column) in columns.iter().enumerate() {
        for (row, key) in column.iter().enumerate() {
            at.insert(key.clone(), (col, row));
        }
    }
    at
}

/// XML text with the five special characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c if c.is_control() => out.push(' '),
            c => out.push(c),
        }
    }
    out
}

/// `text` cut to fit a node, with an ellipsis when cut.
fn fit(text: &str) -> String {
    match text.chars().count() > LABEL_CHARS {
        true => text.chars().take(LABEL_CHARS - 1).collect::<String>() + "…",
        false => text.to_string(),
    }
}

/// Fill and stroke of a node in `state` (or of a definition's node).
fn colours(state: Option<NodeState>) -> (&'static str, &'static str) {
    match state {
        None => ("#ffffff", "#5b6b7f"),
        Some(NodeState::Waiting) => ("#f1f3f5", "#868e96"),
        Some(NodeState::Running) => ("#dbe9ff", "#1c64d9"),
        Some(NodeState::Succeeded) => ("#dcf5e3", "#1d7a3a"),
        Some(NodeState::Failed) => ("#fde2e1", "#c0262d"),
        Some(NodeState::Skipped) => ("#f8f9fa", "#adb5bd"),
        Some(NodeState::Cancelled) => ("#fff1d6", "#a86400"),
    }
}

fn edge_colour(when: EdgeWhen) -> &'static str {
    match when {
        EdgeWhen::Success | EdgeWhen::True => "#1d7a3a",
        EdgeWhen::Failure | EdgeWhen::False => "#c0262d",
        EdgeWhen::Always => "#5b6b7f",
    }
}

/// The graph of `def` as an SVG document, sized to fit.
pub fn render(def: &Definition, drawing: &Drawing<'_>) -> String {
    let at = place(def);
    let cols = at.values().map(|(c, _)| c + 1).max().unwrap_or(1) as i32;
    let rows = at.values().map(|(_, r)| r + 1).max().unwrap_or(1) as i32;
    let width = MARGIN * 2 + cols * NODE_W + (cols - 1) * GAP_X;
    let height = MARGIN * 2 + rows * NODE_H + (rows - 1) * GAP_Y;
    let origin = |key: &str| -> Option<(i32, i32)> {
        at.get(key).map(|&(c, r)| {
            (
                MARGIN + c as i32 * (NODE_W + GAP_X),
                MARGIN + r as i32 * (NODE_H + GAP_Y),
            )
        })
    };
    let mut svg = String::new();
    let _ = write!(
        svg,
        r##"<svg xmlns="http://www.w3.org/2000/svg" class="wf-graph" viewBox="0 0 {width} {height}" width="{width}" height="{height}" role="img" font-family="system-ui, sans-serif" font-size="12"><title>{}</title>"##,
        escape(&format!(
            "workflow graph: {} nodes, {} edges",
            def.nodes.len(),
            def.edges.len()
        ))
    );
    for (i, edge) in def.edges.iter().enumerate() {
        let (Some((x1, y1)), Some((x2, y2))) = (origin(&edge.from), origin(&edge.to)) else {
            continue;
        };
        let (sx, sy) = (x1 + NODE_W, y1 + NODE_H / 2);
        let (tx, ty) = (x2, y2 + NODE_H / 2);
        let bend = ((tx - sx).abs() / 2).max(24);
        let colour = edge_colour(edge.when);
        let dash = if edge.when == EdgeWhen::Always {
            r#" stroke-dasharray="4 3""#
        } else {
            ""
        };
        let _ = write!(
            svg,
            r##"<g class="wf-edge" data-from="{}" data-to="{}" data-when="{}"><path d="M{sx},{sy} C{},{sy} {},{ty} {tx},{ty}" fill="none" stroke="{colour}" stroke-width="1.5"{dash} marker-end="url(#wf-arrow-{i})"/><marker id="wf-arrow-{i}" viewBox="0 0 8 8" refX="8" refY="4" markerWidth="8" markerHeight="8" orient="auto"><path d="M0,0 L8,4 L0,8 z" fill="{colour}"/></marker>"##,
            escape(&edge.from),
            escape(&edge.to),
            edge.when,
            sx + bend,
            tx - bend,
        );
        if edge.when != EdgeWhen::Success {
            let (lx, ly) = ((sx + tx) / 2, (sy + ty) / 2 - 4);
            let _ = write!(
                svg,
                r##"<text x="{lx}" y="{ly}" text-anchor="middle" fill="{colour}" font-size="10" paint-order="stroke" stroke="#ffffff" stroke-width="3">{}</text>"##,
                edge.when
            );
        }
        svg.push_str("</g>");
    }
    for node in &def.nodes {
        let Some((x, y)) = origin(&node.key) else {
            continue;
        };
        let state = drawing.states.and_then(|s| s.get(&node.key).copied());
        let (fill, stroke) = colours(state);
        let kind = match node.kind {
            NodeKind::Job => "JOB",
            NodeKind::Decision => "DECISION",
        };
        let caption = drawing
            .captions
            .get(&node.key)
            .cloned()
            .unwrap_or_else(|| match node.kind {
                NodeKind::Job => format!("job {}", node.job_id.unwrap_or(0)),
                NodeKind::Decision => node.expression.clone().unwrap_or_default(),
            });
        let state_text = state.map(|s| format!(" · {s}")).unwrap_or_default();
        let rx = if node.kind == NodeKind::Decision {
            16
        } else {
            6
        };
        let _ = write!(
            svg,
            r##"<g class="wf-node" data-key="{key}" data-kind="{kind}"{data_state}><title>{title}</title><rect x="{x}" y="{y}" width="{NODE_W}" height="{NODE_H}" rx="{rx}" fill="{fill}" stroke="{stroke}" stroke-width="{sw}"/><text x="{tx}" y="{ty1}" font-weight="600" fill="#1b1f24">{label}</text><text x="{tx}" y="{ty2}" fill="#454f5b" font-size="11">{caption}</text></g>"##,
            key = escape(&node.key),
            data_state = state
                .map(|s| format!(r#" data-state="{s}""#))
                .unwrap_or_default(),
            title = escape(&format!("{} ({kind}{state_text}): {caption}", node.key)),
            sw = if state == Some(NodeState::Running) {
                2.5
            } else {
                1.5
            },
            tx = x + 10,
            ty1 = y + 19,
            ty2 = y + 37,
            label = escape(&fit(&node.key)),
            caption = escape(&fit(&format!("{kind} · {caption}"))),
        );
    }
    svg.push_str("</svg>");
    svg
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{EdgeDef, Join, NodeDef};

    fn node(key: &str, kind: NodeKind) -> NodeDef {
        NodeDef {
            key: key.into(),
            kind,
            job_id: (kind == NodeKind::Job).then_some(1),
            params: None,
            expression: (kind == NodeKind::Decision).then(|| "context.rows > 1".into()),
            join: Join::All,
            retries: None,
            timeout_secs: None,
        }
    }

    fn edge(from: &str, to: &str, when: EdgeWhen) -> EdgeDef {
        EdgeDef {
            from: from.into(),
            to: to.into(),
            when,
        }
    }

    #[test]
    fn a_diamond_is_drawn_in_three_columns_with_its_states() {
        let def = Definition {
            nodes: vec![
                node("a", NodeKind::Job),
                node("b", NodeKind::Job),
                node("c<&>", NodeKind::Decision),
                node("d", NodeKind::Job),
            ],
            edges: vec![
                edge("a", "b", EdgeWhen::Success),
                edge("a", "c<&>", EdgeWhen::Always),
                edge("b", "d", EdgeWhen::Success),
                edge("c<&>", "d", EdgeWhen::True),
            ],
        };
        let at = place(&def);
        assert_eq!(at["a"].0, 0);
        assert_eq!((at["b"].0, at["c<&>"].0), (1, 1));
        assert_eq!(at["d"].0, 2);
        let states = BTreeMap::from([
            ("a".to_string(), NodeState::Succeeded),
            ("b".to_string(), NodeState::Running),
        ]);
        let svg = render(
            &def,
            &Drawing {
                states: Some(&states),
                captions: BTreeMap::from([("a".to_string(), "extract <rows>".to_string())]),
            },
        );
        assert!(svg.starts_with("<svg") && svg.ends_with("</svg>"));
        assert_eq!(svg.matches(r#"class="wf-node""#).count(), 4);
        assert_eq!(svg.matches(r#"class="wf-edge""#).count(), 4);
        assert!(svg.contains(r#"data-key="a" data-kind="JOB" data-state="SUCCEEDED""#));
        assert!(svg.contains(r#"data-state="RUNNING""#));
        assert!(svg.contains("c&lt;&amp;&gt;"), "keys are escaped");
        assert!(svg.contains("extract &lt;rows&gt;"), "captions are escaped");
        assert!(!svg.contains("<rows>"));
        assert!(svg.contains(">ALWAYS<") && svg.contains(">TRUE<"));
    }

    #[test]
    fn a_graph_with_a_cycle_is_still_drawn() {
        let def = Definition {
            nodes: vec![node("a", NodeKind::Job), node("b", NodeKind::Job)],
            edges: vec![
                edge("a", "b", EdgeWhen::Success),
                edge("b", "a", EdgeWhen::Success),
            ],
        };
        let svg = render(&def, &Drawing::default());
        assert_eq!(svg.matches(r#"class="wf-node""#).count(), 2);
    }
}
