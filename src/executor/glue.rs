//! GLUE script jobs: the script file, the child process in its own process group (recorded
//! while it runs, see `script_records`), output into the run log (its last line a workflow
//! node's output, see `script_output`), and termination of the whole group on kill or timeout.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, Command};

use super::context::JobContext;
use super::handler::{JobResult, OUTPUT_MAX_BYTES};
use super::process_group::{signal_group, TERM_GRACE};
use super::run_log::{LineBuffer, RunLog};
use super::script_output::{LastLine, ScriptOutput};
use super::script_records;
use crate::protocol::GlueType;

/// How long output copiers may keep reading after the script ended (a detached child may hold the pipe).
const OUTPUT_DRAIN: Duration = Duration::from_secs(1);

/// One version of a job's script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ScriptSpec {
    pub(crate) job_id: i32,
    pub(crate) glue_type: GlueType,
    pub(crate) updatetime: i64,
    pub(crate) source: String,
}

impl ScriptSpec {
    /// `{log-path}/gluesource/{jobId}_{glueUpdatetime}{suffix}`, as the Java executor names it.
    pub(crate) fn file(&self, log_base: &Path) -> PathBuf {
        glue_dir(log_base).join(format!(
            "{}_{}{}",
            self.job_id,
            self.updatetime,
            self.glue_type.suffix().unwrap_or("")
        ))
    }
}

fn glue_dir(log_base: &Path) -> PathBuf {
    log_base.join("gluesource")
}

/// Writes the script file if this version has none yet, removing the job's older versions.
fn prepare(spec: &ScriptSpec, log_base: &Path) -> std::io::Result<PathBuf> {
    let file = spec.file(log_base);
    if file.exists() {
        return Ok(file);
    }
    let dir = glue_dir(log_base);
    std::fs::create_dir_all(&dir)?;
    let prefix = format!("{}_", spec.job_id);
    for entry in std::fs::read_dir(&dir)?.flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if name.starts_with(&prefix) {
            // a stale version must not be picked up again; failing to delete it is harmless
            let _ = std::fs::remove_file(entry.path());
        }
    }
    let tmp = dir.join(format!(".{}.{}.tmp", spec.job_id, uuid::Uuid::new_v4()));
    std::fs::write(&tmp, spec.source.as_bytes())?;
    std::fs::rename(&tmp, &file)?;
    Ok(file)
}

