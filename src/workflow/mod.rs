//! Workflows: DAGs of jobs. This module holds what needs no database and no actor: a
//! definition's rules ([`graph`]), what runs next and how a run ends ([`semantics`]), the run's
//! context and node parameters ([`context`]), DECISION expressions ([`decision`]) and the graph's
//! drawing ([`svg`]). The runner (`actors::workflow_runner`) applies them; the store keeps them.

pub mod context;
pub mod decision;
pub mod graph;
pub mod semantics;
pub mod svg;
