//! Records of running GLUE scripts under `{log-path}/gluerunning/`, so that the scripts an
//! executor leaves behind when it dies (SIGKILL, OOM kill, power cut of its container) are
//! stopped by the next executor on the same log path, and their runs reported failed.
//!
//! A script runs in its own process group, which outlives a killed executor; without the
//! record nothing would stop it, and the admin's retry of the lost run would run it twice.
//! A record names the script's group and the executor process that started it, each with its
//! start time, so that neither a live executor's scripts nor a process that got a reused pid
//! are ever signalled. Processes are read from `/proc`: elsewhere nothing is recorded.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::context::JobContext;
use super::process_group::{signal_group, TERM_GRACE};
use super::run_log::RunLogs;
use crate::protocol::{HandleCallbackParam, FAIL_CODE};

/// The folder of the records.
const RECORD_DIR: &str = "gluerunning";

/// A process, told apart from a later one given the same pid by its start time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ProcessStamp {
    /// The process id (for a script: its process group's id as well).
    pub(crate) pid: i32,
    /// Clock ticks from boot to the process's start (`/proc/{pid}/stat`, field 22).
    pub(crate) start: u64,
}

impl ProcessStamp {
    /// The process `pid`, if it runs (a zombie does not) and `/proc` tells its start.
    pub(crate) fn of(pid: i32) -> Option<Self> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        // the command name before ')' may hold spaces and parentheses: fields count after it
        let (_, fields) = stat.rsplit_once(')')?;
        let mut fields = fields.split_whitespace();
        if matches!(fields.next(), Some("Z" | "X") | None) {
            return None;
        }
        let start = fields.nth(18)?.parse().ok()?;
        Some(ProcessStamp { pid, start })
    }

    /// This process.
    pub(crate) fn current() -> Option<Self> {
        Self::of(i32::try_from(std::process::id()).ok()?)
    }

    /// True while this very process runs.
    fn exists(&self) -> bool {
        Self::of(self.pid) == Some(*self)
    }
}

/// One running script: its run, its process group and the executor that started it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct ScriptRecord {
    pub(crate) log_id: i64,
    pub(crate) log_date_time: i64,
    pub(crate) job_id: i32,
    /// The script's interpreter, leader of the script's process group.
    pub(crate) group: ProcessStamp,
    pub(crate) executor: ProcessStamp,
}

/// A script's record on disk, removed when this drops (the script has ended).
#[derive(Debug)]
pub(crate) struct Recorded(Option<PathBuf>);

impl Drop for Recorded {
    fn drop(&mut self) {
        if let Some(path) = self.0.take() {
            if let Err(e) = std::fs::remove_file(&path) {
                log::warn!("cannot remove script record {}: {e}", path.display());
            }
        }
    }
}

fn record_dir(log_base: &Path) -> PathBuf {
    log_base.join(RECORD_DIR)
}

/// Records the script of `ctx`'s run, whose process group is `pgid`. A record that cannot be
/// written only costs the clean-up after a crash, so the run goes on without it.
pub(crate) fn record(log_base: &Path, ctx: &JobContext, pgid: i32) -> Recorded {
    let (Some(group), Some(executor)) = (ProcessStamp::of(pgid), ProcessStamp::current()) else {
        return Recorded(None);
    };
    let record = ScriptRecord {
        log_id: ctx.log_id(),
        log_date_time: ctx.log_date_time(),
        job_id: ctx.job_id(),
        group,
        executor,
    };
    match write(log_base, &record) {
        Ok(path) => Recorded(Some(path)),
        Err(e) => {
            log::warn!(
                "job {} log {}: cannot record its script (process group {pgid}); a crash of this \
                 executor would leave it running: {e}",
                record.job_id,
                record.log_id
            );
            Recorded(None)
        }
    }
}

fn write(log_base: &Path, record: &ScriptRecord) -> std::io::Result<PathBuf> {
    let dir = record_dir(log_base);
    std::fs::create_dir_all(&dir)?;
    let name = format!("{}-{}.json", record.log_id, record.group.pid);
    let (tmp, path) = (dir.join(format!(".{name}.tmp")), dir.join(name));
    std::fs::write(&tmp, serde_json::to_vec(record)?)?;
    std::fs::rename(&tmp, &path)?;
    Ok(path)
}

