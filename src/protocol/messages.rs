//! Codes, headers and the fixed messages both sides write, kept verbatim from the Java peers
//! (admins and executors compare some of them as text).

/// Handle/answer code for success; the admin treats only this value as success.
pub const SUCCESS_CODE: i32 = 200;
/// Handle/answer code for any failure or rejection.
pub const FAIL_CODE: i32 = 500;
/// Handle code for an executor-enforced timeout; counts as a failure for retry and alarm.
pub const TIMEOUT_CODE: i32 = 502;

/// Header carrying the shared token; every version checks it.
pub const ACCESS_TOKEN_HEADER: &str = "XXL-JOB-ACCESS-TOKEN";
/// Header carrying the executor app name; 3.5 requires it and older versions ignore it.
pub const APP_NAME_HEADER: &str = "XXL-JOB-APPNAME";
/// The only `registryGroup` value executors ever register under.
pub const REGISTRY_GROUP_EXECUTOR: &str = "EXECUTOR";

/// Message of every successful answer from 3.x peers.
pub const MSG_SUCCESS: &str = "Success";
/// Answer for a missing or wrong token; admins compare it verbatim in their logs.
pub const MSG_ACCESS_TOKEN_WRONG: &str = "The access token is wrong.";
/// Answer for anything but POST; still sent with HTTP 200 as Java does.
pub const MSG_METHOD_NOT_SUPPORTED: &str = "invalid request, HttpMethod not support.";
/// Answer for an empty request path, kept identical to the Java executor.
pub const MSG_URI_EMPTY: &str = "invalid request, uri-mapping empty.";
/// `/idleBeat` answer for a busy job; BUSYOVER routing looks only at the code.
pub const MSG_JOB_BUSY: &str = "job thread is running or has trigger queue.";
/// `/kill` payload when no worker exists for the job.
pub const MSG_JOB_ALREADY_KILLED: &str = "job thread already killed.";
/// Rejection for DISCARD_LATER on a busy job; the colon is full-width (U+FF1A) as in Java.
pub const MSG_DISCARD_LATER: &str = "block strategy effect：Discard Later";
/// Stop reason of a worker replaced by COVER_EARLY; the colon is full-width (U+FF1A) as in Java.
pub const MSG_COVER_EARLY: &str = "block strategy effect：Cover Early";
/// Handle message for a timed-out run; the trailing space is part of the Java string.
pub const MSG_JOB_TIMEOUT: &str = "job execute timeout ";
/// Stop reason when the admin calls `/kill`.
pub const MSG_KILLED_BY_ADMIN: &str = "scheduling center kill job.";
/// Stop reason when a BEAN job's handler changed, so users see why the old worker vanished.
pub const MSG_CHANGE_HANDLER: &str =
    "change jobhandler or glue type, and terminate the old job thread.";
/// Stop reason when a glue job's source version changed.
pub const MSG_CHANGE_GLUE_SOURCE: &str =
    "change job source or glue type, and terminate the old job thread.";
/// Stop reason when an idle worker is reaped.
pub const MSG_IDLE_TIMEOUT: &str = "excutor idle times over limit.";
/// Stop reason for every worker when the executor shuts down.
pub const MSG_SHUTDOWN_KILL: &str = "web container destroy and kill the job.";
/// Handle message when a handler left a non-positive handle code.
pub const MSG_RESULT_LOST: &str = "job handle result lost.";
/// Appended to the stop reason in the callback of the run that was in progress.
pub const MSG_SUFFIX_RUNNING_KILLED: &str = " [job running, killed]";
/// Appended to the stop reason in the callbacks of triggers still queued when a worker stops.
pub const MSG_SUFFIX_QUEUED_KILLED: &str = " [job not executed, in the job queue, killed.]";
/// `/log` content for a log file that does not exist (with `isEnd` true).
pub const MSG_LOG_FILE_NOT_EXISTS: &str = "readLog fail, logFile not exists";
/// `/log` content of a jobwheel executor for a run it accepted that has no log line yet (with
/// `isEnd` false): a resending admin takes it as "this executor has the run".
pub const MSG_RUN_ACCEPTED_NO_LOG: &str = "run accepted, no log line yet";

/// `/run` rejection when no handler has that name; the admin shows it in the trigger log.
pub fn handler_not_found(name: &str) -> String {
    format!("job handler [{name}] not found.")
}

/// `/run` rejection for a logId already queued, so an admin retry cannot run a trigger twice.
pub fn repeat_trigger(log_id: i64) -> String {
    format!("repeat trigger job, logId:{log_id}")
}

/// `/run` rejection of a SERIAL trigger when its job's bounded queue (`maxQueued`) is full.
pub fn queue_full(waiting: usize) -> String {
    format!("queue full: {waiting} waiting")
}

/// Answer for an unknown path, echoing the path as the Java executor does.
pub fn uri_not_found(uri: &str) -> String {
    format!("invalid request, uri-mapping({uri}) not found.")
}

/// Answer for a body that could not be handled, with the Java prefix admins already know.
pub fn request_error(detail: &str) -> String {
    format!("request error:{detail}")
}

/// `/run` rejection for a glue type this executor does not know, carrying the raw value for diagnosis.
pub fn glue_type_not_valid(raw: &str) -> String {
    format!("glueType[{raw}] is not valid.")
}

/// How long a peer may take to send a request body once its head arrived (executor and admin
/// alike): answers are small and bodies at most a few megabytes.
pub const BODY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30);

#[cfg(test)]
mod tests {
    use super::*;

    use crate::protocol::*;

    #[test]
    fn discard_later_uses_full_width_colon() {
        assert!(MSG_DISCARD_LATER.contains('\u{FF1A}'));
        assert!(MSG_COVER_EARLY.contains('\u{FF1A}'));
        assert_eq!(
            MSG_DISCARD_LATER,
            format!(
                "block strategy effect\u{FF1A}{}",
                BlockStrategy::DiscardLater.title()
            )
        );
        assert_eq!(
            MSG_COVER_EARLY,
            format!(
                "block strategy effect\u{FF1A}{}",
                BlockStrategy::CoverEarly.title()
            )
        );
    }

    #[test]
    fn message_helpers() {
        assert_eq!(handler_not_found("x"), "job handler [x] not found.");
        assert_eq!(repeat_trigger(101), "repeat trigger job, logId:101");
        assert_eq!(
            uri_not_found("/foo"),
            "invalid request, uri-mapping(/foo) not found."
        );
        assert_eq!(request_error("boom"), "request error:boom");
        assert_eq!(ACCESS_TOKEN_HEADER, "XXL-JOB-ACCESS-TOKEN");
        assert_eq!(APP_NAME_HEADER, "XXL-JOB-APPNAME");
        assert_eq!(MSG_JOB_TIMEOUT, "job execute timeout ");
        assert_eq!(
            MSG_SUFFIX_QUEUED_KILLED,
            " [job not executed, in the job queue, killed.]"
        );
    }
}