/// Runs one trigger of a script job; returns when the script and its process group are gone.
pub(crate) async fn run(spec: &ScriptSpec, ctx: &JobContext, log_base: &Path) -> JobResult {
    let Some(interpreter) = spec.glue_type.interpreter() else {
        return JobResult::fail(format!("glueType[{}] is not a script", spec.glue_type));
    };
    let file = {
        let spec = spec.clone();
        let base = log_base.to_path_buf();
        match tokio::task::spawn_blocking(move || prepare(&spec, &base)).await {
            Ok(Ok(f)) => f,
            Ok(Err(e)) => return JobResult::fail(format!("cannot write the script file: {e}")),
            Err(e) => return JobResult::fail(format!("cannot write the script file: {e}")),
        }
    };
    ctx.log(format!(
        "----------- script file:{} -----------",
        file.display()
    ));

    let mut cmd = Command::new(interpreter);
    cmd.arg(&file)
        .arg(ctx.param())
        .arg(ctx.shard_index().to_string())
        .arg(ctx.shard_total().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // its own group, so that kill/timeout reach everything the script started
        .process_group(0)
        .kill_on_drop(true);
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) if e.kind() == ErrorKind::NotFound => {
            let msg = format!(
                "script interpreter [{interpreter}] for {} not found on PATH: {e}",
                spec.glue_type
            );
            ctx.log(&msg);
            return JobResult::fail(msg);
        }
        Err(e) => {
            let msg = format!("cannot start script interpreter [{interpreter}]: {e}");
            ctx.log(&msg);
            return JobResult::fail(msg);
        }
    };
    let pid = child.id().and_then(|p| i32::try_from(p).ok());
    // kept until the script is reaped, for the next executor should this one die first
    let _recorded = pid.map(|pgid| script_records::record(log_base, ctx, pgid));
    let stdout = child.stdout.take().map(|s| {
        tokio::spawn(copy_into(
            s,
            ctx.job_log().clone(),
            Some(LastLine::default()),
        ))
    });
    let stderr = child
        .stderr
        .take()
        .map(|s| tokio::spawn(copy_into(s, ctx.job_log().clone(), None)));

    let result = tokio::select! {
        status = child.wait() => match status {
            Ok(s) if s.success() => JobResult::success(),
            Ok(s) => JobResult::fail(format!("script exit value({}) is failed", s.code().unwrap_or(-1))),
            Err(e) => JobResult::fail(format!("script wait failed: {e}")),
        },
        _ = ctx.cancelled() => {
            terminate_group(&mut child, pid).await;
            JobResult::fail("script exit value(-1) is failed")
        }
    };
    let mut last_line = None;
    for (copier, is_stdout) in [(stdout, true), (stderr, false)] {
        let Some(copier) = copier else { continue };
        let abort = copier.abort_handle();
        match tokio::time::timeout(OUTPUT_DRAIN, copier).await {
            Ok(Ok(last)) if is_stdout => last_line = last,
            Ok(_) => {}
            Err(_) => abort.abort(),
        }
    }
    if !result.is_success() {
        return result;
    }
    match last_line.map(LastLine::finish) {
        Some(ScriptOutput::Object(output)) => JobResult::success_with(output),
        Some(ScriptOutput::TooLong(bytes)) => JobResult::fail(format!(
            "the script's last line of output looks like a JSON object of {bytes} bytes: an output may have at most {OUTPUT_MAX_BYTES}"
        )),
        _ => result,
    }
}

/// SIGTERM to the whole group, then SIGKILL after a short grace; reaps the leader.
async fn terminate_group(child: &mut Child, pid: Option<i32>) {
    let Some(pgid) = pid else {
        let _ = child.kill().await;
        return;
    };
    signal_group(pgid, libc::SIGTERM);
    let _ = tokio::time::timeout(TERM_GRACE, child.wait()).await;
    // members that ignored SIGTERM (or outlived the leader) go now
    signal_group(pgid, libc::SIGKILL);
    let _ = child.wait().await;
}

/// Copies a stream into the run log; with `last`, also follows its last line (the output).
async fn copy_into(
    mut from: impl AsyncRead + Unpin,
    log: RunLog,
    mut last: Option<LastLine>,
) -> Option<LastLine> {
    let mut buf = vec![0u8; 8192];
    let mut lines = LineBuffer::new(log);
    loop {
        match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                lines.feed(&buf[..n]);
                if let Some(last) = last.as_mut() {
                    last.feed(&buf[..n]);
                }
            }
        }
    }
    lines.finish();
    last
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(updatetime: i64) -> ScriptSpec {
        ScriptSpec {
            job_id: 10,
            glue_type: GlueType::GlueShell,
            updatetime,
            source: format!("echo {updatetime}"),
        }
    }

    #[test]
    fn file_name_and_old_versions_removed() {
        let dir = tempfile::tempdir().unwrap();
        let first = prepare(&spec(1), dir.path()).unwrap();
        assert_eq!(first, dir.path().join("gluesource/10_1.sh"));
        std::fs::write(dir.path().join("gluesource/100_1.sh"), "other job").unwrap();
        let second = prepare(&spec(2), dir.path()).unwrap();
        assert!(!first.exists());
        assert_eq!(std::fs::read_to_string(&second).unwrap(), "echo 2");
        assert!(dir.path().join("gluesource/100_1.sh").exists());
    }
}