/// Stops the scripts that executors no longer running left behind under `log_base`, notes it
/// in each run's log, and returns the failed results to report. Records of live executors (a
/// second executor on the same folder) are left alone. Blocks for up to [`TERM_GRACE`].
pub(crate) fn stop_left_behind(log_base: &Path, logs: &Arc<RunLogs>) -> Vec<HandleCallbackParam> {
    let left = left_behind(log_base);
    // SIGTERM to every group at once, one grace for all of them, then SIGKILL
    let signalled: Vec<bool> = left.iter().map(|(r, _)| signal_left(r.group)).collect();
    let deadline = Instant::now() + TERM_GRACE;
    let groups = || {
        left.iter()
            .zip(&signalled)
            .filter(|(_, &s)| s)
            .map(|((r, _), _)| r.group.pid)
    };
    while groups().any(has_members) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    groups().for_each(|pgid| signal_group(pgid, libc::SIGKILL));
    let report = |(record, path): (ScriptRecord, PathBuf), killed: bool| {
        let msg = stopped_message(&record, killed);
        log::warn!(
            "job {} log {}: {msg}; the run is reported failed",
            record.job_id,
            record.log_id
        );
        logs.run(record.log_date_time, record.log_id).line(&msg);
        // should this executor die before the result is sent, the admin's lost-result monitor
        // fails the run as it does any run whose executor is gone
        if let Err(e) = std::fs::remove_file(&path) {
            log::warn!("cannot remove script record {}: {e}", path.display());
        }
        HandleCallbackParam::new(record.log_id, record.log_date_time, FAIL_CODE, Some(msg))
    };
    left.into_iter()
        .zip(signalled)
        .map(|(left, killed)| report(left, killed))
        .collect()
}

/// The failure a left-behind script's run is reported with: `killed` its group, or found it gone.
fn stopped_message(record: &ScriptRecord, killed: bool) -> String {
    let (executor, group) = (record.executor.pid, record.group.pid);
    let stopped =
        format!("the executor running this script (pid {executor}) stopped without ending it");
    match killed {
        true => format!("{stopped}; the next executor on its log path killed the script's process group {group}"),
        false => format!("{stopped}; the script had ended since, and its exit status is lost"),
    }
}

/// The records under `log_base` whose executor no longer runs, each with its file; unreadable
/// records are removed.
fn left_behind(log_base: &Path) -> Vec<(ScriptRecord, PathBuf)> {
    let Ok(entries) = std::fs::read_dir(record_dir(log_base)) else {
        return Vec::new(); // no folder: no script ever recorded
    };
    let mut left = Vec::new();
    for path in entries.flatten().map(|entry| entry.path()) {
        let name = path.file_name().unwrap_or_default().to_string_lossy();
        if name.starts_with('.') {
            continue; // being written, or the remains of a crash while writing
        }
        let text = std::fs::read(&path).map_err(|e| e.to_string());
        let parsed = text.and_then(|t| serde_json::from_slice(&t).map_err(|e| e.to_string()));
        match parsed {
            Ok(record @ ScriptRecord { executor, .. }) if !executor.exists() => {
                left.push((record, path))
            }
            Ok(_) => {} // a live executor's
            Err(e) => {
                log::warn!(
                    "script record {} is unreadable ({e}); removed",
                    path.display()
                );
                let _ = std::fs::remove_file(&path);
            }
        }
    }
    left
}

/// True while the process group `pgid` has a member.
fn has_members(pgid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only asks whether the group has members.
    unsafe { libc::kill(-pgid, 0) == 0 }
}

/// SIGTERM to a recorded script's process group; false when nothing of the group is left.
fn signal_left(group: ProcessStamp) -> bool {
    if ProcessStamp::of(group.pid).is_some_and(|now| now != group) {
        return false; // the leader is gone and its pid belongs to another process
    }
    // Either the leader itself or, with it gone, members still in its group: Linux hands out no
    // pid still in use as a process group's id, so the group's id still means this group.
    if group.pid <= 1 || !has_members(group.pid) {
        return false;
    }
    signal_group(group.pid, libc::SIGTERM);
    true
}

#[cfg(test)]
mod tests {
    use std::os::unix::process::CommandExt;
    use std::process::{Child, Command};

    use super::*;

    /// `sh -c script` in its own process group, as a GLUE script runs.
    fn group(script: &str) -> Child {
        Command::new("sh")
            .args(["-c", script])
            .process_group(0)
            .spawn()
            .expect("sh starts")
    }

    fn stamp(child: &Child) -> ProcessStamp {
        ProcessStamp::of(child.id() as i32).expect("the child's stamp")
    }

    /// A stamp of this process's pid with another start: an executor that is gone.
    fn gone() -> ProcessStamp {
        let me = ProcessStamp::current().expect("this process's stamp");
        ProcessStamp {
            start: me.start + 1,
            ..me
        }
    }

    fn put(dir: &Path, log_id: i64, group: ProcessStamp, executor: ProcessStamp) -> PathBuf {
        let record = ScriptRecord {
            log_id,
            log_date_time: 1_700_000_000_000,
            job_id: 7,
            group,
            executor,
        };
        write(dir, &record).expect("record written")
    }

