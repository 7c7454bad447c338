//! Run definitions parsed once: a workflow run's row holds its definition as JSON, and every
//! move of the run reads the row again. Runs of one workflow version share one parsed copy.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::model::Definition;

/// Definitions kept at most (a definition of 200 nodes is some tens of KiB, twice over: text and
/// parsed); past this the cache starts again, and the versions in use come back at their next
/// move.
const KEPT: usize = 256;

/// Parsed definitions by workflow and version, each with the JSON it was parsed from (a
/// workflow id used again after a delete, or a hand-edited row, is parsed anew).
#[derive(Debug, Default, Clone)]
pub(crate) struct Definitions(Arc<Mutex<Kept>>);

/// The parsed definitions by (workflow, version), each with its text.
type Kept = HashMap<(i32, i32), (String, Arc<Definition>)>;

impl Definitions {
    /// The definition `json` of version `version` of workflow `workflow_id`, parsed or shared.
    pub(crate) fn parse(
        &self,
        workflow_id: i32,
        version: i32,
        json: String,
    ) -> Result<Arc<Definition>, String> {
        let key = (workflow_id, version);
        if let Ok(kept) = self.0.lock() {
            if let Some((text, def)) = kept.get(&key) {
                if *text == json {
                    return Ok(def.clone());
                }
            }
        }
        let def = Arc::new(Definition::from_json(&json)?);
        if let Ok(mut kept) = self.0.lock() {
            if kept.len() >= KEPT && !kept.contains_key(&key) {
                kept.clear();
            }
            kept.insert(key, (json, def.clone()));
        }
        Ok(def)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_version_is_parsed_once_and_a_changed_text_again() {
        let defs = Definitions::default();
        let json = Definition::default().to_json();
        let a = defs.parse(1, 1, json.clone()).unwrap();
        let b = defs.parse(1, 1, json.clone()).unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        let other = format!("{json} ");
        let c = defs.parse(1, 1, other).unwrap();
        assert!(!Arc::ptr_eq(&a, &c));
        assert!(defs.parse(2, 1, "not json".into()).is_err());
    }
}
