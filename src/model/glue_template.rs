//! The script a new GLUE job starts with, per type: runnable as it is, and showing where the
//! run's parameter and shard come from and how a workflow node gives its output.

use super::GlueType;

/// The starting script of `glue_type`; empty for BEAN, which has none.
pub fn glue_template(glue_type: GlueType) -> &'static str {
    match glue_type {
        GlueType::Bean => "",
        GlueType::GlueGroovy => GROOVY,
        GlueType::GlueShell => SHELL,
        GlueType::GluePython | GlueType::GluePython2 => PYTHON,
        GlueType::GlueNodejs => NODEJS,
        GlueType::GluePhp => PHP,
        GlueType::GluePowershell => POWERSHELL,
    }
}

const SHELL: &str = r#"#!/bin/bash
# $1: the run's parameter; $2 and $3: its shard index and total (0 and 1 unless broadcast).
# Exit 0 for success. In a workflow, a last line that is a JSON object is the node's output.
set -euo pipefail
echo "param: ${1:-}, shard ${2:-0} of ${3:-1}"
echo '{"ok": true}'
"#;

const PYTHON: &str = r#"# sys.argv[1]: the run's parameter; sys.argv[2] and [3]: its shard index and total.
# Exit 0 for success. In a workflow, a last line that is a JSON object is the node's output.
import json
import sys

param = sys.argv[1] if len(sys.argv) > 1 else ""
print("param: %s, shard %s of %s" % (param, sys.argv[2], sys.argv[3]))
print(json.dumps({"ok": True}))
"#;

const NODEJS: &str = r#"// process.argv[2]: the run's parameter; [3] and [4]: its shard index and total.
// Exit 0 for success. In a workflow, a last line that is a JSON object is the node's output.
const [param = "", index = "0", total = "1"] = process.argv.slice(2);
console.log(`param: ${param}, shard ${index} of ${total}`);
console.log(JSON.stringify({ ok: true }));
"#;

const PHP: &str = r#"<?php
// $argv[1]: the run's parameter; $argv[2] and [3]: its shard index and total.
// Exit 0 for success. In a workflow, a last line that is a JSON object is the node's output.
$param = $argv[1] ?? "";
echo "param: $param, shard {$argv[2]} of {$argv[3]}\n";
echo json_encode(["ok" => true]), "\n";
"#;

const POWERSHELL: &str = r#"# $args[0]: the run's parameter; $args[1] and $args[2]: its shard index and total.
# Exit 0 for success. In a workflow, a last line that is a JSON object is the node's output.
$param = $args[0]
Write-Output "param: $param, shard $($args[1]) of $($args[2])"
Write-Output (@{ ok = $true } | ConvertTo-Json -Compress)
exit 0
"#;

const GROOVY: &str = r#"package com.xxl.job.service.handler;

import com.xxl.job.core.context.XxlJobHelper;
import com.xxl.job.core.handler.IJobHandler;

// GLUE(Java) runs on Java executors (xxl-job-core) only.
public class DemoGlueJobHandler extends IJobHandler {

    @Override
    public void execute() throws Exception {
        XxlJobHelper.log("param: " + XxlJobHelper.getJobParam());
        XxlJobHelper.handleSuccess("{\"ok\": true}");
    }

}
"#;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_script_type_starts_with_a_script() {
        for &glue in GlueType::ALL {
            let template = glue_template(glue);
            assert_eq!(template.is_empty(), glue == GlueType::Bean, "{glue:?}");
            assert!(template.is_empty() || template.ends_with('\n'), "{glue:?}");
        }
    }

    /// Each template runs under its interpreter, where it is installed, and its last line is
    /// the JSON object a workflow node reads as its output.
    #[test]
    fn the_templates_run_where_their_interpreter_is() {
        for &glue in GlueType::ALL {
            let (Some(interpreter), Some(suffix)) = (glue.interpreter(), glue.suffix()) else {
                continue;
            };
            let dir = tempfile::tempdir().expect("a folder");
            let file = dir.path().join(format!("t{suffix}"));
            std::fs::write(&file, glue_template(glue)).expect("written");
            let out = match std::process::Command::new(interpreter)
                .arg(&file)
                .args(["p1", "0", "1"])
                .output()
            {
                Ok(out) => out,
                Err(_) => continue, // not installed here
            };
            if glue == GlueType::GluePython2 && !out.status.success() {
                continue; // `python` may be missing or be another program
            }
            let stdout = String::from_utf8_lossy(&out.stdout);
            assert!(out.status.success(), "{glue:?}: {stdout} {out:?}");
            assert!(
                stdout.contains("param: p1, shard 0 of 1"),
                "{glue:?}: {stdout}"
            );
            let last = stdout
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("");
            let json: serde_json::Value = serde_json::from_str(last).expect("a JSON last line");
            assert_eq!(json["ok"], true, "{glue:?}");
        }
    }
}