    /// Waits up to 5 s for the child to end; its exit status, if it ended.
    fn ended(child: &mut Child) -> Option<std::process::ExitStatus> {
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Some(status) = child.try_wait().expect("try_wait") {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    #[test]
    fn a_stamp_tells_this_process_from_a_later_one_with_its_pid() {
        let me = ProcessStamp::current().expect("/proc is readable");
        assert_eq!(me.pid, std::process::id() as i32);
        assert!(me.exists());
        assert!(!gone().exists());
    }

    #[test]
    fn a_dead_executors_script_group_is_killed_and_its_run_failed() {
        let dir = tempfile::tempdir().unwrap();
        // the script ignores SIGTERM, as some do: the SIGKILL after the grace ends it
        let mut script = group("trap '' TERM; sleep 30");
        let path = put(dir.path(), 41, stamp(&script), gone());

        let results = stop_left_behind(dir.path(), &RunLogs::new(dir.path()));
        let status = ended(&mut script).expect("the script was stopped");
        assert!(!status.success(), "{status:?}");
        assert_eq!(results.len(), 1, "{results:?}");
        assert_eq!(results[0].log_id, 41);
        assert_eq!(results[0].handle_code, FAIL_CODE);
        let msg = results[0].handle_msg.as_deref().unwrap_or_default();
        assert!(msg.contains("killed the script's process group"), "{msg}");
        assert!(!path.exists(), "the record stays after its result");
        let log = RunLogs::new(dir.path())
            .read(1_700_000_000_000, 41, 1)
            .log_content;
        assert!(log.contains("killed the script's process group"), "{log}");
    }

    #[test]
    fn a_live_executors_scripts_are_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let mut script = group("sleep 30");
        let me = ProcessStamp::current().unwrap();
        let path = put(dir.path(), 42, stamp(&script), me);

        assert!(stop_left_behind(dir.path(), &RunLogs::new(dir.path())).is_empty());
        assert!(
            script.try_wait().unwrap().is_none(),
            "a live executor's script was stopped"
        );
        assert!(path.exists());
        script.kill().unwrap();
        script.wait().unwrap();
    }

    #[test]
    fn a_pid_now_used_by_another_process_is_not_signalled() {
        let dir = tempfile::tempdir().unwrap();
        let mut other = group("sleep 30");
        let reused = ProcessStamp {
            start: stamp(&other).start.saturating_sub(1),
            ..stamp(&other)
        };
        put(dir.path(), 43, reused, gone());

        let results = stop_left_behind(dir.path(), &RunLogs::new(dir.path()));
        assert!(
            other.try_wait().unwrap().is_none(),
            "another process was signalled"
        );
        assert_eq!(results.len(), 1, "the run is still reported: {results:?}");
        let msg = results[0].handle_msg.as_deref().unwrap_or_default();
        assert!(msg.contains("its exit status is lost"), "{msg}");
        other.kill().unwrap();
        other.wait().unwrap();
    }

    #[test]
    fn members_outliving_their_leader_are_killed() {
        let dir = tempfile::tempdir().unwrap();
        let (pid_file, go) = (dir.path().join("member.pid"), dir.path().join("go"));
        // the leader stays until its stamp is taken (a zombie has none), then leaves its member
        let mut leader = group(&format!(
            "sleep 30 & echo $! > '{}'; while [ ! -e '{}' ]; do sleep 0.01; done",
            pid_file.display(),
            go.display()
        ));
        let group_stamp = stamp(&leader);
        std::fs::write(&go, "").unwrap();
        leader.wait().unwrap(); // the leader is gone; its background member is not
        let member: i32 = std::fs::read_to_string(&pid_file)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        let member_stamp = ProcessStamp::of(member).expect("the member runs");
        put(dir.path(), 44, group_stamp, gone());

        let results = stop_left_behind(dir.path(), &RunLogs::new(dir.path()));
        assert_eq!(results.len(), 1, "{results:?}");
        let deadline = Instant::now() + Duration::from_secs(5);
        while member_stamp.exists() && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!member_stamp.exists(), "the member still runs");
    }

    #[test]
    fn an_unreadable_record_is_removed_and_a_half_written_one_kept() {
        let dir = tempfile::tempdir().unwrap();
        let records = record_dir(dir.path());
        std::fs::create_dir_all(&records).unwrap();
        std::fs::write(records.join("1-2.json"), "{not json").unwrap();
        std::fs::write(records.join(".3-4.json.tmp"), "{").unwrap();
        assert!(stop_left_behind(dir.path(), &RunLogs::new(dir.path())).is_empty());
        assert!(!records.join("1-2.json").exists());
        assert!(records.join(".3-4.json.tmp").exists());
    }
}
